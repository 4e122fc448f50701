// The ingest path under concurrency (run under TSan by the tsan stage):
// agents ingest from their own threads while readers ask for reports and
// stats; every event is counted once and the live report equals the
// replay. In-memory store; no gRPC.
#include <map>
#include <thread>
#include <vector>

#include "core/testing/random_fleet.h"
#include "core/testing/timeline.h"
#include "gtest/gtest.h"
#include "server/ingest_limits.h"
#include "server/ingestor.h"
#include "storage/memory_event_store.h"

namespace goodput::server {
namespace {

constexpr int64_t kAsOf = (1795341600LL + 5 * 3600) * core::kNanosPerSecond;
constexpr int kAgents = 4;

TEST(IngestConcurrencyTest, ConcurrentAgentsAndReadersCountEveryEventOnce) {
  core::Config config;
  storage::MemoryEventStore store;
  LiveState live(&config, 5 * core::kNanosPerSecond, &store);
  FakeClock clock(kAsOf);
  Ingestor ingestor(&store, &live, &clock, codec::ValidationLimits());
  IngestLimits limits({.max_jobs = 1000}, &clock);
  ingestor.set_limits(&limits);
  ASSERT_TRUE(ingestor.Recover().ok());
  // Each job (and each host's heartbeats) belongs to one agent, in order.
  const std::vector<v1::Event> events = core::testing::RandomFleet(7, 16, 40);
  std::vector<std::vector<v1::Event>> per_agent(kAgents);
  for (const v1::Event& e : events) {
    const std::string& key = e.has_heartbeat() ? e.host() : e.job_id();
    per_agent[std::hash<std::string>()(key) % kAgents].push_back(e);
  }
  std::vector<std::thread> threads;
  for (int a = 0; a < kAgents; ++a) {
    threads.emplace_back([&, a] {
      v1::Batch batch;
      batch.set_agent_id("agent-" + std::to_string(a));
      for (size_t i = 0; i < per_agent[a].size(); i += 7) {
        batch.set_sequence(batch.sequence() + 1);
        batch.clear_events();
        for (size_t j = i; j < std::min(per_agent[a].size(), i + 7); ++j) {
          *batch.add_events() = per_agent[a][j];
        }
        ASSERT_TRUE(ingestor.Ingest(batch).ok());
      }
    });
  }
  std::atomic<bool> done{false};
  std::thread reader([&] {
    while (!done.load()) {
      ASSERT_TRUE(ingestor.Report(kAsOf, std::nullopt).ok());
      (void)ingestor.stats();
      (void)limits.stats();
    }
  });
  for (std::thread& t : threads) t.join();
  done = true;
  reader.join();
  const IngestStats stats = ingestor.stats();
  EXPECT_EQ(stats.accepted_events + stats.rejected_events,
            static_cast<int64_t>(events.size()));
  auto live_report = ingestor.Report(kAsOf, std::nullopt);
  ASSERT_TRUE(live_report.ok());
  const core::FleetReport replay = core::testing::Replay(events, config, kAsOf);
  ASSERT_EQ(live_report->jobs.size(), replay.jobs.size());
  for (size_t i = 0; i < replay.jobs.size(); ++i) {
    EXPECT_EQ(live_report->jobs[i].nanos, replay.jobs[i].nanos)
        << replay.jobs[i].job_id;
  }
}

}  // namespace
}  // namespace goodput::server
