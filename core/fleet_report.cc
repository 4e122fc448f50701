#include "core/fleet_report.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "core/badput_cost.h"
#include "core/checkpoint_advice.h"

namespace goodput::core {
namespace {

// Rule 14: an elastic job's own allocation-weighted chip-seconds.
void AddElasticJob(const JobReport& job, Totals* t) {
  double total = 0;
  for (int c = 0; c < kNumCategories; ++c) {
    t->chip_seconds[c] += job.chip_seconds[c];
    total += job.chip_seconds[c];
  }
  t->total_chip_seconds += total;
  t->ideal_chip_seconds += job.ideal_seconds * static_cast<double>(job.chips);
  t->costed_productive_chip_seconds += job.costed_productive_chip_seconds;
  const ElasticMeasures m = *JobElastic(job);
  t->held_chip_seconds += m.held_chip_seconds;
  t->requested_chip_seconds += m.requested_chip_seconds;
}

// Adds one job's numbers, weighted by its chips, to `t`.
void AddJob(const JobReport& job, Totals* t) {
  ++t->jobs;
  if (job.chips <= 0) {
    ++t->jobs_without_chips;
    return;
  }
  AddJobCost(job, t);
  AddCheckpointSums(job, &t->checkpoint);
  if (job.min_chips) return AddElasticJob(job, t);
  const double w = static_cast<double>(job.chips) / kNanosPerSecond;
  for (int c = 0; c < kNumCategories; ++c) {
    t->chip_seconds[c] += static_cast<double>(job.nanos[c]) * w;
  }
  t->total_chip_seconds += static_cast<double>(job.total_ns) * w;
  t->ideal_chip_seconds += job.ideal_seconds * static_cast<double>(job.chips);
  t->costed_productive_chip_seconds +=
      static_cast<double>(job.costed_productive_ns) * w;
}

void AddToSegments(const Config& config, const JobReport& job,
                   FleetReport* report) {
  auto& seg = report->segments;
  AddJob(job, &seg["accelerator"][OrUnknown(job.accelerator)]);
  AddJob(job, &seg["workload"][v1::JobSubmitted::Workload_Name(job.workload)]);
  AddJob(job, &seg["framework"][OrUnknown(job.framework)]);
  AddJob(job, &seg["size"][SizeBucket(config, job.chips)]);
  for (const auto& [key, value] : job.labels) {
    AddJob(job, &seg[absl::StrCat("label:", key)][value]);
  }
}

void AddCapacity(const std::map<std::string, double>& capacity,
                 FleetReport* report) {
  if (capacity.empty()) return;
  double all = 0;
  auto& by_accelerator = report->segments["accelerator"];
  for (const auto& [name, chip_seconds] : capacity) {
    by_accelerator[OrUnknown(name)].capacity_chip_seconds = chip_seconds;
    all += chip_seconds;
  }
  for (auto& [name, totals] : by_accelerator) {
    if (!totals.capacity_chip_seconds) totals.capacity_chip_seconds = 0.0;
  }
  report->fleet.capacity_chip_seconds = all;
}

// kCapacityOnly and kJobsOnly: the fleet totals if `totals`, and an
// accelerator segment entry per accelerator of the jobs if there is any
// capacity (AddCapacity gives those without heartbeats capacity 0).
void AddFleetOnly(const std::map<std::string, double>& capacity, bool totals,
                  FleetReport* report) {
  std::map<std::string, Totals>* by_accelerator =
      capacity.empty() ? nullptr : &report->segments["accelerator"];
  for (const JobReport& job : report->jobs) {
    if (totals) AddJob(job, &report->fleet);
    if (by_accelerator != nullptr) {
      by_accelerator->try_emplace(OrUnknown(job.accelerator));
    }
  }
}

bool EndedBeforeWindow(const Config& config, const JobReport& job) {
  return job.state == JobStateKind::kEnded && job.total_ns == 0 &&
         config.since_ns != Config().since_ns;
}

}  // namespace

std::string SizeBucket(const Config& config, int64_t chips) {
  if (chips <= 0) return "unknown";
  for (int64_t bound : config.size_buckets) {
    if (chips <= bound) return absl::StrCat("<=", bound);
  }
  if (config.size_buckets.empty()) return "all";
  return absl::StrCat(">", config.size_buckets.back());
}

FleetReport BuildFleetReport(const Config& config, int64_t as_of_ns,
                             std::vector<JobReport> jobs,
                             const std::map<std::string, double>& capacity,
                             FleetSegments segments) {
  FleetReport report;
  report.as_of_ns = as_of_ns;
  if (config.since_ns != Config().since_ns) report.since_ns = config.since_ns;
  jobs.erase(std::remove_if(jobs.begin(), jobs.end(),
                            [&](const JobReport& j) {
                              return EndedBeforeWindow(config, j);
                            }),
             jobs.end());
  auto by_id = [](const JobReport& a, const JobReport& b) {
    return a.job_id < b.job_id;
  };
  // The live state hands them over in order: no moves of whole reports.
  if (!std::is_sorted(jobs.begin(), jobs.end(), by_id)) {
    std::sort(jobs.begin(), jobs.end(), by_id);
  }
  report.jobs = std::move(jobs);
  PriceJobs(config.catalog, &report.jobs);
  if (segments == FleetSegments::kAll) {
    for (const JobReport& job : report.jobs) {
      AddJob(job, &report.fleet);
      AddToSegments(config, job, &report);
    }
  } else {
    AddFleetOnly(capacity, segments == FleetSegments::kCapacityOnly, &report);
  }
  AddCapacity(capacity, &report);
  return report;
}

}  // namespace goodput::core
