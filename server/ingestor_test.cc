// The ingest path against the in-memory store: exactly-once batches,
// dead letters, late events, restart recovery, and live == replay.
#include "server/ingestor.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <random>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/event_order.h"
#include "core/testing/expect.h"
#include "core/testing/random_fleet.h"
#include "core/testing/timeline.h"
#include "gmock/gmock.h"
#include "gtest/gtest-spi.h"
#include "gtest/gtest.h"
#include "server/fleet_history.h"
#include "server/store_replay.h"
#include "server/testing/stored_heartbeats.h"
#include "server/testing/walk_jobs.h"
#include "storage/job_snapshot.h"
#include "storage/memory_event_store.h"

namespace goodput::server {
namespace {

using ::goodput::core::testing::ExpectEqualReports;
using ::goodput::core::testing::ExpectSeconds;
using ::goodput::core::testing::JobEvents;
using ::goodput::core::testing::ParseEvents;
using ::goodput::core::testing::RandomFleet;
using ::goodput::core::testing::RandomFleetWithFleetExclusions;
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
  // A new server process over the same store (as after a kill -9: no
  // state records at shutdown). Every test runs with frequent state
  // records, so restarts, late events and past reports go through them.
  // `configure` (if set) is called before the recovery.
  void Restart(const std::function<void()>& configure = nullptr) {
    live_ = std::make_unique<LiveState>(&config_, kLateness, store_.get());
    ingestor_ = std::make_unique<Ingestor>(store_.get(), live_.get(), &clock_,
                                           codec::ValidationLimits());
    ingestor_->set_state_policy(policy_);
    if (configure) configure();
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
  LiveState::StatePolicy policy_{
      .every_events = 7, .every_ns = 600 * core::kNanosPerSecond, .keep = 4};
  std::unique_ptr<storage::MemoryEventStore> store_ =
      std::make_unique<storage::MemoryEventStore>();
  FakeClock clock_{kAsOf};
  std::unique_ptr<LiveState> live_;
  std::unique_ptr<Ingestor> ingestor_;
  uint64_t seq_ = 0;
};

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

// A --since window's report from the live jobs' windows: chip-seconds and
// ideal seconds are live sums less an offset (equal up to rounding), the
// rest exactly a replay's; capacity is not kept per window (a replayed
// answer has it).
void ExpectSameWindow(const core::FleetReport& got,
                      const core::FleetReport& want, bool live) {
  EXPECT_EQ(got.since_ns, want.since_ns);
  ASSERT_EQ(got.jobs.size(), want.jobs.size());
  if (live) {
    EXPECT_FALSE(got.fleet.capacity_chip_seconds.has_value());
  } else {
    EXPECT_EQ(got.fleet.capacity_chip_seconds,
              want.fleet.capacity_chip_seconds);
  }
  auto near = [](double a, double b) {
    EXPECT_NEAR(a, b, 1e-9 * std::max(1.0, std::abs(b)));
  };
  for (size_t i = 0; i < got.jobs.size(); ++i) {
    const core::JobReport &x = got.jobs[i], &y = want.jobs[i];
    SCOPED_TRACE(y.job_id);
    EXPECT_EQ(x.job_id, y.job_id);
    EXPECT_EQ(x.nanos, y.nanos);
    EXPECT_EQ(x.total_ns, y.total_ns);
    EXPECT_EQ(x.at_risk_ns, y.at_risk_ns);
    EXPECT_EQ(x.custom_nanos, y.custom_nanos);
    EXPECT_EQ(x.costed_productive_ns, y.costed_productive_ns);
    EXPECT_EQ(x.lost_steps, y.lost_steps);
    EXPECT_EQ(x.state, y.state);
    EXPECT_EQ(x.last_checkpoint, y.last_checkpoint);
    near(x.ideal_seconds, y.ideal_seconds);
    for (size_t c = 0; c < x.chip_seconds.size(); ++c) {
      near(x.chip_seconds[c], y.chip_seconds[c]);
    }
  }
  for (size_t c = 0; c < got.fleet.chip_seconds.size(); ++c) {
    EXPECT_NEAR(got.fleet.chip_seconds[c], want.fleet.chip_seconds[c],
                1e-6 * std::max(1.0, std::abs(want.fleet.chip_seconds[c])));
  }
}

// Issue 12 item 3: --since as of now snaps down to the window grid (60 s
// edges within 2 h of the as-of, 1 h ones within 25 h) and comes from the
// live jobs' windows, through disorder, late events (rebuilds) and
// restarts (state records keep the edges; an ended job held as its final
// report keeps no window that cuts it: that report is replayed from the
// store, with the same answer).
TEST_F(IngestorTest, SinceAsOfNowSnapsToTheGridAndEqualsAReplay) {
  for (uint32_t seed = 1; seed <= 4; ++seed) {
    store_ = std::make_unique<storage::MemoryEventStore>();
    Restart();
    auto events = RandomFleet(seed, 20, 60);
    SendAll(Disorder(events, seed, 4, 10), 37);
    EXPECT_GT(ingestor_->live_stats().late_rebuilds, 0) << seed;
    int64_t first = std::numeric_limits<int64_t>::max(), newest = 0;
    for (const v1::Event& e : events) {
      first = std::min(first, core::EventTimeNanos(e));
      newest = std::max(newest, core::EventTimeNanos(e));
    }
    const int64_t as_of = newest + 600 * core::kNanosPerSecond;
    for (int round = 0; round < 2; ++round) {
      for (int64_t since = first - 600 * core::kNanosPerSecond; since < as_of;
           since += 419 * core::kNanosPerSecond) {
        const int64_t live_before = ingestor_->window_stats().live;
        auto got =
            ingestor_->Report(as_of, since, nullptr, core::FleetSegments::kAll,
                              /*exact_since=*/false);
        const bool live = ingestor_->window_stats().live > live_before;
        ASSERT_TRUE(got.ok()) << got.status();
        core::Config windowed = config_;
        windowed.since_ns = *live_->window_grid().Snap(since, as_of);
        ASSERT_LE(windowed.since_ns, since);
        SCOPED_TRACE(core::FormatTimeNanos(windowed.since_ns));
        ExpectSameWindow(*got, Replay(events, windowed, as_of), live);
        auto exact = ingestor_->Report(as_of, since);  // exact_since
        ASSERT_TRUE(exact.ok());
        EXPECT_EQ(exact->since_ns, since);
      }
      if (round == 0) {
        EXPECT_GT(ingestor_->window_stats().live, 0) << seed;
        Restart();
      }
    }
    // Restarted: the jobs ended in the fleet are held as their final
    // snapshots, and a window that cuts one reads it from the store.
    EXPECT_GT(ingestor_->window_stats().store_jobs, 0) << seed;
    EXPECT_EQ(ingestor_->window_stats().replayed, 0) << seed;
  }
}

TEST_F(IngestorTest, ReplayChecksCancelledOncePerJobAndStops) {
  auto events = RandomFleet(5, 10, 60);
  SendAll(events, 50);
  core::Config windowed = config_;  // a window always replays the store
  windowed.since_ns = kAsOf - 3600 * core::kNanosPerSecond;
  int checks = 0;
  auto never = [&checks] { return ++checks < 0; };
  auto r = ingestor_->Report(kAsOf, windowed.since_ns, never);
  ASSERT_TRUE(r.ok()) << r.status();
  ExpectEqualReports(*r, Replay(events, windowed, kAsOf));
  std::set<std::string> jobs;
  for (const v1::Event& e : events) {
    if (!e.has_heartbeat()) jobs.insert(e.job_id());
  }
  EXPECT_EQ(checks, static_cast<int>(jobs.size()));  // once per stored job
  checks = 0;
  auto third = [&checks] { return ++checks == 3; };
  r = ingestor_->Report(kAsOf, windowed.since_ns, third);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kCancelled) << r.status();
  EXPECT_EQ(checks, 3);  // stopped at the third job
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
  ASSERT_TRUE(store_->ReadJob("j", 0, 100, &stored).ok());
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

// A forged sequence far ahead would make every later batch of the agent a
// "duplicate"; it is refused and stores nothing (issue 15.2).
TEST_F(IngestorTest, SequenceFarAboveTheHighWaterMarkIsRefused) {
  ingestor_->set_max_sequence_jump(10);
  auto events = ParseEvents(Timeline("10:00:00 {\"started\":{}}"));
  v1::Batch batch;
  batch.set_agent_id("agent-b");
  *batch.add_events() = events[0];
  batch.set_sequence(std::numeric_limits<uint64_t>::max());
  auto ack = ingestor_->Ingest(batch);
  ASSERT_TRUE(absl::IsOutOfRange(ack.status())) << ack.status();
  EXPECT_EQ(ack.status().message(),
            "batch.sequence: 18446744073709551615 of agent agent-b is more "
            "than --max_sequence_jump=10 above its stored high-water mark 0; "
            "nothing stored (a forged or corrupt sequence, or a server that "
            "lost its store: docs/security.md, \"Agent identities\")");
  batch.set_sequence(11);
  EXPECT_TRUE(absl::IsOutOfRange(ingestor_->Ingest(batch).status()));
  EXPECT_EQ(ingestor_->stats().sequence_jumps, 2);
  EXPECT_EQ(live_->job_count(), 0u);
  // The agent's own next batches still count: nothing was recorded.
  EXPECT_FALSE(Send(events, 10, "agent-b").duplicate());
  EXPECT_FALSE(Send(events, 20, "agent-b").duplicate());  // 10 above 10
  EXPECT_EQ(ingestor_->stats().duplicate_batches, 0);
}

// Every goodputctl send is a new agent id: its last-seen series must not
// stay forever (issue 15.10).
TEST_F(IngestorTest, SilentAgentsLeaveTheLastSeenMapAfterTheTtl) {
  ingestor_->set_agent_series_ttl(3600 * core::kNanosPerSecond);
  auto events = ParseEvents(Timeline("10:00:00 {\"started\":{}}"));
  Send(events, 1, "old");
  clock_.Set(kAsOf + 1800 * core::kNanosPerSecond);
  Send({}, 1, "young");
  clock_.Set(kAsOf + 3600 * core::kNanosPerSecond);
  EXPECT_EQ(ingestor_->stats().agent_last_seen_ns.size(), 2u);  // not over
  clock_.Set(kAsOf + 3601 * core::kNanosPerSecond);
  IngestStats stats = ingestor_->stats();
  EXPECT_EQ(stats.agent_last_seen_ns.count("old"), 0u);
  EXPECT_EQ(stats.agent_last_seen_ns.count("young"), 1u);
  EXPECT_EQ(stats.expired_agent_series, 1);
  Send({}, 2, "old");  // back: a new series
  EXPECT_EQ(ingestor_->stats().agent_last_seen_ns.count("old"), 1u);
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
    EXPECT_TRUE(store_->ReadJob("j", 0, 100, &in_store).ok());
    seen.emplace_back(point, in_store.size());
  });
  Send(ParseEvents(Timeline("10:00:00 {\"started\":{}}")), 1);
  EXPECT_EQ(seen, (std::vector<std::pair<std::string, size_t>>{
                      {"before_store", 0}, {"after_store", 1}}));
}

// Hand-computed: the window since 10:01 (an edge) as of 10:04 of a job
// preempted at 10:02 (rule 7: steps 1-3 and the open step lost at the
// resume), then a late checkpoint of step 3 at 10:01:40 (past the
// lateness: a rebuild) makes steps 1-3 durable; only the open step at the
// preemption stays lost.
TEST_F(IngestorTest, SinceWindowAcrossAPreemptionAndALateCheckpoint) {
  auto events = JobEvents("j", R"(
10:00:00 {"job_submitted":{"chips":4,"workload":"TRAINING"}}
10:00:00 {"started":{}}
10:00:00 {"activity":{"kind":"TRAINING"}}
10:00:30 {"step":{"step":1}}
10:01:00 {"step":{"step":2}}
10:01:30 {"step":{"step":3}}
10:02:00 {"interruption":{"reason":"PREEMPTED"}}
10:03:00 {"started":{}}
10:03:00 {"activity":{"kind":"TRAINING"}}
10:03:30 {"step":{"step":1}}
)");
  for (size_t i = 0; i < events.size(); ++i) {
    EXPECT_EQ(Send({events[i]}, ++seq_).accepted(), 1u) << i;
  }
  const int64_t as_of = T("2026-11-22T10:04:00Z");
  const int64_t since = T("2026-11-22T10:01:20Z");  // snaps to 10:01:00
  auto window = [&] {
    auto r = ingestor_->Report(as_of, since, nullptr, core::FleetSegments::kAll,
                               /*exact_since=*/false);
    EXPECT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(r->since_ns, T("2026-11-22T10:01:00Z"));
    return r->jobs.at(0);
  };
  ExpectSeconds(window(), 180,
                {{"productive", 60}, {"lost", 60}, {"recovery", 60}});
  EXPECT_EQ(ingestor_->window_stats().live, 1);
  auto late = JobEvents("j", R"(10:01:40 {"checkpoint":{"step":3}})");
  EXPECT_EQ(Send(late, ++seq_).accepted(), 1u);
  EXPECT_EQ(ingestor_->live_stats().late_rebuilds, 1);
  ExpectSeconds(window(), 180,
                {{"productive", 90}, {"lost", 30}, {"recovery", 60}});
  events.insert(events.end(), late.begin(), late.end());
  core::Config windowed = config_;
  windowed.since_ns = T("2026-11-22T10:01:00Z");
  auto got = ingestor_->Report(as_of, since, nullptr, core::FleetSegments::kAll,
                               false);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->jobs.at(0).chips, 4);
  ExpectSameWindow(*got, Replay(events, windowed, as_of), /*live=*/true);
  Restart();  // recovered from a state record, which keeps the edge
  ExpectSeconds(window(), 180,
                {{"productive", 90}, {"lost", 30}, {"recovery", 60}});
  EXPECT_GT(live_->stats().restores_from_state, 0);
  EXPECT_EQ(ingestor_->window_stats().live, 1);
  EXPECT_EQ(ingestor_->window_stats().replayed, 0);
}

// Job a runs 10:00-10:02 (steps 1-3, step 3 checkpointed, then
// job_ended); job b starts at 10:00 and steps at 10:05 and 10:05:30.
std::vector<v1::Event> EndedAAndRunningB() {
  std::vector<v1::Event> events = JobEvents("a", R"(
10:00:00 {"job_submitted":{"chips":4,"workload":"TRAINING"}}
10:00:00 {"started":{}}
10:00:00 {"activity":{"kind":"TRAINING"}}
10:00:30 {"step":{"step":1}}
10:01:00 {"step":{"step":2}}
10:01:30 {"step":{"step":3}}
10:01:30 {"checkpoint":{"step":3}}
10:02:00 {"job_ended":{"outcome":"SUCCEEDED"}}
)");
  auto b = JobEvents("b", R"(
10:00:00 {"job_submitted":{"chips":8,"workload":"TRAINING"}}
10:00:00 {"started":{}}
10:00:00 {"activity":{"kind":"TRAINING"}}
10:05:00 {"step":{"step":1}}
10:05:30 {"step":{"step":2}}
)");
  events.insert(events.end(), b.begin(), b.end());
  return events;
}

// Issue 12: an ended job that a --since window cuts keeps no window once
// it is held as its final snapshot (evicted, or after a restart). The
// live answer reads that job alone from the store (from its state record
// at or before the edge, then its events), not the whole store.
// Hand-computed: job a (10:00-10:02) in the window since 10:01 is step 3
// (10:01:00-10:01:30, checkpointed: productive) and 30 s without a step
// before its end (idle); job b runs on and keeps its window.
TEST_F(IngestorTest, SinceWindowReadsACutEndedJobAloneFromTheStore) {
  std::vector<v1::Event> events = EndedAAndRunningB();
  for (const v1::Event& e : events) EXPECT_EQ(Send({e}, ++seq_).accepted(), 1u);
  ingestor_->set_ended_job_grace(0);
  ASSERT_TRUE(ingestor_->EvictEndedJobs().ok());
  ASSERT_EQ(ingestor_->stats().evicted_jobs, 1);
  const int64_t as_of = T("2026-11-22T10:06:00Z");
  core::Config windowed = config_;
  windowed.since_ns = T("2026-11-22T10:01:00Z");
  const core::FleetReport want = Replay(events, windowed, as_of);
  auto window = [&] {
    auto r = ingestor_->Report(as_of, T("2026-11-22T10:01:20Z"), nullptr,
                               core::FleetSegments::kAll, false);
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? *r : core::FleetReport();
  };
  core::FleetReport got = window();  // a evicted
  ASSERT_EQ(got.jobs.size(), 2u);
  ExpectSeconds(got.jobs[0], 60, {{"productive", 30}, {"idle", 30}});
  ExpectSameWindow(got, want, /*live=*/true);
  EXPECT_EQ(ingestor_->window_stats().store_jobs, 1);
  Restart();  // a is loaded as its final snapshot
  got = window();
  ExpectSameWindow(got, want, /*live=*/true);
  EXPECT_EQ(ingestor_->window_stats().live, 1);
  EXPECT_EQ(ingestor_->window_stats().store_jobs, 1);
  EXPECT_EQ(ingestor_->window_stats().replayed, 0);
}

// Issue 12 item 4: a report as of now takes what memory holds under the
// ingest lock and reads the evicted jobs' final snapshots after releasing
// it. Job a (ended 10:02) is evicted, b runs; the fault hook ingests
// between the two parts.
class ReportCutTest : public IngestorTest,
                      public ::testing::WithParamInterface<bool> {
 protected:
  void SetUp() override {
    std::vector<v1::Event> events = EndedAAndRunningB();
    for (const v1::Event& e : events)
      ASSERT_EQ(Send({e}, ++seq_).accepted(), 1u);
    ingestor_->set_ended_job_grace(0);
    ASSERT_TRUE(ingestor_->EvictEndedJobs().ok());
    ASSERT_EQ(ingestor_->stats().evicted_jobs, 1);
  }

  // Report (as of now, or the live --since window) with `between` run once
  // at "report_cut".
  core::FleetReport ReportWith(const std::function<void()>& between,
                               bool window) {
    bool done = false;
    ingestor_->set_fault_hook([&](const char* point) {
      if (std::string(point) != "report_cut" || done) return;
      done = true;
      between();
    });
    core::FleetReport got = Ask(window);
    ingestor_->set_fault_hook(nullptr);
    EXPECT_TRUE(done);
    return got;
  }
  core::FleetReport Ask(bool window) {
    auto r = window ? ingestor_->Report(kNow, T("2026-11-22T10:01:00Z"),
                                        nullptr, core::FleetSegments::kAll,
                                        /*exact_since=*/false)
                    : ingestor_->Report(kNow, std::nullopt);
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? *r : core::FleetReport();
  }
  // b's third step, at 10:05:50: it changes b's report as of kNow.
  void StepB() {
    EXPECT_EQ(Send(JobEvents("b", R"(10:05:50 {"step":{"step":3}})"), ++seq_)
                  .accepted(),
              1u);
  }
  static constexpr int64_t kNow = (1795341600LL + 360) * core::kNanosPerSecond;
};

// The parameter: the live --since window (true) or the whole report.
TEST_P(ReportCutTest, ABatchAfterTheCutIsNotInTheReport) {
  const core::FleetReport before = Ask(GetParam());
  ASSERT_EQ(before.jobs.size(), 2u);  // a from its snapshot
  const core::FleetReport got = ReportWith([&] { StepB(); }, GetParam());
  ExpectEqualReports(got, before);
  EXPECT_EQ(got.jobs.at(1).last_step, 2);
  EXPECT_EQ(Ask(GetParam()).jobs.at(1).last_step, 3);
}

// A late event brings a back and it leaves memory again (its snapshot is
// stored after the cut) while b moves on: the snapshot read after the lock
// is newer than the cut, so the report is taken again under the lock, at
// the later cut, whole.
TEST_P(ReportCutTest, AJobEvictedAgainAfterTheCutRetakesTheReportUnderTheLock) {
  const core::FleetReport got = ReportWith(
      [&] {
        auto late = JobEvents("a", R"(10:01:45 {"checkpoint":{"step":3}})");
        EXPECT_EQ(Send(late, ++seq_).accepted(), 1u);
        StepB();
        ASSERT_TRUE(ingestor_->EvictEndedJobs().ok());
      },
      GetParam());
  EXPECT_EQ(ingestor_->stats().evicted_jobs, 2);
  ExpectEqualReports(got, Ask(GetParam()));
  EXPECT_EQ(got.jobs.at(1).last_step, 3);
}

INSTANTIATE_TEST_SUITE_P(WholeAndWindow, ReportCutTest, ::testing::Bool());

// Issue 16 item 1: a failed eviction write (EventStore::EvictJobs) takes
// nothing from memory and counts nothing; a later check evicts the jobs
// once, with the totals of a run whose write never failed. "old" ends at
// 10:00:20; "running" moves the applied event time past its grace.
class FailedEvictionTest : public IngestorTest {
 protected:
  static constexpr int64_t kGrace = 60 * core::kNanosPerSecond;
  void SetUp() override { Start(); }
  // A new store with both jobs sent, one batch each; the first batch's
  // check found nothing due, the next is 6 s (kGrace / 10) of the clock
  // later.
  void Start() {
    store_ = std::make_unique<storage::MemoryEventStore>();
    seq_ = 0;
    Restart();
    ingestor_->set_ended_job_grace(kGrace);
    events_ = JobEvents("old", R"(
10:00:00 {"job_submitted":{"chips":8,"workload":"TRAINING","labels":{"team":"a"}}}
10:00:05 {"started":{}}
10:00:10 {"step":{"step":1}}
10:00:20 {"job_ended":{"outcome":"SUCCEEDED"}}
)");
    Send(events_, ++seq_);
    std::vector<v1::Event> running = JobEvents("running", R"(
10:00:00 {"started":{}}
10:00:10 {"step":{"step":1}}
10:10:00 {"step":{"step":2}}
10:10:10 {"step":{"step":3}}
)");
    Send(running, ++seq_);
    events_.insert(events_.end(), running.begin(), running.end());
    ASSERT_EQ(live_->job_count(), 2u);
  }
  // The evicted totals in memory, a line per group.
  std::vector<std::string> Totals() {
    std::vector<std::string> out;
    live_->evicted_totals().ForEach([&](const EndedJobTotals::Group& g) {
      out.push_back(absl::StrCat(g.totals.job_id, " ", g.jobs, " ",
                                 g.totals.total_ns, " ", g.newest_ended_ns, " ",
                                 g.totals.last_step.value_or(-1)));
    });
    return out;
  }
  // The stored record of the evicted totals.
  std::optional<std::string> Record() {
    std::optional<std::string> value;
    EXPECT_TRUE(store_->ReadMeta(storage::kEvictedTotalsMeta, &value).ok());
    return value;
  }
  // After one failed eviction write: two checks evict the ended job once,
  // with the totals, record and report `want*` of a run that never failed.
  void ExpectTheNextChecksEvictOnce(
      const core::FleetReport& want,
      const std::vector<std::string>& want_totals,
      const std::optional<std::string>& want_record) {
    ASSERT_TRUE(ingestor_->EvictEndedJobs().ok());
    ASSERT_TRUE(ingestor_->EvictEndedJobs().ok());  // nothing more due
    EXPECT_EQ(ingestor_->stats().evicted_jobs, 1);
    EXPECT_EQ(ingestor_->stats().eviction_errors, 1);
    EXPECT_EQ(live_->job_count(), 1u);
    EXPECT_EQ(Totals(), want_totals);
    EXPECT_EQ(Record(), want_record);
    ExpectEqualReports(LiveReport(kAsOf), want);
  }
  std::vector<v1::Event> events_;
};

TEST_F(FailedEvictionTest, KeepsTheJobsAndTheNextCheckEvictsThemOnce) {
  // The run whose write does not fail.
  ASSERT_TRUE(ingestor_->EvictEndedJobs().ok());
  ASSERT_EQ(ingestor_->stats().evicted_jobs, 1);
  const core::FleetReport want = LiveReport(kAsOf);
  ExpectEqualReports(want, Replay(events_, config_, kAsOf));
  const std::vector<std::string> want_totals = Totals();
  ASSERT_EQ(want_totals.size(), 1u);
  const std::optional<std::string> want_record = Record();
  ASSERT_TRUE(want_record.has_value());

  Start();
  store_->FailNextWrite(absl::UnavailableError("disk on fire"));
  EXPECT_EQ(ingestor_->EvictEndedJobs(),
            absl::UnavailableError("disk on fire"));
  EXPECT_EQ(ingestor_->stats().eviction_errors, 1);
  EXPECT_EQ(ingestor_->stats().evicted_jobs, 0);
  EXPECT_EQ(live_->job_count(), 2u);
  EXPECT_TRUE(Totals().empty());
  EXPECT_EQ(Record(), std::nullopt);
  std::optional<storage::JobSnapshot> evicted;
  ASSERT_TRUE(store_->ReadEvictedSnapshot("old", &evicted).ok());
  EXPECT_FALSE(evicted.has_value());
  ExpectEqualReports(LiveReport(kAsOf), want);

  ExpectTheNextChecksEvictOnce(want, want_totals, want_record);
  Restart();
  EXPECT_EQ(Totals(), want_totals);
  ExpectEqualReports(LiveReport(kAsOf), want);
}

// Issue 12: a failed eviction write during the recovery does not stop the
// start; it is counted, and the next check evicts the jobs once, with the
// totals of a run whose write never failed.
TEST_F(FailedEvictionTest, OneDuringTheRecoveryIsCountedAndTheNextCheckEvicts) {
  ASSERT_TRUE(ingestor_->EvictEndedJobs().ok());  // the run without failure
  const core::FleetReport want = LiveReport(kAsOf);
  const std::vector<std::string> want_totals = Totals();
  ASSERT_EQ(want_totals.size(), 1u);
  const std::optional<std::string> want_record = Record();

  Start();
  store_->FailNextWrite(absl::UnavailableError("disk on fire"));
  Restart([&] { ingestor_->set_ended_job_grace(kGrace); });
  EXPECT_EQ(ingestor_->stats().eviction_errors, 1);
  EXPECT_EQ(ingestor_->stats().evicted_jobs, 0);
  EXPECT_EQ(live_->job_count(), 2u);
  EXPECT_EQ(Record(), std::nullopt);
  ExpectEqualReports(LiveReport(kAsOf), want);

  ExpectTheNextChecksEvictOnce(want, want_totals, want_record);
}

// The ingest path's check: the batch that triggered it is durable, so it
// is acked (a redelivery is a duplicate) and no store failure is reported
// to the health probe; the check is retried 6 s of the clock later.
TEST_F(FailedEvictionTest,
       OnTheIngestPathTheBatchIsAckedAndTheNextCheckEvicts) {
  clock_.Advance(6 * core::kNanosPerSecond);
  ingestor_->set_fault_hook([&](const char* point) {
    if (std::string(point) != "after_store") return;
    store_->FailNextWrite(absl::UnavailableError("disk on fire"));
  });
  const std::vector<v1::Event> step =
      JobEvents("running", R"(10:10:20 {"step":{"step":4}})");
  const uint64_t step_seq = ++seq_;
  EXPECT_EQ(Send(step, step_seq).accepted(), 1u);
  ingestor_->set_fault_hook(nullptr);
  events_.push_back(step[0]);
  EXPECT_EQ(ingestor_->stats().failed_batches, 0);
  EXPECT_EQ(ingestor_->health().store_failures_in_a_row, 0);
  EXPECT_EQ(ingestor_->stats().eviction_errors, 1);
  EXPECT_EQ(ingestor_->stats().evicted_jobs, 0);
  EXPECT_EQ(live_->job_count(), 2u);
  const core::FleetReport want = Replay(events_, config_, kAsOf);
  ExpectEqualReports(LiveReport(kAsOf), want);
  EXPECT_TRUE(Send(step, step_seq).duplicate());
  Send({}, ++seq_);  // before the next check
  EXPECT_EQ(ingestor_->stats().evicted_jobs, 0);

  clock_.Advance(6 * core::kNanosPerSecond);
  Send({}, ++seq_);
  EXPECT_EQ(ingestor_->stats().evicted_jobs, 1);
  EXPECT_EQ(live_->job_count(), 1u);
  EXPECT_EQ(live_->evicted_totals().jobs(), 1);
  ExpectEqualReports(LiveReport(kAsOf), want);
}

// Issue 12 item 4: a report as of now walks the jobs a few per hold of the
// ingest lock (here one), and batches go in between two steps
// ("report_walk"). Whatever they do to a job the walk has not reached yet,
// the report is the one as of its cut. Jobs b, c, d run; e ended at 10:02
// (its grace is long enough to keep it in memory until a test evicts it).
class ReportWalkTest : public IngestorTest,
                       public ::testing::WithParamInterface<bool> {
 protected:
  // The jobs come in the order e, d, b, c with reports in between, so that
  // the walk's id order is not the order they came in.
  void SetUp() override {
    SendAll(testing::EndedWalkJob(), 100);
    for (const char* job : {"d", "b", "c"}) {
      Ask(GetParam());
      SendAll(testing::RunningWalkJob(job), 100);
    }
    ingestor_->set_report_walk_jobs(1);
  }

  core::FleetReport Ask(bool window) {
    auto r = window ? ingestor_->Report(kNow, T("2026-11-22T10:01:20Z"),
                                        nullptr, core::FleetSegments::kAll,
                                        /*exact_since=*/false)
                    : ingestor_->Report(kNow, std::nullopt);
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? *r : core::FleetReport();
  }
  // Asks with `between` run at the first "report_walk" (b walked, c, d and
  // e not yet); expects the report asked just before, and a different one
  // after (so that `between` changed what it asks).
  void ExpectTheCutsReport(const std::function<void()>& between) {
    const core::FleetReport before = Ask(GetParam());
    ASSERT_EQ(before.jobs.size(), 4u);
    int steps = 0;
    ingestor_->set_fault_hook([&](const char* point) {
      if (std::string(point) == "report_walk" && steps++ == 0) between();
    });
    const core::FleetReport got = Ask(GetParam());
    ingestor_->set_fault_hook(nullptr);
    EXPECT_EQ(steps, 3);  // four jobs, one per step
    ExpectEqualReports(got, before);
    EXPECT_EQ(live_->walk_count(), 0u);
    const core::FleetReport after = Ask(GetParam());
    EXPECT_TRUE(Differ(after, before));
  }
  // Whether ExpectEqualReports finds a difference (not failing the test).
  static bool Differ(const core::FleetReport& a, const core::FleetReport& b) {
    ::testing::TestPartResultArray differences;
    {
      ::testing::ScopedFakeTestPartResultReporter reporter(
          ::testing::ScopedFakeTestPartResultReporter::
              INTERCEPT_ONLY_CURRENT_THREAD,
          &differences);
      ExpectEqualReports(a, b);
    }
    return differences.size() > 0;
  }
  void Send1(const std::string& job, const std::string& line) {
    EXPECT_EQ(Send(JobEvents(job, line), ++seq_).accepted(), 1u);
  }
  static constexpr int64_t kNow = (1795341600LL + 360) * core::kNanosPerSecond;
};

// The parameter: the live --since window (true) or the whole report.
TEST_P(ReportWalkTest, AStepOfAJobNotWalkedYetIsNotInTheReport) {
  ExpectTheCutsReport([&] {
    Send1("c", R"(10:05:50 {"step":{"step":3}})");
    Send1("b", R"(10:05:50 {"step":{"step":3}})");  // walked already
  });
  EXPECT_EQ(Ask(GetParam()).jobs.at(1).last_step, 3);
}

TEST_P(ReportWalkTest, AJobAddedDuringTheWalkIsNotInIt) {
  ExpectTheCutsReport([&] {
    Send1("bz",
          R"(10:05:40 {"job_submitted":{"chips":2,"workload":"TRAINING"}})");
  });
  EXPECT_EQ(Ask(GetParam()).jobs.size(), 5u);
}

// A preemption 3.5 min older than d's newest event: d is rebuilt in the
// same batch, after the walk kept its answer.
TEST_P(ReportWalkTest, ALateEventRebuildsAJobAfterTheWalkKeptIt) {
  const int64_t rebuilds = live_->stats().late_rebuilds;
  ExpectTheCutsReport([&] {
    Send1("d", R"(10:02:00 {"interruption":{"reason":"PREEMPTED"}})");
  });
  EXPECT_EQ(live_->stats().late_rebuilds, rebuilds + 1);
}

TEST_P(ReportWalkTest, AJobEvictedDuringTheWalkKeepsItsAnswer) {
  ingestor_->set_ended_job_grace(0);
  ExpectTheCutsReport([&] {
    ASSERT_TRUE(ingestor_->EvictEndedJobs().ok());
    ASSERT_EQ(ingestor_->stats().evicted_jobs, 1);
    Send1("d", R"(10:05:50 {"step":{"step":3}})");  // so that `after` differs
  });
}

// e leaves memory and comes back (a late step, read back from the store)
// before the walk reaches it: the walk answers e once, as of its cut.
TEST_P(ReportWalkTest, AJobEvictedAndBackDuringTheWalkIsInItOnce) {
  ingestor_->set_ended_job_grace(0);
  ExpectTheCutsReport([&] {
    ASSERT_TRUE(ingestor_->EvictEndedJobs().ok());
    ASSERT_EQ(live_->job_count(), 3u);
    Send1("e", R"(10:01:45 {"step":{"step":3}})");
    ASSERT_EQ(live_->job_count(), 4u);
  });
}

TEST_P(ReportWalkTest, AFleetExclusionDuringTheWalkIsNotInTheReport) {
  ExpectTheCutsReport([&] {
    EXPECT_EQ(Send(ParseEvents(Timeline(R"(
10:05:40 {"exclusion":{"scope":"FLEET","until":"2026-11-22T10:05:55Z","reason":"r"}}
)")),
                   ++seq_)
                  .accepted(),
              1u);
  });
}

TEST_P(ReportWalkTest, ACancelledWalkStopsAndLeavesNothingRegistered) {
  int steps = 0;
  ingestor_->set_fault_hook([&](const char* point) {
    if (std::string(point) == "report_walk") ++steps;
  });
  auto r = ingestor_->Report(
      kNow,
      GetParam() ? std::optional<int64_t>(T("2026-11-22T10:01:20Z"))
                 : std::nullopt,
      [&] { return steps >= 1; }, core::FleetSegments::kAll, false);
  ingestor_->set_fault_hook(nullptr);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kCancelled) << r.status();
  EXPECT_EQ(steps, 1);
  EXPECT_EQ(live_->walk_count(), 0u);
  Send1("c", R"(10:05:50 {"step":{"step":3}})");  // no walk keeps answers
  EXPECT_EQ(Ask(GetParam()).jobs.at(1).last_step, 3);
}

INSTANTIATE_TEST_SUITE_P(WholeAndWindow, ReportWalkTest, ::testing::Bool());

// Recovery groups each job's stored events and applies them in runs; it
// must end where the live path ended, with disorder and late events, and
// again from the snapshots the first restart wrote.
TEST_F(IngestorTest, RecoveryEqualsTheLivePathOverRandomFleets) {
  for (uint32_t seed = 1; seed <= 8; ++seed) {
    store_ = std::make_unique<storage::MemoryEventStore>();
    Restart();
    auto events = RandomFleet(seed, 25, 90);
    SendAll(Disorder(events, seed, 6, 10), 23);
    core::FleetReport live = LiveReport(kAsOf);
    ExpectEqualReports(live, Replay(events, config_, kAsOf));
    Restart();
    ExpectEqualReports(LiveReport(kAsOf), live);
    EXPECT_EQ(ingestor_->live_stats().apply_errors, 0) << seed;
    Restart();
    ExpectEqualReports(LiveReport(kAsOf), live);
  }
}

// Property: a restart at a random point (ended jobs from their snapshots,
// the rest from their events) and then the tail equals the replay of all.
TEST_F(IngestorTest, SnapshotAtARandomPointPlusTailEqualsFullReplay) {
  int snapshotted = 0;
  for (uint32_t seed = 1; seed <= 12; ++seed) {
    store_ = std::make_unique<storage::MemoryEventStore>();
    Restart();
    auto events = Disorder(RandomFleet(seed, 20, 70), seed, 5, 8);
    std::mt19937 rng(seed);
    const size_t cut = rng() % events.size();
    SendAll({events.begin(), events.begin() + cut}, 31);
    std::vector<storage::JobSnapshot> snapshots;
    ASSERT_TRUE(store_->ReadSnapshots(&snapshots).ok());
    snapshotted += static_cast<int>(snapshots.size());
    Restart();
    SendAll({events.begin() + cut, events.end()}, 31);
    ExpectEqualReports(LiveReport(kAsOf), Replay(events, config_, kAsOf));
    Restart();
    ExpectEqualReports(LiveReport(kAsOf), Replay(events, config_, kAsOf));
  }
  EXPECT_GT(snapshotted, 0);
}

// Issue 14 item 3: HOSTS and FLEET exclusions, on time and late (some
// arrive after events they cover were applied: those jobs are rebuilt),
// equal a replay live, after restarts (from state records and snapshots),
// for reports as of the past (store replays) and one job at a time.
TEST_F(IngestorTest, FleetExclusionsLiveEqualReplayOverRandomFleets) {
  int64_t excluded = 0;
  for (uint32_t seed = 1; seed <= 6; ++seed) {
    SCOPED_TRACE(seed);
    store_ = std::make_unique<storage::MemoryEventStore>();
    Restart();
    auto events = RandomFleetWithFleetExclusions(seed, 20, 60);
    SendAll(Disorder(events, seed, 4, 12), 29);
    core::FleetReport want = Replay(events, config_, kAsOf);
    ExpectEqualReports(LiveReport(kAsOf), want);
    EXPECT_EQ(ingestor_->live_stats().apply_errors, 0);
    for (const core::JobReport& j : want.jobs) {
      excluded += j.nanos[core::Index(core::Category::kExcluded)];
    }
    const int64_t past = kAsOf - 5 * 3600 * core::kNanosPerSecond;
    ExpectEqualReports(LiveReport(past), Replay(events, config_, past));
    Restart();
    ExpectEqualReports(LiveReport(kAsOf), want);
    EXPECT_EQ(ingestor_->live_stats().apply_errors, 0);
    Restart();  // from the snapshots and states the first restart wrote
    ExpectEqualReports(LiveReport(kAsOf), want);
  }
  EXPECT_GT(excluded, 0);
}

// The same with a restart at a random point and the rest sent after it.
TEST_F(IngestorTest, FleetExclusionsAcrossARestartAtARandomPoint) {
  for (uint32_t seed = 1; seed <= 8; ++seed) {
    SCOPED_TRACE(seed);
    store_ = std::make_unique<storage::MemoryEventStore>();
    Restart();
    auto events =
        Disorder(RandomFleetWithFleetExclusions(seed, 20, 70), seed, 5, 8);
    std::mt19937 rng(seed);
    const size_t cut = rng() % events.size();
    SendAll({events.begin(), events.begin() + cut}, 31);
    Restart();
    SendAll({events.begin() + cut, events.end()}, 31);
    ExpectEqualReports(LiveReport(kAsOf), Replay(events, config_, kAsOf));
    Restart();
    ExpectEqualReports(LiveReport(kAsOf), Replay(events, config_, kAsOf));
  }
}

// Issue 12: a restart restores the fleet state record (capacity from the
// heartbeats, the HOSTS and FLEET exclusions) and scans only the batches
// after it, with the same reports, capacity to the last bit; a torn
// record is counted and every batch is scanned instead.
TEST_F(IngestorTest, RestartScansOnlyTheBatchesAfterTheFleetStateRecord) {
  for (uint32_t seed = 1; seed <= 4; ++seed) {
    SCOPED_TRACE(seed);
    store_ = std::make_unique<storage::MemoryEventStore>();
    Restart();
    ingestor_->set_fleet_state_policy(
        /*every_batches=*/5,
        /*every_ns=*/3600 * core::kNanosPerSecond);
    auto events = RandomFleetWithFleetExclusions(seed, 20, 60);
    SendAll(events, 13);
    const core::FleetReport want = Replay(events, config_, kAsOf);
    ASSERT_TRUE(want.fleet.capacity_chip_seconds.has_value());
    ExpectEqualReports(LiveReport(kAsOf), want);
    EXPECT_GT(ingestor_->stats().fleet_states_written, 10);
    Restart();
    EXPECT_EQ(live_->stats().fleet_state_restored, 1);
    EXPECT_LE(live_->stats().fleet_batches_scanned, 4);
    ExpectEqualReports(LiveReport(kAsOf), want);
    // A torn record: the newest spaced one (FleetHistory) is restored.
    ASSERT_TRUE(store_->WriteMeta(LiveState::kFleetStateMeta, "torn").ok());
    Restart();
    EXPECT_EQ(live_->stats().fleet_state_restored, 1);
    EXPECT_EQ(live_->stats().unreadable_fleet_states, 1);
    EXPECT_LE(live_->stats().fleet_batches_scanned, 4);
    ExpectEqualReports(LiveReport(kAsOf), want);
    // All torn: every batch is scanned.
    std::vector<std::string> spaced;
    ASSERT_TRUE(
        store_
            ->ScanMeta(FleetHistory::kRecordPrefix,
                       [&](const std::string& name, const std::string&) {
                         spaced.push_back(name);
                         return absl::OkStatus();
                       })
            .ok());
    ASSERT_GE(spaced.size(), 2u);
    for (const std::string& name : spaced) {
      ASSERT_TRUE(store_->WriteMeta(name, "torn").ok());
    }
    Restart();
    EXPECT_EQ(live_->stats().fleet_state_restored, 0);
    EXPECT_EQ(live_->stats().unreadable_fleet_states,
              1 + static_cast<int64_t>(spaced.size()));
    int64_t with_fleet_events = 0;
    ASSERT_TRUE(store_
                    ->ScanHeartbeats([&](uint64_t, std::vector<v1::Event>*) {
                      ++with_fleet_events;
                      return absl::OkStatus();
                    })
                    .ok());
    EXPECT_GT(with_fleet_events, 20);
    EXPECT_EQ(live_->stats().fleet_batches_scanned, with_fleet_events);
    ExpectEqualReports(LiveReport(kAsOf), want);
  }
}

// Issue 12: a HOSTS or FLEET exclusion that comes after heartbeats past
// its start rebuilds capacity from the newest fleet state record before
// it (one that no exclusion stored after it starts before its newest
// heartbeat) instead of from every batch: reports equal the replay, live,
// as of past times (from the spaced records) and after a restart.
TEST_F(IngestorTest, LateExclusionRebuildsCapacityFromARecord) {
  int64_t from_record = 0;
  for (uint32_t seed = 1; seed <= 4; ++seed) {
    SCOPED_TRACE(seed);
    store_ = std::make_unique<storage::MemoryEventStore>();
    Restart();
    ingestor_->set_fleet_state_policy(
        /*every_batches=*/3,
        /*every_ns=*/3600 * core::kNanosPerSecond);
    auto events = RandomFleetWithFleetExclusions(seed, 20, 60);
    for (size_t i = events.size(); i-- > 0;) {  // exclusions come late
      if (!SharedExclusions::IsShared(events[i])) continue;
      std::rotate(events.begin() + i, events.begin() + i + 1,
                  events.begin() + std::min(events.size(), i + 120));
    }
    SendAll(events, 7);
    from_record += live_->stats().capacity_rebuilds_from_record;
    const core::FleetReport want = Replay(events, config_, kAsOf);
    ASSERT_TRUE(want.fleet.capacity_chip_seconds.has_value());
    ExpectEqualReports(LiveReport(kAsOf), want);
    for (int h = 1; h <= 4; ++h) {
      const int64_t past = kAsOf - h * 3600 * core::kNanosPerSecond;
      ExpectEqualReports(LiveReport(past), Replay(events, config_, past));
    }
    Restart();
    ExpectEqualReports(LiveReport(kAsOf), want);
  }
  EXPECT_GT(from_record, 0);
}

class HeartbeatRetentionTest : public IngestorTest {
 protected:
  // A job that runs from 10:00 and three hosts' heartbeats a minute,
  // 10:01-14:00, a batch each, with a fleet state record every 5 batches;
  // returns the events sent.
  std::vector<v1::Event> SendFourHours() {
    ingestor_->set_fleet_state_policy(
        /*every_batches=*/5, /*every_ns=*/3600 * core::kNanosPerSecond);
    std::vector<v1::Event> events = ParseEvents(Timeline(R"(
10:00:00 {"job_submitted":{"chips":8,"workload":"TRAINING"}}
10:00:05 {"started":{}}
)"));
    Send(events, ++seq_);
    const int64_t ten = T("2026-11-22T10:00:00Z");
    for (int m = 1; m <= 240; ++m) {
      std::vector<v1::Event> beats;
      for (const char* host : {"h0", "h1", "h2"}) {
        v1::Event& e = beats.emplace_back();
        e.mutable_time()->set_seconds(ten / core::kNanosPerSecond + 60 * m);
        e.set_host(host);
        e.mutable_heartbeat()->set_chips(8);
        e.mutable_heartbeat()->set_accelerator("tpu-v5p");
      }
      events.insert(events.end(), beats.begin(), beats.end());
      Send(beats, ++seq_);
    }
    return events;
  }
  int64_t StoredBeats() { return testing::StoredHeartbeats(store_.get()); }
};

// Issue 16: --retention deletes the heartbeats that a spaced fleet state
// record before the horizon covers. Live capacity and reports from the
// store after that record are as before (equal to the replay of every
// event); one as of an earlier time is refused naming as_of; a later
// exclusion that starts before every kept record is counted as inexact.
TEST_F(HeartbeatRetentionTest, RetentionDeletesTheHeartbeatsARecordCovers) {
  const std::vector<v1::Event> events = SendFourHours();
  const core::FleetReport live = LiveReport(kAsOf);
  ASSERT_TRUE(live.fleet.capacity_chip_seconds.has_value());
  ingestor_->set_retention(2 * 3600 * core::kNanosPerSecond);  // 13:00
  ASSERT_TRUE(ingestor_->EnforceRetention().ok());
  EXPECT_GT(ingestor_->stats().fleet_batches_deleted, 150);
  EXPECT_LT(StoredBeats(), 3 * 90);  // only beats after the record's cut stay
  ExpectEqualReports(LiveReport(kAsOf), live);
  const int64_t half_past_one = T("2026-11-22T13:30:00Z");
  ExpectEqualReports(LiveReport(half_past_one),
                     Replay(events, config_, half_past_one));
  auto refused = ingestor_->Report(T("2026-11-22T11:00:00Z"), std::nullopt);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(refused.status().message()), HasSubstr("as_of"));
  Restart();
  ExpectEqualReports(LiveReport(kAsOf), live);
  EXPECT_EQ(live_->stats().capacity_rebuilds_inexact, 0);
  Send(ParseEvents(Timeline(R"(
11:30:00 {"exclusion":{"scope":"FLEET","until":"2026-11-22T11:40:00Z","reason":"r"}}
)")),
       ++seq_);
  EXPECT_EQ(live_->stats().capacity_rebuilds_inexact, 1);
}

// Issue 12: a failed heartbeat deletion (here the write of its retention
// mark, which goes first) deletes nothing and is counted as such (not as a
// failed fleet state record); the check does not fail, and the next one
// deletes as many batches as a check that never failed.
TEST_F(HeartbeatRetentionTest, AFailedDeletionIsCountedAndTheNextCheckDeletes) {
  SendFourHours();
  ingestor_->set_retention(2 * 3600 * core::kNanosPerSecond);
  ASSERT_TRUE(ingestor_->EnforceRetention().ok());
  const int64_t want = ingestor_->stats().fleet_batches_deleted;
  ASSERT_GT(want, 150);

  store_ = std::make_unique<storage::MemoryEventStore>();
  seq_ = 0;
  Restart();
  SendFourHours();
  ingestor_->set_retention(2 * 3600 * core::kNanosPerSecond);
  store_->FailMetaWrite(1, absl::UnavailableError("disk on fire"));
  ASSERT_TRUE(ingestor_->EnforceRetention().ok());
  EXPECT_EQ(ingestor_->stats().heartbeat_retention_errors, 1);
  EXPECT_EQ(ingestor_->stats().fleet_batches_deleted, 0);
  EXPECT_EQ(ingestor_->stats().fleet_state_errors, 0);
  ASSERT_TRUE(ingestor_->EnforceRetention().ok());
  EXPECT_EQ(ingestor_->stats().fleet_batches_deleted, want);
  EXPECT_EQ(ingestor_->stats().heartbeat_retention_errors, 1);
  EXPECT_EQ(ingestor_->stats().retirement_errors, 0);
}

// Maintenance counters exact under failures (1): a heartbeat deletion that
// fails after its retention mark was written (here the deletion itself) counts
// one failure and no batch. The next check deletes them again although no newer
// record is due, and counts them once; a check after that, and a restart, count
// none again; a later horizon counts only the batches it adds.
TEST_F(HeartbeatRetentionTest, BatchesDeletedAfterAFailureAreCountedOnce) {
  SendFourHours();
  constexpr int64_t kTwoHours = 2 * 3600 * core::kNanosPerSecond;
  ingestor_->set_retention(kTwoHours);  // the horizon is 13:00
  store_->FailNextFleetDelete(absl::UnavailableError("disk on fire"));
  ASSERT_TRUE(ingestor_->EnforceRetention().ok());
  EXPECT_EQ(ingestor_->stats().heartbeat_retention_errors, 1);
  EXPECT_EQ(ingestor_->stats().fleet_batches_deleted, 0);
  EXPECT_EQ(StoredBeats(), 3 * 240);
  // Batch b > 1 holds minute b-1's beats (10:00 + b-1 min). The records
  // are at batches 1, 6, ..., 5k+1, the one at 5k+1 cut 5 min
  // (kFleetLateNanos) before its newest beat, minute 5k, and after batch
  // 5k-4 (its first later beat is minute 5k-4's, in batch 5k-3). The
  // newest cut at or before 13:00 (minute 180, k = 37) covers 1..181.
  ASSERT_TRUE(ingestor_->EnforceRetention().ok());
  EXPECT_EQ(ingestor_->stats().fleet_batches_deleted, 181);
  EXPECT_EQ(StoredBeats(), 3 * (241 - 181));
  EXPECT_EQ(ingestor_->stats().heartbeat_retention_errors, 1);
  ASSERT_TRUE(ingestor_->EnforceRetention().ok());
  EXPECT_EQ(ingestor_->stats().fleet_batches_deleted, 181);

  Restart([&] { ingestor_->set_retention(kTwoHours); });
  ASSERT_TRUE(ingestor_->EnforceRetention().ok());
  EXPECT_EQ(ingestor_->stats().fleet_batches_deleted, 0);
  clock_.Advance(10 * 60 * core::kNanosPerSecond);  // 13:10: k = 39
  ASSERT_TRUE(ingestor_->EnforceRetention().ok());
  EXPECT_EQ(ingestor_->stats().fleet_batches_deleted, 191 - 181);
  EXPECT_EQ(StoredBeats(), 3 * (241 - 191));
  EXPECT_EQ(ingestor_->stats().heartbeat_retention_errors, 0);
}

// Issue 12: a failed snapshot write of an ended job is counted; its events
// stay, so the restart replays them and stores the snapshot then.
TEST_F(IngestorTest, AFailedSnapshotWriteIsCountedAndTheRestartStoresIt) {
  const std::vector<v1::Event> events = JobEvents("a", R"(
10:00:00 {"job_submitted":{"chips":8,"workload":"TRAINING"}}
10:00:05 {"started":{}}
10:00:20 {"job_ended":{"outcome":"SUCCEEDED"}}
)");
  store_->FailNextSnapshotWrite(absl::UnavailableError("disk on fire"));
  Send(events, ++seq_);
  EXPECT_EQ(ingestor_->stats().snapshot_errors, 1);
  std::optional<storage::JobSnapshot> held;
  ASSERT_TRUE(store_->ReadSnapshot("a", &held).ok());
  EXPECT_FALSE(held.has_value());
  ExpectEqualReports(LiveReport(kAsOf), Replay(events, config_, kAsOf));
  Restart();
  ASSERT_TRUE(store_->ReadSnapshot("a", &held).ok());
  EXPECT_TRUE(held.has_value());
  EXPECT_EQ(ingestor_->stats().snapshot_errors, 0);
  ExpectEqualReports(LiveReport(kAsOf), Replay(events, config_, kAsOf));
}

// Heartbeats of 12 hosts a minute for an hour (8 chips each, two
// accelerators), as an agent that sends every heartbeat to every shard.
std::vector<v1::Event> Heartbeats() {
  std::vector<v1::Event> beats;
  const int64_t ten = T("2026-11-22T10:00:00Z") / core::kNanosPerSecond;
  for (int m = 0; m < 60; ++m) {
    for (int h = 0; h < 12; ++h) {
      v1::Event& e = beats.emplace_back();
      e.mutable_time()->set_seconds(ten + 60 * m + h);
      e.set_host(absl::StrCat("host-", h));
      e.mutable_heartbeat()->set_chips(8);
      e.mutable_heartbeat()->set_accelerator(h % 2 ? "tpu-v5p" : "h100");
    }
  }
  return beats;
}

// Issue 16: with --shard=I/N a shard stores and applies only the
// heartbeats of its own hosts (their capacity shard is I), even from an
// agent that sends each to every shard; the others are left out of the
// batch (neither accepted nor rejected) and counted. The N shards'
// capacities then add up exactly to one server's with every heartbeat.
TEST_F(IngestorTest, AShardKeepsOnlyItsHostsHeartbeatsAndTheyAddUp) {
  const std::vector<v1::Event> beats = Heartbeats();
  Send(beats, ++seq_);  // one server, no --shard: every heartbeat
  std::map<std::string, double> want, sum;
  const core::FleetReport whole = LiveReport(kAsOf);
  for (const auto& [a, t] : whole.segments.at("accelerator")) {
    want[a] = *t.capacity_chip_seconds;
  }
  int64_t stored_total = 0;
  for (size_t i = 0; i < 3; ++i) {
    storage::MemoryEventStore store;
    LiveState live(&config_, kLateness, &store);
    Ingestor shard(&store, &live, &clock_, codec::ValidationLimits());
    shard.set_shard(ShardPosition{i, 3});
    ASSERT_TRUE(shard.Recover().ok());
    v1::Batch batch;
    batch.set_agent_id("old-agent");
    batch.set_sequence(1);
    for (const v1::Event& e : beats) *batch.add_events() = e;
    absl::StatusOr<v1::Ack> ack = shard.Ingest(batch);
    ASSERT_TRUE(ack.ok()) << ack.status();
    EXPECT_EQ(ack->rejections_size(), 0);
    int64_t stored = 0;
    ASSERT_TRUE(store
                    .ScanHeartbeats([&](uint64_t, std::vector<v1::Event>* e) {
                      for (const v1::Event& b : *e) {
                        EXPECT_EQ(CapacityShardOf(b.host(), 3), i) << b.host();
                      }
                      stored += static_cast<int64_t>(e->size());
                      return absl::OkStatus();
                    })
                    .ok());
    EXPECT_GT(stored, 0) << "shard " << i;
    EXPECT_EQ(ack->accepted(), stored);
    EXPECT_EQ(shard.stats().other_shard_heartbeats,
              static_cast<int64_t>(beats.size()) - stored);
    stored_total += stored;
    absl::StatusOr<core::FleetReport> r = shard.Report(kAsOf, std::nullopt);
    ASSERT_TRUE(r.ok()) << r.status();
    for (const auto& [a, t] : r->segments.at("accelerator")) {
      sum[a] += t.capacity_chip_seconds.value_or(0);
    }
  }
  EXPECT_EQ(stored_total, static_cast<int64_t>(beats.size()));  // each once
  EXPECT_EQ(sum, want);                                         // exactly
}

// GoodputAgentSilent watches the agents' last stored heartbeat: an agent
// pipeline that sends only job events (its host's heartbeats go to another
// shard), or whose heartbeats this shard leaves out, has none.
TEST_F(IngestorTest, AnAgentsLastHeartbeatIsKeptOnlyIfOneWasStored) {
  const std::vector<v1::Event> beats = Heartbeats();
  ingestor_->set_shard(ShardPosition{0, 3});
  std::vector<v1::Event> own, others;
  for (const v1::Event& e : beats) {
    (CapacityShardOf(e.host(), 3) == 0 ? own : others).push_back(e);
  }
  ASSERT_FALSE(own.empty());
  clock_.Advance(core::kNanosPerSecond);
  Send({own[0]}, 1, "capacity-pipeline");
  Send({others[0]}, 1, "old-agent");
  Send(ParseEvents(Timeline(R"(
10:00:00 {"job_submitted":{"chips":8,"workload":"TRAINING"}}
)")),
       1, "job-pipeline");
  const IngestStats stats = ingestor_->stats();
  EXPECT_EQ(stats.agent_last_seen_ns.size(), 3u);
  EXPECT_EQ(stats.agent_last_heartbeat_ns,
            (std::map<std::string, int64_t>{
                {"capacity-pipeline", clock_.NowNanos()}}));
}

TEST_F(IngestorTest, EndedJobRecoversFromItsSnapshotAlone) {
  auto ended = ParseEvents(Timeline(R"(
10:00:00 {"job_submitted":{"chips":8,"workload":"TRAINING"}}
10:00:05 {"started":{}}
10:00:10 {"step":{"step":1}}
10:00:20 {"job_ended":{"outcome":"SUCCEEDED"}}
)"));
  Send(ended, 1);
  std::vector<storage::JobSnapshot> snapshots;
  ASSERT_TRUE(store_->ReadSnapshots(&snapshots).ok());
  ASSERT_EQ(snapshots.size(), 1u);
  EXPECT_EQ(snapshots[0].ended_ns, T("2026-11-22T10:00:20Z"));
  EXPECT_EQ(snapshots[0].report.state, core::JobStateKind::kEnded);
  core::FleetReport before = LiveReport(kAsOf);
  Restart();
  EXPECT_EQ(ingestor_->live_stats().applied, 0);  // no event replayed
  ExpectEqualReports(LiveReport(kAsOf), before);
  // As-ofs before its end replay the store, exactly.
  const int64_t mid = T("2026-11-22T10:00:12Z");
  ExpectEqualReports(LiveReport(mid), Replay(ended, config_, mid));
  // An event before the end still counts: the job is rebuilt from the
  // store and snapshotted again.
  auto late = ParseEvents(Timeline("10:00:15 {\"step\":{\"step\":2}}"));
  EXPECT_EQ(Send(late, 2).accepted(), 1u);
  ended.push_back(late[0]);
  ExpectEqualReports(LiveReport(kAsOf), Replay(ended, config_, kAsOf));
  Restart();
  ExpectEqualReports(LiveReport(kAsOf), Replay(ended, config_, kAsOf));
}

TEST_F(IngestorTest, StaleSnapshotIsIgnored) {
  auto events = ParseEvents(Timeline(R"(
10:00:00 {"started":{}}
10:00:20 {"job_ended":{"outcome":"SUCCEEDED"}}
)"));
  Send(events, 1);
  // A batch stored after the snapshot, as if the server died between the
  // batch's write and the snapshot's.
  storage::BatchWrite write;
  write.agent_id = "agent-1";
  write.sequence = 2;
  write.accepted = ParseEvents(Timeline("10:00:10 {\"step\":{\"step\":1}}"));
  ASSERT_TRUE(store_->Write(write).ok());
  events.push_back(write.accepted[0]);
  Restart();
  ExpectEqualReports(LiveReport(kAsOf), Replay(events, config_, kAsOf));
}

// --- Running jobs' state records (storage/KEY_LAYOUT.md, job_states).

// One job stepping every second from 10:00:00, `steps` steps.
std::vector<v1::Event> SteppingJob(const std::string& job, int steps) {
  std::string text = "10:00:00 {\"started\":{}}\n";
  for (int i = 1; i <= steps; ++i) {
    text += absl::StrFormat("10:%02d:%02d {\"step\":{\"step\":%d}}\n", i / 60,
                            i % 60, i);
  }
  return JobEvents(job, text);
}

TEST_F(IngestorTest, RestartRestoresEachJobFromItsNewestStatePlusTail) {
  auto events = RandomFleet(21, 20, 80);
  SendAll(events, 40);
  core::FleetReport before = LiveReport(kAsOf);
  Restart();
  ExpectEqualReports(LiveReport(kAsOf), before);
  ExpectEqualReports(LiveReport(kAsOf), Replay(events, config_, kAsOf));
  const LiveState::Stats stats = ingestor_->live_stats();
  EXPECT_GT(stats.restores_from_state, 0);
  // Each job reads only what came after its newest record: fewer events
  // than a record's interval, plus one batch of its own.
  EXPECT_LT(stats.restored_events,
            stats.restores * (policy_.every_events + 40));
  EXPECT_LT(stats.restored_events, static_cast<int64_t>(events.size()) / 3);
  EXPECT_EQ(stats.apply_errors, 0);
}

TEST_F(IngestorTest, LateEventRestoresFromTheNewestStateBeforeIt) {
  auto events = SteppingJob("j", 120);
  SendAll(events, 10);
  const LiveState::Stats before = ingestor_->live_stats();
  EXPECT_GE(ingestor_->stats().states_written, 10);
  auto late = JobEvents("j", "10:01:35 {\"checkpoint\":{\"step\":95}}");
  Send(late, ++seq_);
  events.insert(events.end(), late.begin(), late.end());
  const LiveState::Stats after = ingestor_->live_stats();
  EXPECT_EQ(after.late_rebuilds - before.late_rebuilds, 1);
  EXPECT_EQ(after.restores_from_state - before.restores_from_state, 1);
  // From the newest record before 10:01:35 (records thin out with age):
  // the 26 events after it and some before it, not the job's 121.
  EXPECT_LE(after.restored_events - before.restored_events,
            40 + 2 * policy_.every_events);
  EXPECT_GT(after.stale_states, before.stale_states);  // the later records
  ExpectEqualReports(LiveReport(kAsOf), Replay(events, config_, kAsOf));
  Restart();
  ExpectEqualReports(LiveReport(kAsOf), Replay(events, config_, kAsOf));
  EXPECT_EQ(ingestor_->live_stats().apply_errors, 0);
}

// The storm of issue 12: every running job gets a late event; each is
// rebuilt from its own records and events, never the whole store.
TEST_F(IngestorTest, LateEventStormReadsOnlyEachJobsTail) {
  std::vector<v1::Event> events;
  for (int j = 0; j < 30; ++j) {
    auto job = SteppingJob(absl::StrCat("job-", j), 90);
    events.insert(events.end(), job.begin(), job.end());
  }
  std::vector<v1::Event> ordered = events;
  std::stable_sort(ordered.begin(), ordered.end(),
                   [](const v1::Event& a, const v1::Event& b) {
                     return core::EventTimeNanos(a) < core::EventTimeNanos(b);
                   });
  SendAll(ordered, 60);
  const LiveState::Stats before = ingestor_->live_stats();
  std::vector<v1::Event> late;
  for (int j = 0; j < 30; ++j) {
    auto e = JobEvents(absl::StrCat("job-", j),
                       "10:01:20 {\"checkpoint\":{\"step\":80}}");
    late.insert(late.end(), e.begin(), e.end());
  }
  SendAll(late, 7);
  SendAll(late, 7);  // the same again: queued jobs are rebuilt once
  events.insert(events.end(), late.begin(), late.end());
  events.insert(events.end(), late.begin(), late.end());
  // Each batch rebuilt about as many stored events as it carried (at least
  // one job): the rest wait in the queue instead of stalling ingest.
  const LiveState::Stats mid = ingestor_->live_stats();
  EXPECT_GT(mid.rebuilds_pending, 0);
  EXPECT_LE(mid.late_rebuilds - before.late_rebuilds, 10);
  // One queued job's report rebuilds that job alone, exactly.
  const core::FleetReport replay = Replay(events, config_, kAsOf);
  auto one = ingestor_->JobReport("job-29", kAsOf, std::nullopt);
  ASSERT_TRUE(one.ok() && one->has_value());
  for (const core::JobReport& j : replay.jobs) {
    if (j.job_id == "job-29") EXPECT_EQ((*one)->nanos, j.nanos);
  }
  EXPECT_EQ(ingestor_->live_stats().rebuilds_pending, mid.rebuilds_pending - 1);
  ExpectEqualReports(LiveReport(kAsOf), replay);
  const LiveState::Stats after = ingestor_->live_stats();  // after the report
  EXPECT_EQ(after.rebuilds_pending, 0);
  EXPECT_LE(after.late_rebuilds - before.late_rebuilds, 30 + 10);
  EXPECT_EQ(after.restores_from_state - before.restores_from_state,
            after.late_rebuilds - before.late_rebuilds);
  EXPECT_LE(after.restored_events - before.restored_events,
            40 * (10 + 2 + 2 * policy_.every_events));
}

TEST_F(IngestorTest, UnreadableOrStaleStatesAreSkipped) {
  auto events = SteppingJob("j", 60);
  SendAll(events, 10);
  internal::v1::StoredJobState torn;  // as if a record had been cut short
  torn.set_job_id("j");
  torn.set_through_batch(seq_);
  torn.set_tracker("\x0a\xff\xff not a tracker");
  torn.set_last_applied_ns(kAsOf);
  ASSERT_TRUE(store_->WriteJobStates({torn}, {}).ok());
  Restart();
  ExpectEqualReports(LiveReport(kAsOf), Replay(events, config_, kAsOf));
  EXPECT_EQ(ingestor_->live_stats().unreadable_states, 1);
  EXPECT_EQ(ingestor_->live_stats().restores_from_state, 1);
  Restart();  // the unreadable record was deleted
  EXPECT_EQ(ingestor_->live_stats().unreadable_states, 0);
}

// Reports the live state cannot answer start each job from a record.
TEST_F(IngestorTest, PastAndWindowedReportsStartFromStates) {
  auto events = RandomFleet(5, 15, 90);
  SendAll(events, 30);
  for (int64_t back : {1, 2, 4}) {
    const int64_t t = kAsOf - back * 3600 * core::kNanosPerSecond;
    core::Config windowed = config_;
    windowed.since_ns = t;
    StoreReplay past(store_.get(), config_, store_->LastBatchId(), nullptr);
    auto r = past.Report(t);
    ASSERT_TRUE(r.ok()) << r.status();
    ExpectEqualReports(*r, Replay(events, config_, t));
    StoreReplay window(store_.get(), windowed, store_->LastBatchId(), nullptr);
    r = window.Report(kAsOf);
    ASSERT_TRUE(r.ok()) << r.status();
    ExpectEqualReports(*r, Replay(events, windowed, kAsOf));
    EXPECT_GT(past.stats().from_state + window.stats().from_state, 0) << back;
  }
}

TEST_F(IngestorTest, CancelledReplayStops) {
  SendAll(RandomFleet(6, 5, 20), 30);
  StoreReplay replay(store_.get(), config_, store_->LastBatchId(),
                     [] { return true; });
  auto r = replay.Report(kAsOf - 3600 * core::kNanosPerSecond);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kCancelled);
  auto live = ingestor_->Report(kAsOf, kAsOf - 3600 * core::kNanosPerSecond,
                                [] { return true; });
  EXPECT_EQ(live.status().code(), absl::StatusCode::kCancelled);
}

class RetentionTest : public IngestorTest {
 protected:
  void SetUp() override {
    Send(JobEvents("old", R"(
10:00:00 {"job_submitted":{"chips":8,"workload":"TRAINING"}}
10:00:05 {"started":{}}
10:00:10 {"step":{"step":1}}
10:00:20 {"job_ended":{"outcome":"SUCCEEDED"}}
)"),
         ++seq_);
    Send(JobEvents("running", R"(
12:00:00 {"started":{}}
12:00:10 {"step":{"step":1}}
)"),
         ++seq_);
    before_ = LiveReport(kAsOf);
  }
  void Retain(int64_t hours) {
    ingestor_->set_retention(hours * 3600 * core::kNanosPerSecond);
    ASSERT_TRUE(ingestor_->EnforceRetention().ok());
  }
  std::vector<v1::Event> Stored(const std::string& job) {
    std::vector<v1::Event> out;
    EXPECT_TRUE(store_->ReadJob(job, 0, 1000, &out).ok());
    return out;
  }
  // A one-hour retention whose deletion of "old"'s events is cut short
  // (as by a kill after its snapshot, events_deleted, was stored).
  void CutOldsRetirementShort() {
    ingestor_->set_retention(3600 * core::kNanosPerSecond);
    store_->FailNextDelete(absl::UnavailableError("killed"));
    EXPECT_FALSE(ingestor_->EnforceRetention().ok());
  }
  // "old" leaves memory (grace 0), then a one-hour retention is set
  // (not yet checked).
  void EvictOldThenRetainAnHour() {
    ingestor_->set_ended_job_grace(0);
    ASSERT_TRUE(ingestor_->EvictEndedJobs().ok());
    ASSERT_EQ(ingestor_->stats().evicted_jobs, 1);
    ingestor_->set_retention(3600 * core::kNanosPerSecond);
  }
  core::FleetReport before_;
};

TEST_F(RetentionTest, KeepsEverythingWithinTheRetention) {
  Retain(6);  // "old" ended 5 h before the clock
  EXPECT_EQ(Stored("old").size(), 4u);
  EXPECT_EQ(ingestor_->stats().retired_jobs, 0);
}

TEST_F(RetentionTest, DeletesRawEventsButKeepsTheFinalReport) {
  Retain(1);
  EXPECT_EQ(ingestor_->stats().retired_jobs, 1);
  EXPECT_TRUE(Stored("old").empty());
  EXPECT_EQ(Stored("running").size(), 2u);
  ExpectEqualReports(LiveReport(kAsOf), before_);
  Restart();  // from the snapshot
  ingestor_->set_retention(3600 * core::kNanosPerSecond);
  ExpectEqualReports(LiveReport(kAsOf), before_);
  // Replays that do not cut the job still show it.
  const int64_t noon = T("2026-11-22T12:00:05Z");
  core::FleetReport at_noon = LiveReport(noon);
  ASSERT_EQ(at_noon.jobs.size(), 2u);
  EXPECT_EQ(at_noon.jobs[0].job_id, "old");
  EXPECT_EQ(at_noon.jobs[0].total_ns, 20'000'000'000);
  EXPECT_EQ(LiveReport(T("2026-11-22T09:00:00Z")).jobs.size(), 0u);
}

TEST_F(RetentionTest, ReportsThatNeedDeletedEventsAreRefused) {
  Retain(1);
  for (auto [as_of, since] : {std::pair<int64_t, std::optional<int64_t>>{
                                  T("2026-11-22T10:00:15Z"), std::nullopt},
                              {kAsOf, T("2026-11-22T10:00:15Z")}}) {
    auto r = ingestor_->Report(as_of, since);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition);
    EXPECT_THAT(std::string(r.status().message()),
                HasSubstr("job \"old\" ran from 2026-11-22T10:00:00Z to "
                          "2026-11-22T10:00:20Z and its raw events were "
                          "deleted by --retention"));
  }
  // A window that starts after the job's end leaves it out, exactly.
  auto r = ingestor_->Report(kAsOf, T("2026-11-22T11:00:00Z"));
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->jobs.size(), 1u);
  EXPECT_EQ(r->jobs[0].job_id, "running");
}

TEST_F(RetentionTest, EventsOfADeletedJobAreRejected) {
  Retain(1);
  v1::Ack ack =
      Send(JobEvents("old", "10:00:15 {\"step\":{\"step\":2}}"), ++seq_);
  ASSERT_EQ(ack.rejections_size(), 1);
  EXPECT_THAT(ack.rejections(0).reason(),
              HasSubstr("raw events were deleted by --retention"));
  ExpectEqualReports(LiveReport(kAsOf), before_);
}

// Issue 16 item 1: a failed write of an evicted job's retired snapshot
// (EvictJobs) deletes none of its events; the next check retires it once.
TEST_F(RetentionTest, AFailedWriteOfAnEvictedJobsRetirementDeletesNothing) {
  ASSERT_NO_FATAL_FAILURE(EvictOldThenRetainAnHour());
  store_->FailNextWrite(absl::UnavailableError("disk on fire"));
  EXPECT_EQ(ingestor_->EnforceRetention(),
            absl::UnavailableError("disk on fire"));
  EXPECT_EQ(ingestor_->stats().evicted_retirement_errors, 1);
  EXPECT_EQ(ingestor_->stats().retired_jobs, 0);
  EXPECT_EQ(Stored("old").size(), 4u);
  std::optional<storage::JobSnapshot> evicted;
  ASSERT_TRUE(store_->ReadEvictedSnapshot("old", &evicted).ok());
  ASSERT_TRUE(evicted.has_value());
  EXPECT_FALSE(evicted->events_deleted);
  ExpectEqualReports(LiveReport(kAsOf), before_);

  ASSERT_TRUE(ingestor_->EnforceRetention().ok());
  ASSERT_TRUE(ingestor_->EnforceRetention().ok());
  EXPECT_EQ(ingestor_->stats().retired_jobs, 1);
  EXPECT_EQ(ingestor_->stats().evicted_retirement_errors, 1);
  EXPECT_EQ(ingestor_->stats().retirement_errors, 0);
  EXPECT_TRUE(Stored("old").empty());
  EXPECT_EQ(live_->evicted_totals().jobs(), 1);
  ExpectEqualReports(LiveReport(kAsOf), before_);
}

// The same for a job held in memory: a failed deletion leaves it unretired
// in memory, so the next check retires it again; a kill between the two
// writes (its snapshot stored with events_deleted, its events not deleted)
// is finished by the recovery.
TEST_F(RetentionTest, AFailedDeletionOfAHeldJobsEventsIsRetried) {
  ingestor_->set_retention(3600 * core::kNanosPerSecond);
  store_->FailNextDelete(absl::UnavailableError("disk on fire"));
  EXPECT_EQ(ingestor_->EnforceRetention(),
            absl::UnavailableError("disk on fire"));
  EXPECT_EQ(Stored("old").size(), 4u);
  EXPECT_EQ(ingestor_->stats().retirement_errors, 1);
  ASSERT_TRUE(ingestor_->EnforceRetention().ok());
  EXPECT_TRUE(Stored("old").empty());
  EXPECT_EQ(ingestor_->stats().retired_jobs, 1);
  EXPECT_EQ(ingestor_->stats().retirement_errors, 1);
  EXPECT_EQ(ingestor_->stats().evicted_retirement_errors, 0);
  ExpectEqualReports(LiveReport(kAsOf), before_);
}

TEST_F(RetentionTest, AHeldJobsDeletionCutShortByAKillIsFinishedAtRestart) {
  ingestor_->set_retention(3600 * core::kNanosPerSecond);
  store_->FailNextDelete(absl::UnavailableError("killed"));
  EXPECT_FALSE(ingestor_->EnforceRetention().ok());
  std::optional<storage::JobSnapshot> held;
  ASSERT_TRUE(store_->ReadSnapshot("old", &held).ok());
  ASSERT_TRUE(held.has_value());
  EXPECT_TRUE(held->events_deleted);
  Restart();  // no retention set: the recovery alone deletes them
  EXPECT_TRUE(Stored("old").empty());
  EXPECT_EQ(Stored("running").size(), 2u);
  ExpectEqualReports(LiveReport(kAsOf), before_);
}

// Issue 12: the same when the recovery's deletion fails too: the start goes
// on and counts it (op retire), and no eviction runs before the deletion
// is done, as an evicted retired job is indexed nowhere and nothing would
// find its events again.
TEST_F(RetentionTest, AFailedDeletionAtTheRestartIsDoneBeforeAnyEviction) {
  ingestor_->set_retention(3600 * core::kNanosPerSecond);
  store_->FailNextDelete(absl::UnavailableError("killed"));
  EXPECT_FALSE(ingestor_->EnforceRetention().ok());
  store_->FailNextDelete(absl::UnavailableError("disk on fire"));
  Restart();  // no retention set, no grace
  EXPECT_EQ(ingestor_->stats().retirement_errors, 1);
  EXPECT_EQ(Stored("old").size(), 4u);
  ingestor_->set_ended_job_grace(0);  // "old" is due
  store_->FailNextDelete(absl::UnavailableError("disk on fire"));
  EXPECT_EQ(ingestor_->EvictEndedJobs(),
            absl::UnavailableError("disk on fire"));
  EXPECT_EQ(ingestor_->stats().retirement_errors, 2);
  EXPECT_EQ(ingestor_->stats().eviction_errors, 0);
  EXPECT_EQ(ingestor_->stats().evicted_jobs, 0);
  EXPECT_EQ(Stored("old").size(), 4u);
  ExpectEqualReports(LiveReport(kAsOf), before_);

  ASSERT_TRUE(ingestor_->EvictEndedJobs().ok());
  EXPECT_TRUE(Stored("old").empty());
  EXPECT_EQ(ingestor_->stats().evicted_jobs, 1);
  EXPECT_EQ(ingestor_->stats().retirement_errors, 2);
  ExpectEqualReports(LiveReport(kAsOf), before_);
  Restart();
  EXPECT_TRUE(Stored("old").empty());
  EXPECT_EQ(Stored("running").size(), 2u);
  ExpectEqualReports(LiveReport(kAsOf), before_);
}

// Maintenance counters exact under failures (2): one increment of a maintenance
// failure counter is one failed attempt. A recovery whose deletion of a
// cut-short retirement fails tries it once (its eviction, which would try it
// first again, waits for the next check), with a grace set too: one failure,
// one count. Each later check that fails counts once more; the first that
// succeeds deletes the events and evicts the job.
TEST_F(RetentionTest, ARecoveryCountsItsFailedLeftoverDeletionOnce) {
  CutOldsRetirementShort();
  store_->FailNextDeletes(2, absl::UnavailableError("disk on fire"));
  Restart([&] { ingestor_->set_ended_job_grace(0); });  // "old" is due
  EXPECT_EQ(ingestor_->stats().retirement_errors, 1);
  EXPECT_EQ(ingestor_->stats().eviction_errors, 0);
  EXPECT_EQ(ingestor_->stats().evicted_jobs, 0);
  EXPECT_EQ(Stored("old").size(), 4u);
  EXPECT_EQ(ingestor_->EvictEndedJobs(),
            absl::UnavailableError("disk on fire"));
  EXPECT_EQ(ingestor_->stats().retirement_errors, 2);
  EXPECT_EQ(ingestor_->stats().evicted_jobs, 0);
  ASSERT_TRUE(ingestor_->EvictEndedJobs().ok());
  EXPECT_EQ(ingestor_->stats().retirement_errors, 2);
  EXPECT_EQ(ingestor_->stats().evicted_jobs, 1);
  EXPECT_TRUE(Stored("old").empty());
  ExpectEqualReports(LiveReport(kAsOf), before_);
}

// Without --ended_job_grace (no eviction check to try it first), a failed
// deletion of a cut-short retirement is tried again by the first batch
// 10 s after the failure: one count per failed try, then the events go.
TEST_F(RetentionTest, ALeftoverDeletionIsRetriedWithoutAGrace) {
  CutOldsRetirementShort();
  store_->FailNextDeletes(2, absl::UnavailableError("disk on fire"));
  Restart();  // no retention, no grace
  EXPECT_EQ(ingestor_->stats().retirement_errors, 1);
  auto step = [&](int n) {
    Send(JobEvents("running",
                   absl::StrFormat(R"(12:00:%02d {"step":{"step":%d}})", 10 + n,
                                   1 + n)),
         ++seq_);
  };
  step(1);  // within 10 s of the failure: not tried
  EXPECT_EQ(ingestor_->stats().retirement_errors, 1);
  clock_.Advance(10 * core::kNanosPerSecond);
  step(2);  // tried, fails
  EXPECT_EQ(ingestor_->stats().retirement_errors, 2);
  EXPECT_EQ(Stored("old").size(), 4u);
  clock_.Advance(10 * core::kNanosPerSecond);
  step(3);  // tried, done
  EXPECT_EQ(ingestor_->stats().retirement_errors, 2);
  EXPECT_TRUE(Stored("old").empty());
  clock_.Advance(10 * core::kNanosPerSecond);
  step(4);  // nothing left to try
  EXPECT_EQ(ingestor_->stats().retirement_errors, 2);
}

// Maintenance counters exact under failures (3): a leftover deletion (a
// retirement cut short whose deletion at the restart failed too) of a job that
// an import replaced since (another instance's partition snapshot) is dropped,
// not done: the imported job's state record and its events after the import
// stay, through the next check and a restart.
TEST_F(RetentionTest, ALeftoverDeletionOfAJobAnImportReplacedIsDropped) {
  CutOldsRetirementShort();
  store_->FailNextDelete(absl::UnavailableError("disk on fire"));
  Restart();  // no retention, no grace: "old"'s deletion is left to do
  ASSERT_EQ(ingestor_->stats().retirement_errors, 1);

  storage::MemoryEventStore other_store;
  LiveState other_live(&config_, kLateness, &other_store);
  Ingestor other(&other_store, &other_live, &clock_, codec::ValidationLimits());
  ASSERT_TRUE(other.Recover().ok());
  v1::Batch batch;  // another "old", running, in partition 0
  batch.set_agent_id("partition-0");
  batch.set_sequence(1);
  for (const v1::Event& e : JobEvents("old", R"(
13:00:00 {"job_submitted":{"chips":8,"workload":"TRAINING"}}
13:00:05 {"started":{}}
)")) {
    *batch.add_events() = e;
  }
  ASSERT_TRUE(other.Ingest(batch).ok());
  absl::StatusOr<storage::JobImport> import = other.ExportJobs(
      "partition-0", [](const std::string& id) { return id == "old"; });
  ASSERT_TRUE(import.ok()) << import.status();
  ASSERT_EQ(import->states.size(), 1u);
  ASSERT_TRUE(ingestor_->ImportJobs(*std::move(import)).ok());
  Send(JobEvents("old", R"(13:00:10 {"step":{"step":1}})"), ++seq_);

  ingestor_->set_ended_job_grace(0);
  ASSERT_TRUE(ingestor_->EvictEndedJobs().ok());  // tries the leftovers
  EXPECT_EQ(Stored("old").size(), 1u);
  EXPECT_EQ(ingestor_->stats().retirement_errors, 1);
  const core::FleetReport want = LiveReport(kAsOf);
  auto old =
      std::find_if(want.jobs.begin(), want.jobs.end(),
                   [](const core::JobReport& j) { return j.job_id == "old"; });
  ASSERT_NE(old, want.jobs.end());
  EXPECT_EQ(old->last_step, std::optional<int64_t>(1));
  Restart();
  ExpectEqualReports(LiveReport(kAsOf), want);
}

// A failed deletion of an evicted job's events, after its retired snapshot
// (events_deleted) was stored, is retried at the next check: the job stays
// in the end-time index until its events are gone, and its report and the
// evicted totals do not change.
TEST_F(RetentionTest, AFailedDeletionOfAnEvictedJobsEventsIsRetried) {
  ASSERT_NO_FATAL_FAILURE(EvictOldThenRetainAnHour());
  store_->FailNextDelete(absl::UnavailableError("disk on fire"));
  EXPECT_EQ(ingestor_->EnforceRetention(),
            absl::UnavailableError("disk on fire"));
  std::optional<storage::JobSnapshot> evicted;
  ASSERT_TRUE(store_->ReadEvictedSnapshot("old", &evicted).ok());
  ASSERT_TRUE(evicted.has_value());
  EXPECT_TRUE(evicted->events_deleted);
  EXPECT_EQ(Stored("old").size(), 4u);
  EXPECT_EQ(ingestor_->stats().retired_jobs, 0);
  EXPECT_EQ(ingestor_->stats().evicted_retirement_errors, 1);

  ASSERT_TRUE(ingestor_->EnforceRetention().ok());
  EXPECT_TRUE(Stored("old").empty());
  EXPECT_EQ(Stored("running").size(), 2u);
  EXPECT_EQ(ingestor_->stats().retired_jobs, 1);
  EXPECT_EQ(ingestor_->stats().evicted_retirement_errors, 1);
  ASSERT_TRUE(ingestor_->EnforceRetention().ok());  // done: not again
  EXPECT_EQ(ingestor_->stats().retired_jobs, 1);
  EXPECT_EQ(live_->evicted_totals().jobs(), 1);
  ExpectEqualReports(LiveReport(kAsOf), before_);
  Restart();
  ExpectEqualReports(LiveReport(kAsOf), before_);
}

TEST_F(RetentionTest, IngestAppliesTheRetentionAsTheClockMoves) {
  ingestor_->set_retention(6 * 3600 * core::kNanosPerSecond);
  Send(JobEvents("running", "12:00:20 {\"step\":{\"step\":2}}"), ++seq_);
  EXPECT_EQ(Stored("old").size(), 4u);
  clock_.Advance(2 * 3600 * core::kNanosPerSecond);
  Send(JobEvents("running", "12:00:30 {\"step\":{\"step\":3}}"), ++seq_);
  EXPECT_TRUE(Stored("old").empty());
}

}  // namespace
}  // namespace goodput::server
