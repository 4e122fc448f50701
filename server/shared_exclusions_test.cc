// HOSTS and FLEET exclusions in goodputd (issue 14 item 3), through the
// Ingestor against a real RocksDB in a temp dir: the hand-computed
// timeline of core's HostAndFleetExclusionsReachEveryJobTheyCover and
// HostAndFleetExclusionsLeaveCapacityOut, sent on time and late (after
// the jobs applied events past them: a rebuild, rule 8), equal live,
// after a restart, and for an as-of in the past (a store replay).
#include "server/shared_exclusions.h"

#include <unistd.h>

#include <filesystem>

#include "core/testing/expect.h"
#include "core/testing/timeline.h"
#include "gtest/gtest.h"
#include "server/ingestor.h"
#include "storage/rocksdb_event_store.h"

namespace goodput::server {
namespace {

using ::goodput::core::testing::ExpectEqualReports;
using ::goodput::core::testing::ExpectSeconds;
using ::goodput::core::testing::Job;
using ::goodput::core::testing::ParseEvents;
using ::goodput::core::testing::Replay;
using ::goodput::core::testing::T;
using ::goodput::core::testing::Timeline;

constexpr int64_t kLateness = 5'000'000'000;
constexpr char kAsOf[] = "2026-11-22T10:01:00Z";

// Jobs a (h1), b and e (h2), c (h3, first event 10:00:40), d (a JOB
// exclusion alone), and the hosts' heartbeats; INIT throughout.
constexpr char kJobs[] = R"(
09:59:00 {"job_id":"e","exclusion":{"until":"2026-11-22T10:00:05Z","reason":"r","scope":"JOB"}}
09:59:30 {"job_id":"d","exclusion":{"until":"2026-11-22T10:00:05Z","reason":"r","scope":"JOB"}}
10:00:00 {"host":"h1","heartbeat":{"chips":4,"accelerator":"tpu-v5p"}}
10:00:00 {"host":"h2","heartbeat":{"chips":4,"accelerator":"tpu-v5p"}}
10:00:00 {"job_id":"a","host":"h1","job_submitted":{"chips":4,"accelerator":"tpu-v5p","workload":"TRAINING"}}
10:00:00 {"job_id":"a","host":"h1","started":{}}
10:00:00 {"job_id":"a","host":"h1","activity":{"kind":"INIT"}}
10:00:00 {"job_id":"b","host":"h2","job_submitted":{"chips":4,"accelerator":"tpu-v5p","workload":"TRAINING"}}
10:00:00 {"job_id":"b","host":"h2","started":{}}
10:00:00 {"job_id":"b","host":"h2","activity":{"kind":"INIT"}}
10:00:00 {"job_id":"e","host":"h2","job_submitted":{"chips":4,"accelerator":"tpu-v5p","workload":"TRAINING"}}
10:00:00 {"job_id":"e","host":"h2","started":{}}
10:00:00 {"job_id":"e","host":"h2","activity":{"kind":"INIT"}}
10:00:40 {"job_id":"c","host":"h3","job_submitted":{"chips":4,"accelerator":"tpu-v5p","workload":"TRAINING"}}
10:00:40 {"job_id":"c","host":"h3","started":{}}
10:00:40 {"job_id":"c","host":"h3","activity":{"kind":"INIT"}}
10:00:40 {"host":"h1","heartbeat":{"chips":4,"accelerator":"tpu-v5p"}}
10:00:40 {"host":"h2","heartbeat":{"chips":4,"accelerator":"tpu-v5p"}}
)";

// Every job reports INIT again at 10:00:45 and 10:00:55: with a 5 s
// lateness, each has applied its 10:00:45 event (past both exclusions).
constexpr char kMore[] = R"(
10:00:45 {"job_id":"a","host":"h1","activity":{"kind":"INIT"}}
10:00:45 {"job_id":"b","host":"h2","activity":{"kind":"INIT"}}
10:00:45 {"job_id":"c","host":"h3","activity":{"kind":"INIT"}}
10:00:45 {"job_id":"e","host":"h2","activity":{"kind":"INIT"}}
10:00:55 {"job_id":"a","host":"h1","activity":{"kind":"INIT"}}
10:00:55 {"job_id":"b","host":"h2","activity":{"kind":"INIT"}}
10:00:55 {"job_id":"c","host":"h3","activity":{"kind":"INIT"}}
10:00:55 {"job_id":"e","host":"h2","activity":{"kind":"INIT"}}
)";

constexpr char kExclusions[] = R"(
10:00:10 {"host":"ops","exclusion":{"until":"2026-11-22T10:00:20Z","reason":"rack","scope":"HOSTS","hosts":["h1","h9"]}}
10:00:30 {"exclusion":{"until":"2026-11-22T10:00:50Z","reason":"incident","scope":"FLEET"}}
)";

class SharedExclusionsTest : public ::testing::Test {
 protected:
  SharedExclusionsTest() {
    char tmpl[] = "/tmp/goodput-shared-excl-XXXXXX";
    EXPECT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    Restart();
  }
  ~SharedExclusionsTest() override {
    Stop();
    std::filesystem::remove_all(dir_);
  }
  void Stop() {
    ingestor_.reset();
    live_.reset();
    store_.reset();
  }
  // A new server process over the same RocksDB directory.
  void Restart() {
    Stop();
    auto store = storage::RocksDbEventStore::Open(dir_, {});
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = *std::move(store);
    live_ = std::make_unique<LiveState>(&config_, kLateness, store_.get());
    ingestor_ = std::make_unique<Ingestor>(store_.get(), live_.get(), &clock_,
                                           codec::ValidationLimits());
    ASSERT_TRUE(ingestor_->Recover().ok());
  }
  void Send(const std::string& timeline) {
    std::vector<v1::Event> events = ParseEvents(Timeline(timeline));
    v1::Batch batch;
    batch.set_agent_id("agent-1");
    batch.set_sequence(++seq_);
    for (const v1::Event& e : events) *batch.add_events() = e;
    auto ack = ingestor_->Ingest(batch);
    ASSERT_TRUE(ack.ok()) << ack.status();
    EXPECT_EQ(ack->accepted(), events.size()) << ack->ShortDebugString();
    all_.insert(all_.end(), events.begin(), events.end());
  }
  core::FleetReport Report(const std::string& as_of) {
    auto r = ingestor_->Report(T(as_of), std::nullopt);
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? *r : core::FleetReport();
  }
  // The hand-computed answer (core/job_tracker_exclusion_test.cc): a (on
  // h1) the host's 10 s and the fleet's 20 s; b the fleet's 20 s; c (first
  // event inside the fleet exclusion) 40 -> 50; e its own 5 s and the
  // fleet's 20; d no job. Capacity: h1 4 x 30, h2 4 x 40.
  void ExpectHandComputed(const core::FleetReport& r) {
    ASSERT_EQ(r.jobs.size(), 4u);
    ExpectSeconds(Job(r, "a"), 60, {{"init", 30}, {"excluded", 30}});
    ExpectSeconds(Job(r, "b"), 60, {{"init", 40}, {"excluded", 20}});
    ExpectSeconds(Job(r, "c"), 20, {{"init", 10}, {"excluded", 10}});
    ExpectSeconds(Job(r, "e"), 60, {{"init", 35}, {"excluded", 25}});
    ASSERT_TRUE(r.fleet.capacity_chip_seconds.has_value());
    EXPECT_DOUBLE_EQ(*r.fleet.capacity_chip_seconds, 4 * 30 + 4 * 40);
    ExpectEqualReports(r, Replay(all_, config_, T(kAsOf)));
  }

  std::string dir_;
  core::Config config_;
  FakeClock clock_{T(kAsOf)};
  std::unique_ptr<storage::RocksDbEventStore> store_;
  std::unique_ptr<LiveState> live_;
  std::unique_ptr<Ingestor> ingestor_;
  std::vector<v1::Event> all_;
  uint64_t seq_ = 0;
};

TEST_F(SharedExclusionsTest, OnTimeHostAndFleetExclusionsEqualReplay) {
  Send(std::string(kJobs) + kExclusions);
  ExpectHandComputed(Report(kAsOf));
  EXPECT_EQ(ingestor_->live_stats().late_rebuilds, 0);
  auto one = ingestor_->JobReport("c", T(kAsOf), std::nullopt);
  ASSERT_TRUE(one.ok() && one->has_value());
  ExpectSeconds(**one, 20, {{"init", 10}, {"excluded", 10}});
  Restart();
  ExpectHandComputed(Report(kAsOf));
  // As of the past: the store replayed, with the exclusions.
  ExpectEqualReports(Report("2026-11-22T10:00:35Z"),
                     Replay(all_, config_, T("2026-11-22T10:00:35Z")));
}

TEST_F(SharedExclusionsTest, LateHostAndFleetExclusionsRebuildWhatTheyCover) {
  Send(kJobs);
  Send(kMore);
  Send(kExclusions);  // before events a, b, c and e applied: rewrites them
  EXPECT_EQ(ingestor_->live_stats().late_rebuilds +
                ingestor_->live_stats().rebuilds_pending,
            4);  // not d (no event but its own exclusion)
  ExpectHandComputed(Report(kAsOf));
  EXPECT_EQ(ingestor_->live_stats().late_rebuilds, 4);
  Restart();
  ExpectHandComputed(Report(kAsOf));
}

// A late HOSTS exclusion of a host no job ran on rebuilds nothing; after
// a restart (from the jobs' state records) a later one still reaches the
// jobs of its host, and one of the fleet reaches a job held as its final
// snapshot.
TEST_F(SharedExclusionsTest, AfterARestartExclusionsStillFindTheirJobs) {
  Send(kJobs);
  Send(kMore);
  Send(R"(
10:00:10 {"exclusion":{"until":"2026-11-22T10:00:20Z","reason":"r","scope":"HOSTS","hosts":["h9"]}}
)");
  EXPECT_EQ(ingestor_->live_stats().late_rebuilds, 0);
  ASSERT_TRUE(ingestor_->SaveAllStates().ok());
  Restart();
  EXPECT_GT(ingestor_->live_stats().restores_from_state, 0);
  Send(kExclusions);
  ExpectHandComputed(Report(kAsOf));
  Restart();
  ExpectHandComputed(Report(kAsOf));
}

TEST(SharedExclusions, AFirstEventTakesTheExclusionsItStartsInside) {
  SharedExclusions shared;
  for (const v1::Event& e : ParseEvents(Timeline(kExclusions))) {
    shared.Add(e, 1);
  }
  core::Config config;
  core::JobTracker tracker("c", &config);
  std::set<std::string> hosts;
  const auto events = ParseEvents(Timeline(R"(
10:00:40 {"job_id":"c","host":"h1","started":{}}
10:00:45 {"job_id":"c","host":"h1","activity":{"kind":"INIT"}}
)"));
  ASSERT_TRUE(shared.Apply(events[0], &hosts, &tracker).ok());
  ASSERT_TRUE(shared.Apply(events[1], &hosts, &tracker).ok());
  // The fleet's 40 -> 50, not h1's 10 -> 20 (over before c began).
  EXPECT_EQ(tracker.Report(T("2026-11-22T10:01:00Z"))
                .nanos[core::Index(core::Category::kExcluded)],
            10 * core::kNanosPerSecond);
  EXPECT_EQ(hosts, std::set<std::string>{"h1"});
  // Stored in batch 1: stale for a record through batch 0 that applied
  // past 10:00:10 (FLEET: whatever its hosts), not through batch 1.
  EXPECT_TRUE(shared.StaleAfter(0, T("2026-11-22T10:00:31Z"), &hosts));
  EXPECT_FALSE(shared.StaleAfter(1, T("2026-11-22T10:00:31Z"), &hosts));
  const std::set<std::string> h2 = {"h2"};
  EXPECT_FALSE(shared.StaleAfter(0, T("2026-11-22T10:00:30Z"), &h2));
  EXPECT_TRUE(shared.StaleAfter(0, T("2026-11-22T10:00:30Z"), &hosts));
}

}  // namespace
}  // namespace goodput::server
