// MetricsSource keeps the FleetMetrics state in the store (meta/windows):
// over a real RocksDB in a temp dir and a FakeClock, a random fleet is
// ingested in batches and collected between them (so the windows hold a
// history a fresh start cannot rebuild), ended jobs are evicted, and a new
// "process" (store, live state, ingestor, metrics source) on the same
// directory, without any shutdown, collects the same window ratios and
// counters. tests/windows_restart_test does the same with the real binary
// and kill -9.
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/testing/random_fleet.h"
#include "gtest/gtest.h"
#include "server/metrics_source.h"
#include "storage/rocksdb_event_store.h"

namespace goodput::server {
namespace {

constexpr int64_t kLateness = 5 * core::kNanosPerSecond;
constexpr int64_t kNow = 1795400000LL * core::kNanosPerSecond;

// series -> value (to the last bit) of the families whose name ends in
// `suffix`.
std::map<std::string, std::string> Series(
    const std::vector<core::MetricFamilyData>& families,
    const std::string& suffix) {
  std::map<std::string, std::string> out;
  for (const core::MetricFamilyData& f : families) {
    if (f.name.size() < suffix.size() ||
        f.name.compare(f.name.size() - suffix.size(), suffix.size(), suffix)) {
      continue;
    }
    for (const core::MetricSample& s : f.samples) {
      std::string key = f.name;
      for (const auto& [k, v] : s.labels) absl::StrAppend(&key, ",", k, "=", v);
      out[key] = absl::StrFormat("%a", s.value);
    }
  }
  return out;
}

double Value(const std::vector<core::MetricFamilyData>& families,
             const std::string& name, const core::MetricLabels& labels) {
  for (const core::MetricFamilyData& f : families) {
    if (f.name != name) continue;
    for (const core::MetricSample& s : f.samples) {
      if (s.labels == labels) return s.value;
    }
  }
  return -1;
}

// The job_id labels of goodput_job_info.
std::set<std::string> JobInfoIds(
    const std::vector<core::MetricFamilyData>& families) {
  std::set<std::string> out;
  for (const core::MetricFamilyData& f : families) {
    if (f.name != "goodput_job_info") continue;
    for (const core::MetricSample& s : f.samples) {
      for (const auto& [k, v] : s.labels) {
        if (k == "job_id") out.insert(v);
      }
    }
  }
  return out;
}

// The sum of goodput_jobs over its states.
double JobsGauge(const std::vector<core::MetricFamilyData>& families) {
  double sum = 0;
  for (const core::MetricFamilyData& f : families) {
    if (f.name != "goodput_jobs") continue;
    for (const core::MetricSample& s : f.samples) sum += s.value;
  }
  return sum;
}

class MetricsStateTest : public ::testing::Test {
 protected:
  MetricsStateTest() {
    char tmpl[] = "/tmp/goodput-windows-XXXXXX";
    EXPECT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  ~MetricsStateTest() override {
    Stop();
    std::filesystem::remove_all(dir_);
  }
  void Stop() {
    metrics_.reset();
    ingestor_.reset();
    live_.reset();
    store_.reset();
  }
  // A new server process over the same RocksDB directory (nothing saved
  // on the way out, as after kill -9).
  void Start(core::MetricsOptions options = {}) {
    Stop();
    auto store = storage::RocksDbEventStore::Open(dir_, {});
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = *std::move(store);
    live_ = std::make_unique<LiveState>(&config_, kLateness, store_.get());
    ingestor_ = std::make_unique<Ingestor>(store_.get(), live_.get(), &clock_,
                                           codec::ValidationLimits());
    ingestor_->set_ended_job_grace(options.ended_job_grace_ns);
    ASSERT_TRUE(ingestor_->Recover().ok());
    metrics_ = std::make_unique<MetricsSource>(&config_, options,
                                               ingestor_.get(), &clock_,
                                               nullptr, nullptr, store_.get());
  }
  // Sends `events` in batches of 40, collecting after every third batch.
  void SendCollecting(const std::vector<v1::Event>& events) {
    for (size_t i = 0, batches = 0; i < events.size(); i += 40, ++batches) {
      v1::Batch batch;
      batch.set_agent_id("agent-1");
      batch.set_sequence(++seq_);
      for (size_t j = i; j < std::min(events.size(), i + 40); ++j) {
        *batch.add_events() = events[j];
      }
      ASSERT_TRUE(ingestor_->Ingest(batch).ok());
      if (batches % 3 == 0) (void)metrics_->Collect();
    }
  }

  std::string dir_;
  core::Config config_;
  FakeClock clock_{kNow};
  std::unique_ptr<storage::RocksDbEventStore> store_;
  std::unique_ptr<LiveState> live_;
  std::unique_ptr<Ingestor> ingestor_;
  std::unique_ptr<MetricsSource> metrics_;
  uint64_t seq_ = 0;
};

TEST_F(MetricsStateTest, ARestartCollectsTheSameWindowsAndCounters) {
  Start();
  SendCollecting(core::testing::RandomFleet(51, 20, 60));
  ASSERT_TRUE(ingestor_->EvictEndedJobs().ok());
  const auto before = metrics_->Collect();
  EXPECT_GT(Value(before, "goodput_jobs_in_memory", {{"held", "evicted"}}), 0);
  const auto ratios = Series(before, "_ratio");
  const auto counters = Series(before, "chip_seconds_total");
  EXPECT_GT(ratios.size(), 100u);
  Start();
  const auto after = metrics_->Collect();
  EXPECT_EQ(Value(after, "goodput_jobs_in_memory", {{"held", "evicted"}}),
            Value(before, "goodput_jobs_in_memory", {{"held", "evicted"}}));
  EXPECT_EQ(Series(after, "_ratio"), ratios);
  EXPECT_EQ(Series(after, "chip_seconds_total"), counters);
  EXPECT_EQ(
      Value(after, "goodput_windows_state_failures_total", {{"op", "load"}}),
      0);
}

// A state saved under other --windows is not loaded: the windows start
// empty (the totals recovered land in one bucket), and that is counted.
TEST_F(MetricsStateTest, OtherWindowsStartEmpty) {
  Start();
  SendCollecting(core::testing::RandomFleet(52, 10, 60));
  (void)metrics_->Collect();
  core::MetricsOptions other;
  other.windows = {{"10m", 600 * core::kNanosPerSecond}};
  Start(other);
  const auto after = metrics_->Collect();
  EXPECT_EQ(
      Value(after, "goodput_windows_state_failures_total", {{"op", "load"}}),
      1);
  // That collection wrote the state under the new windows.
  Start(other);
  EXPECT_EQ(Value(metrics_->Collect(), "goodput_windows_state_failures_total",
                  {{"op", "load"}}),
            0);
}

// Cluster mode's job filter (the partitions held now): the jobs it refuses
// drop out of the per-job series and of goodput_jobs at the next Collect,
// the counters keep what they counted (never decreasing), and the jobs come
// back once admitted again.
TEST_F(MetricsStateTest, AJobFilterDropsRefusedJobsAndTakesThemBack) {
  core::MetricsOptions options;
  options.ended_job_grace_ns = 1000LL * 86400 * core::kNanosPerSecond;
  Start(options);  // ended jobs keep their series
  std::set<std::string> refused;
  metrics_->set_job_filter([&refused] {
    return [refused](const std::string& id) { return !refused.count(id); };
  });
  SendCollecting(core::testing::RandomFleet(53, 12, 60));
  const auto all = metrics_->Collect();
  const std::set<std::string> every = JobInfoIds(all);
  ASSERT_GE(every.size(), 4u);
  std::set<std::string> kept;
  bool odd = false;
  for (const std::string& id : every) {
    ((odd = !odd) ? refused : kept).insert(id);
  }
  const auto some = metrics_->Collect();
  EXPECT_EQ(JobInfoIds(some), kept);
  EXPECT_EQ(JobsGauge(some), JobsGauge(all) - refused.size());
  const auto before = Series(all, "chip_seconds_total");
  const auto after = Series(some, "chip_seconds_total");
  for (const auto& [series, value] : before) {
    if (series.find(",job_id=") != std::string::npos) continue;  // dropped
    ASSERT_EQ(after.count(series), 1u) << series;
    EXPECT_GE(std::strtod(after.at(series).c_str(), nullptr),
              std::strtod(value.c_str(), nullptr))
        << series;
  }
  refused.clear();
  const auto back = metrics_->Collect();
  EXPECT_EQ(JobInfoIds(back), every);
  EXPECT_EQ(JobsGauge(back), JobsGauge(all));
}

}  // namespace
}  // namespace goodput::server
