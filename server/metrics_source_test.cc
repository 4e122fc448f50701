// MetricsSource over a MemoryEventStore and a FakeClock: the families it
// adds from the ingest path's counters (IngestStats).
#include "server/metrics_source.h"

#include <map>
#include <string>
#include <vector>

#include "core/testing/timeline.h"
#include "gtest/gtest.h"
#include "storage/memory_event_store.h"

namespace goodput::server {
namespace {

using ::goodput::core::testing::ParseEvents;
using ::goodput::core::testing::Timeline;

constexpr int64_t kLateness = 5 * core::kNanosPerSecond;
constexpr int64_t kNow = (1795341600LL + 5 * 3600) * core::kNanosPerSecond;

// op -> value of goodput_store_maintenance_failures_total.
std::map<std::string, double> MaintenanceFailures(
    const std::vector<core::MetricFamilyData>& families) {
  std::map<std::string, double> out;
  for (const core::MetricFamilyData& f : families) {
    if (f.name != "goodput_store_maintenance_failures_total") continue;
    EXPECT_EQ(f.kind, core::MetricKind::kCounter);
    for (const core::MetricSample& s : f.samples) {
      EXPECT_EQ(s.labels.size(), 1u);
      if (s.labels.size() != 1 || s.labels[0].first != "op") continue;
      out[s.labels[0].second] = s.value;
    }
  }
  return out;
}

// Issue 12: every op has a sample from the first scrape (0 until hit), and
// a failed eviction write (the job ended more than the lateness before the
// newest event) counts in op="evict" alone, once.
TEST(MetricsSourceTest, StoreMaintenanceFailuresHaveEveryOpAndCountTheirOwn) {
  core::Config config;
  storage::MemoryEventStore store;
  LiveState live(&config, kLateness, &store);
  FakeClock clock(kNow);
  Ingestor ingestor(&store, &live, &clock, codec::ValidationLimits());
  ingestor.set_ended_job_grace(0);
  ASSERT_TRUE(ingestor.Recover().ok());
  MetricsSource metrics(&config, {}, &ingestor, &clock);
  std::map<std::string, double> want = {{"evict", 0},
                                        {"snapshot", 0},
                                        {"retire", 0},
                                        {"retire_evicted", 0},
                                        {"retire_heartbeats", 0}};
  EXPECT_EQ(MaintenanceFailures(metrics.Collect()), want);

  v1::Batch batch;
  batch.set_agent_id("agent-1");
  batch.set_sequence(1);
  for (const v1::Event& e : ParseEvents(Timeline(R"(
10:00:00 {"started":{}}
10:00:20 {"job_ended":{"outcome":"SUCCEEDED"}}
10:01:00 {"job_id":"r","started":{}}
10:02:00 {"job_id":"r","step":{"step":1}}
)"))) {
    *batch.add_events() = e;
  }
  ASSERT_TRUE(ingestor.Ingest(batch).ok());
  store.FailNextWrite(absl::UnavailableError("disk on fire"));
  ASSERT_FALSE(ingestor.EvictEndedJobs().ok());
  want["evict"] = 1;
  EXPECT_EQ(MaintenanceFailures(metrics.Collect()), want);
  ASSERT_TRUE(ingestor.EvictEndedJobs().ok());
  EXPECT_EQ(MaintenanceFailures(metrics.Collect()), want);
}

}  // namespace
}  // namespace goodput::server
