// The ingest path against the in-memory store: exactly-once batches,
// dead letters, late events, restart recovery, and live == replay.
#include "server/ingestor.h"

#include <algorithm>
#include <random>

#include "core/testing/random_fleet.h"
#include "core/testing/timeline.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "storage/memory_event_store.h"

namespace goodput::server {
namespace {

using ::goodput::core::testing::ParseEvents;
using ::goodput::core::testing::RandomFleet;
using ::goodput::core::testing::Replay;
using ::goodput::core::testing::T;
using ::goodput::core::testing::Timeline;
using ::testing::HasSubstr;

constexpr int64_t kLateness = 5'000'000'000;
constexpr int64_t kAsOf = (1795341600LL + 5 * 3600) * core::kNanosPerSecond;

class IngestorTest : public ::testing::Test {
 protected:
  IngestorTest() { Restart(); }

  // A new server process over the same store.
  void Restart() {
    live_ = std::make_unique<LiveState>(&config_, kLateness, store_.get());
    ingestor_ = std::make_unique<Ingestor>(store_.get(), live_.get(), &clock_,
                                           codec::ValidationLimits());
    ASSERT_TRUE(ingestor_->Recover().ok());
  }

  v1::Ack Send(const std::vector<v1::Event>& events, uint64_t seq,
               const std::string& agent = "agent-1") {
    v1::Batch batch;
    batch.set_agent_id(agent);
    batch.set_sequence(seq);
    for (const v1::Event& e : events) *batch.add_events() = e;
    auto ack = ingestor_->Ingest(batch);
    EXPECT_TRUE(ack.ok()) << ack.status();
    return ack.ok() ? *ack : v1::Ack();
  }

  // Sends `events` in batches of `size`, in the given order.
  void SendAll(const std::vector<v1::Event>& events, size_t size) {
    for (size_t i = 0; i < events.size(); i += size) {
      size_t end = std::min(events.size(), i + size);
      Send({events.begin() + i, events.begin() + end}, ++seq_);
    }
  }

  core::FleetReport LiveReport(int64_t as_of,
                               std::optional<int64_t> since = std::nullopt) {
    auto r = ingestor_->Report(as_of, since);
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? *r : core::FleetReport();
  }

  core::Config config_;
  std::unique_ptr<storage::MemoryEventStore> store_ =
      std::make_unique<storage::MemoryEventStore>();
  FakeClock clock_{kAsOf};
  std::unique_ptr<LiveState> live_;
  std::unique_ptr<Ingestor> ingestor_;
  uint64_t seq_ = 0;
};

void ExpectEqualReports(const core::FleetReport& a,
                        const core::FleetReport& b) {
  ASSERT_EQ(a.jobs.size(), b.jobs.size());
  for (size_t i = 0; i < a.jobs.size(); ++i) {
    EXPECT_EQ(a.jobs[i].job_id, b.jobs[i].job_id);
    EXPECT_EQ(a.jobs[i].nanos, b.jobs[i].nanos) << a.jobs[i].job_id;
    EXPECT_EQ(a.jobs[i].at_risk_ns, b.jobs[i].at_risk_ns);
    EXPECT_EQ(a.jobs[i].lost_steps, b.jobs[i].lost_steps);
    EXPECT_EQ(a.jobs[i].duplicates, b.jobs[i].duplicates);
    EXPECT_EQ(a.jobs[i].state, b.jobs[i].state) << a.jobs[i].job_id;
  }
  EXPECT_EQ(a.fleet.chip_seconds, b.fleet.chip_seconds);
  EXPECT_EQ(a.fleet.capacity_chip_seconds, b.fleet.capacity_chip_seconds);
}

// Moves each event back in arrival order by up to `jitter` positions, and
// `far` of them by hundreds of positions (later than the lateness).
std::vector<v1::Event> Disorder(const std::vector<v1::Event>& all,
                                uint32_t seed, int jitter, int far) {
  // Heartbeats keep their order (one agent sends a host's in order): the
  // live state does not rebuild capacity for a late heartbeat.
  std::vector<v1::Event> events, heartbeats;
  for (const v1::Event& e : all) {
    (e.has_heartbeat() ? heartbeats : events).push_back(e);
  }
  std::mt19937 rng(seed);
  for (size_t i = 0; i + 1 < events.size(); ++i) {
    size_t j = i + rng() % std::min<size_t>(jitter, events.size() - i);
    std::swap(events[i], events[j]);
  }
  for (int k = 0; k < far; ++k) {
    size_t i = rng() % (events.size() / 2);
    std::rotate(events.begin() + i, events.begin() + i + 1,
                events.begin() + std::min(events.size(), i + 300));
  }
  events.insert(events.end(), heartbeats.begin(), heartbeats.end());
  return events;
}

TEST_F(IngestorTest, LiveEqualsReplayInOrder) {
  auto events = RandomFleet(11, 20, 60);
  SendAll(events, 50);
  ExpectEqualReports(LiveReport(kAsOf), Replay(events, config_, kAsOf));
  EXPECT_EQ(ingestor_->live_stats().late_rebuilds, 0);
}

TEST_F(IngestorTest, LiveEqualsReplayWithDisorderAndLateEvents) {
  for (uint32_t seed = 1; seed <= 5; ++seed) {
    store_ = std::make_unique<storage::MemoryEventStore>();
    Restart();
    auto events = RandomFleet(seed, 20, 60);
    SendAll(Disorder(events, seed, 4, 20), 37);
    ExpectEqualReports(LiveReport(kAsOf), Replay(events, config_, kAsOf));
    EXPECT_GT(ingestor_->live_stats().late_rebuilds, 0) << seed;
    EXPECT_EQ(ingestor_->live_stats().apply_errors, 0);
  }
}

TEST_F(IngestorTest, ReportAsOfThePastReplaysTheStore) {
  auto events = RandomFleet(3, 10, 60);
  SendAll(events, 50);
  const int64_t past = kAsOf - 4 * 3600 * core::kNanosPerSecond;
  ExpectEqualReports(LiveReport(past), Replay(events, config_, past));
}

TEST_F(IngestorTest, SinceWindowReplaysTheStore) {
  auto events = RandomFleet(4, 10, 60);
  SendAll(events, 50);
  core::Config windowed = config_;
  windowed.since_ns = kAsOf - 3600 * core::kNanosPerSecond;
  ExpectEqualReports(LiveReport(kAsOf, windowed.since_ns),
                     Replay(events, windowed, kAsOf));
}

TEST_F(IngestorTest, RedeliveredBatchCountsOnce) {
  auto events = ParseEvents(Timeline(R"(
10:00:00 {"started":{}}
10:00:10 {"step":{"step":1}}
)"));
  v1::Ack first = Send(events, 1);
  EXPECT_EQ(first.accepted(), 2u);
  EXPECT_FALSE(first.duplicate());
  v1::Ack again = Send(events, 1);
  EXPECT_TRUE(again.duplicate());
  EXPECT_EQ(again.accepted(), 0u);
  EXPECT_EQ(ingestor_->stats().accepted_events, 2);
  std::vector<v1::Event> stored;
  ASSERT_TRUE(store_->ReadJob("j", 100, &stored).ok());
  EXPECT_EQ(stored.size(), 2u);
}

TEST_F(IngestorTest, BatchWithoutIdentityIsRefused) {
  v1::Batch batch;
  batch.set_sequence(1);
  *batch.add_events() = ParseEvents(Timeline("10:00:00 {\"started\":{}}"))[0];
  auto ack = ingestor_->Ingest(batch);
  ASSERT_FALSE(ack.ok());
  EXPECT_THAT(std::string(ack.status().message()),
              HasSubstr("batch: agent_id and a sequence from 1 are required"));
  batch.set_agent_id("a");
  batch.set_sequence(0);
  EXPECT_FALSE(ingestor_->Ingest(batch).ok());
  EXPECT_EQ(live_->job_count(), 0u);
}

TEST_F(IngestorTest, DedupeSurvivesRestart) {
  auto events = ParseEvents(Timeline("10:00:00 {\"started\":{}}"));
  Send(events, 7);
  Restart();
  EXPECT_TRUE(Send(events, 7).duplicate());
  EXPECT_TRUE(Send(events, 3).duplicate());
  EXPECT_FALSE(Send(events, 8).duplicate());
  // Another agent's sequence 7 is its own.
  EXPECT_FALSE(Send(events, 7, "agent-2").duplicate());
}

TEST_F(IngestorTest, MixedBatchAcceptsGoodAndDeadLettersBad) {
  auto events = ParseEvents(Timeline(R"(
10:00:00 {"started":{}}
10:00:05 {"job_submitted":{"chips":0}}
10:00:10 {"step":{"step":1}}
10:00:20 {"job_ended":{"outcome":"SUCCEEDED"}}
10:00:30 {"step":{"step":2}}
)"));
  events.emplace_back();  // no time, no job, no body
  v1::Ack ack = Send(events, 1);
  EXPECT_EQ(ack.accepted(), 3u);
  ASSERT_EQ(ack.rejections_size(), 3);
  EXPECT_EQ(ack.rejections(0).index(), 1u);
  EXPECT_THAT(ack.rejections(0).reason(), HasSubstr("job_submitted.chips"));
  EXPECT_EQ(ack.rejections(1).index(), 4u);
  EXPECT_THAT(ack.rejections(1).reason(),
              HasSubstr("ended at 2026-11-22T10:00:20Z"));
  EXPECT_EQ(ack.rejections(2).index(), 5u);
  std::vector<v1::DeadLetter> dead;
  uint64_t total = 0;
  ASSERT_TRUE(store_->DeadLetters(10, &dead, &total).ok());
  EXPECT_EQ(total, 3u);
  EXPECT_EQ(dead[0].event().job_submitted().chips(), 0);
  // The accepted events made a 20 s job: 10 s step + 10 s idle at the end.
  core::FleetReport r = LiveReport(T("2026-11-22T10:01:00Z"));
  ASSERT_EQ(r.jobs.size(), 1u);
  EXPECT_EQ(r.jobs[0].total_ns, 20'000'000'000);
}

TEST_F(IngestorTest, EventsAfterJobEndedInALaterBatchAreRejected) {
  Send(ParseEvents(Timeline(R"(
10:00:00 {"started":{}}
10:00:20 {"job_ended":{"outcome":"FAILED"}}
)")),
       1);
  v1::Ack ack = Send(ParseEvents(Timeline(R"(
10:00:10 {"step":{"step":1}}
10:00:20 {"job_ended":{"outcome":"SUCCEEDED"}}
10:00:21 {"checkpoint":{"step":1}}
)")),
                     2);
  // The step before the end is accepted (and applied in its place); a
  // second job_ended and anything after the end are not.
  EXPECT_EQ(ack.accepted(), 1u);
  EXPECT_EQ(ack.rejections_size(), 2);
}

TEST_F(IngestorTest, FailedWriteStoresAndAppliesNothing) {
  auto events = ParseEvents(Timeline("10:00:00 {\"started\":{}}"));
  store_->FailNextWrite(absl::UnavailableError("disk on fire"));
  v1::Batch batch;
  batch.set_agent_id("a");
  batch.set_sequence(1);
  *batch.add_events() = events[0];
  auto ack = ingestor_->Ingest(batch);
  ASSERT_FALSE(ack.ok());
  EXPECT_EQ(ack.status().message(), "disk on fire");
  EXPECT_EQ(live_->job_count(), 0u);
  auto retry = ingestor_->Ingest(batch);  // the agent retries
  ASSERT_TRUE(retry.ok());
  EXPECT_FALSE(retry->duplicate());
  EXPECT_EQ(retry->accepted(), 1u);
}

TEST_F(IngestorTest, FutureEventsAreRejectedByTheServerClock) {
  clock_.Set(T("2026-11-22T10:00:00Z"));
  v1::Ack ack = Send(ParseEvents(Timeline(R"(
10:04:59 {"started":{}}
10:05:01 {"step":{"step":1}}
)")),
                     1);
  EXPECT_EQ(ack.accepted(), 1u);  // up to 300 s ahead is clock skew
  ASSERT_EQ(ack.rejections_size(), 1);
  EXPECT_THAT(ack.rejections(0).reason(), HasSubstr("time"));
}

TEST_F(IngestorTest, RestartRecoversEveryJobExactly) {
  auto events = RandomFleet(5, 20, 60);
  SendAll(Disorder(events, 5, 4, 10), 40);
  core::FleetReport before = LiveReport(kAsOf);
  Restart();
  ExpectEqualReports(LiveReport(kAsOf), before);
  ExpectEqualReports(before, Replay(events, config_, kAsOf));
}

TEST_F(IngestorTest, FaultPointsSurroundTheWrite) {
  std::vector<std::pair<std::string, size_t>> seen;  // point, events stored
  ingestor_->set_fault_hook([&](const char* point) {
    std::vector<v1::Event> in_store;
    EXPECT_TRUE(store_->ReadJob("j", 100, &in_store).ok());
    seen.emplace_back(point, in_store.size());
  });
  Send(ParseEvents(Timeline("10:00:00 {\"started\":{}}")), 1);
  EXPECT_EQ(seen, (std::vector<std::pair<std::string, size_t>>{
                      {"before_store", 0}, {"after_store", 1}}));
}

}  // namespace
}  // namespace goodput::server
