#include "report/test_util.h"

#include <cstdlib>
#include <fstream>
#include <iterator>

#include "core/category.h"
#include "gtest/gtest.h"

namespace goodput::report::testing {

const char kSimpleTimeline[] =
    R"({"time":"2026-11-22T10:00:00Z","job_id":"a","job_submitted":{"chips":8,"accelerator":"tpu-v5e","workload":"TRAINING","framework":"jax"}}
{"time":"2026-11-22T10:10:00Z","job_id":"a","allocation":{"chips":8}}
{"time":"2026-11-22T10:10:00Z","job_id":"a","started":{}}
{"time":"2026-11-22T10:20:00Z","job_id":"a","step":{"step":1}}
{"time":"2026-11-22T10:30:00Z","job_id":"a","step":{"step":2}}
{"time":"2026-11-22T10:40:00Z","job_id":"a","step":{"step":3}}
{"time":"2026-11-22T10:50:00Z","job_id":"a","step":{"step":4}}
{"time":"2026-11-22T11:00:00Z","job_id":"a","step":{"step":5}}
{"time":"2026-11-22T11:00:00Z","job_id":"a","job_ended":{"outcome":"SUCCEEDED"}}
)";
namespace {

using core::Category;
using core::Index;

constexpr int64_t kSecond = 1'000'000'000;
// 2026-11-22T10:00:00Z
constexpr int64_t kTen = 1795341600 * kSecond;

int64_t SumNanos(const core::CategoryNanos& nanos) {
  int64_t sum = 0;
  for (int64_t n : nanos) sum += n;
  return sum;
}

core::JobReport TrainingJob() {
  core::JobReport job;
  job.job_id = "llm-7";
  job.chips = 256;
  job.accelerator = "tpu-v5p";
  job.workload = v1::JobSubmitted::TRAINING;
  job.framework = "jax";
  job.labels = {{"team", "search"}};
  job.state = core::JobStateKind::kRunning;
  int64_t seconds[] = {120, 540, 29,  31, 60,   30,  10,
                       40,  0,   300, 11, 5400, 660, 0};
  for (int i = 0; i < core::kNumCategories; ++i) {
    job.nanos[i] = seconds[i] * kSecond;
  }
  job.nanos[Index(Category::kIdle)] += kSecond / 4;  // 11.25 s
  job.total_ns = SumNanos(job.nanos);
  job.custom_nanos = {{"eval", 300 * kSecond}};
  job.at_risk_ns = 600 * kSecond;
  job.ideal_seconds = 2000.5;
  job.costed_productive_ns = 5400 * kSecond;
  job.last_step = 1500;
  job.last_checkpoint = 1000;
  job.lost_steps = 220;
  job.interruptions = 1;
  job.usd_per_chip_hour = 3.6;  // $ = chip-seconds / 1000
  job.watts_per_chip = 360;     // kWh = chip-seconds / 10000
  return job;
}

core::JobReport ServingJob() {
  core::JobReport job;
  job.job_id = "serve-1";
  job.chips = 8;
  job.accelerator = "tpu-v5e";
  job.workload = v1::JobSubmitted::SERVING;
  job.framework = "pytorch";
  job.labels = {{"team", "ads"}, {"tier", "prod"}};
  job.state = core::JobStateKind::kEnded;
  job.nanos[Index(Category::kInit)] = 90 * kSecond;
  job.nanos[Index(Category::kIdle)] = 600 * kSecond;
  job.nanos[Index(Category::kProductive)] = 3000 * kSecond;
  job.total_ns = SumNanos(job.nanos);
  job.last_step = 10;
  return job;
}

// Adds `job` to the fleet and its segments as core would.
void AddToReport(const core::JobReport& job, core::FleetReport* report) {
  AddJobToTotals(job, &report->fleet);
  auto& segments = report->segments;
  AddJobToTotals(job, &segments["accelerator"][job.accelerator]);
  AddJobToTotals(job, &segments["framework"][job.framework]);
  AddJobToTotals(
      job,
      &segments["workload"][v1::JobSubmitted::Workload_Name(job.workload)]);
  if (job.chips > 0) {
    AddJobToTotals(job, &segments["size"][job.chips <= 8 ? "<=8" : "<=512"]);
  }
  for (const auto& [key, value] : job.labels) {
    AddJobToTotals(job, &segments["label:" + key][value]);
  }
}

}  // namespace

std::string ReadFileOrDie(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in.good()) << "cannot read " << path;
  return std::string((std::istreambuf_iterator<char>(in)),
                     std::istreambuf_iterator<char>());
}

void WriteFileOrDie(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  out.close();
  EXPECT_TRUE(out.good()) << "cannot write " << path;
}

void ExpectMatchesGolden(const std::string& name, const std::string& actual) {
  std::string path = std::string(GOODPUT_REPORT_TESTDATA) + "/golden/" + name;
  if (std::getenv("GOODPUT_UPDATE_GOLDEN") != nullptr) {
    WriteFileOrDie(path, actual);
    return;
  }
  EXPECT_EQ(ReadFileOrDie(path), actual)
      << "golden " << path << " differs; rerun with GOODPUT_UPDATE_GOLDEN=1 "
      << "to update it, and review the diff";
}

void AddJobToTotals(const core::JobReport& job, core::Totals* totals) {
  ++totals->jobs;
  if (job.chips <= 0) {
    ++totals->jobs_without_chips;
    return;
  }
  double chips = static_cast<double>(job.chips);
  for (int i = 0; i < core::kNumCategories; ++i) {
    totals->chip_seconds[i] += chips * job.nanos[i] / 1e9;
  }
  totals->total_chip_seconds += chips * job.total_ns / 1e9;
  totals->ideal_chip_seconds += chips * job.ideal_seconds;
  totals->costed_productive_chip_seconds +=
      chips * job.costed_productive_ns / 1e9;
  AddJobCostToTotals(job, totals);
}

void AddJobCostToTotals(const core::JobReport& job, core::Totals* totals) {
  const double chips = static_cast<double>(job.chips);
  for (int i = 0; i < core::kNumCategories; ++i) {
    const double chip_seconds = chips * job.nanos[i] / 1e9;
    if (job.usd_per_chip_hour) {
      totals->cost_usd[i] += chip_seconds * *job.usd_per_chip_hour / 3600;
    } else {
      totals->unpriced_chip_seconds += chip_seconds;
    }
    const bool held =
        i != Index(Category::kQueued) && i != Index(Category::kRecovery);
    if (job.watts_per_chip && held) {
      totals->energy_kwh[i] += chip_seconds * *job.watts_per_chip / 3.6e6;
    } else if (!job.watts_per_chip) {
      totals->unpowered_chip_seconds += chip_seconds;
    }
  }
}

core::FleetReport TwoJobReport() {
  core::FleetReport report;
  report.as_of_ns = kTen + 2 * 3600 * kSecond + kSecond / 4;
  report.since_ns = kTen;
  report.jobs = {TrainingJob(), ServingJob()};
  for (const auto& job : report.jobs) AddToReport(job, &report);
  report.fleet.capacity_chip_seconds = 2.5e6;
  report.segments["accelerator"]["tpu-v5p"].capacity_chip_seconds = 2.4e6;
  return report;
}

core::FleetReport OneEmptyJobReport() {
  core::FleetReport report;
  report.as_of_ns = kTen;
  core::JobReport job;
  job.job_id = "pending";
  job.workload = v1::JobSubmitted::OTHER;
  report.jobs.push_back(job);
  AddJobToTotals(job, &report.fleet);
  return report;
}

}  // namespace goodput::report::testing
