// Issue 12: a job's --since edges are stored in its state records, so a
// restart keeps them. Over a real RocksDB in a temp dir and a FakeClock, a
// random fleet of running jobs is ingested by a server that is killed (no
// state saved on the way out) and restarted on the same directory twice,
// and by an uninterrupted one; every --since as of now within the grid's
// horizon is then answered live by both, with the same report.
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "core/event_order.h"
#include "core/testing/expect.h"
#include "core/testing/random_fleet.h"
#include "gtest/gtest.h"
#include "proto/storage.pb.h"
#include "server/ingestor.h"
#include "storage/memory_event_store.h"
#include "storage/rocksdb_event_store.h"

namespace goodput::server {
namespace {

constexpr int64_t kLateness = 5 * core::kNanosPerSecond;
constexpr int64_t kNow = 1795400000LL * core::kNanosPerSecond;
constexpr int64_t kMinute = 60 * core::kNanosPerSecond;

// One goodputd process's domain objects over `store`.
struct Server {
  Server(storage::EventStore* store, const core::Config* config,
         FakeClock* clock, LiveState::StatePolicy policy)
      : live(config, kLateness, store),
        ingestor(store, &live, clock, codec::ValidationLimits()) {
    ingestor.set_state_policy(policy);
  }
  LiveState live;
  Ingestor ingestor;
};

class WindowsRecoveryTest : public ::testing::Test {
 protected:
  WindowsRecoveryTest() {
    char tmpl[] = "/tmp/goodput-since-XXXXXX";
    EXPECT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    uninterrupted_ =
        std::make_unique<Server>(&memory_, &config_, &clock_, policy_);
    EXPECT_TRUE(uninterrupted_->ingestor.Recover().ok());
  }
  ~WindowsRecoveryTest() override {
    restarted_.reset();
    store_.reset();
    std::filesystem::remove_all(dir_);
  }

  // A new process on the RocksDB directory, as after a kill -9 (nothing
  // saved on the way out): jobs come back from their newest state record
  // plus the events after it.
  void Restart() {
    restarted_.reset();
    store_.reset();
    auto store = storage::RocksDbEventStore::Open(dir_, {});
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = *std::move(store);
    restarted_ =
        std::make_unique<Server>(store_.get(), &config_, &clock_, policy_);
    ASSERT_TRUE(restarted_->ingestor.Recover().ok());
  }

  // Sends events [from, to) to both servers in batches of 23.
  void Send(const std::vector<v1::Event>& events, size_t from, size_t to) {
    for (size_t i = from; i < to; i += 23) {
      v1::Batch batch;
      batch.set_agent_id("agent-1");
      batch.set_sequence(++seq_);
      for (size_t j = i; j < std::min(to, i + 23); ++j) {
        *batch.add_events() = events[j];
      }
      ASSERT_TRUE(uninterrupted_->ingestor.Ingest(batch).ok());
      ASSERT_TRUE(restarted_->ingestor.Ingest(batch).ok());
    }
  }

  // `server`'s --since report (snapped to the grid), expected live.
  core::FleetReport Window(Server* server, int64_t as_of, int64_t since) {
    const Ingestor::WindowStats before = server->ingestor.window_stats();
    auto r = server->ingestor.Report(as_of, since, nullptr,
                                     core::FleetSegments::kAll,
                                     /*exact_since=*/false);
    EXPECT_TRUE(r.ok()) << r.status();
    const Ingestor::WindowStats after = server->ingestor.window_stats();
    EXPECT_EQ(after.live, before.live + 1);
    EXPECT_EQ(after.replayed, before.replayed);
    return r.ok() ? *std::move(r) : core::FleetReport();
  }

  std::string dir_;
  core::Config config_;
  FakeClock clock_{kNow};
  LiveState::StatePolicy policy_{
      .every_events = 7, .every_ns = 600 * core::kNanosPerSecond, .keep = 4};
  storage::MemoryEventStore memory_;
  std::unique_ptr<Server> uninterrupted_;
  std::unique_ptr<storage::RocksDbEventStore> store_;
  std::unique_ptr<Server> restarted_;
  uint64_t seq_ = 0;
};

// The jobs of a random fleet, all running (no job_ended: an ended job is
// held as its final report after a restart, and a window that cuts it is
// replayed), in time order.
std::vector<v1::Event> RunningFleet(uint32_t seed) {
  std::vector<v1::Event> events;
  for (v1::Event& e : core::testing::RandomFleet(seed, 20, 60)) {
    if (!e.has_job_ended()) events.push_back(std::move(e));
  }
  std::stable_sort(events.begin(), events.end(),
                   [](const v1::Event& a, const v1::Event& b) {
                     return core::EventTimeNanos(a) < core::EventTimeNanos(b);
                   });
  return events;
}

TEST_F(WindowsRecoveryTest, SinceAfterARestartIsLiveAndEqualsUninterrupted) {
  const std::vector<v1::Event> events = RunningFleet(7);
  Restart();
  Send(events, 0, events.size() * 3 / 5);
  Restart();
  EXPECT_GT(restarted_->live.stats().restores_from_state, 0);
  Send(events, events.size() * 3 / 5, events.size());
  Restart();
  const LiveState::Stats& stats = restarted_->live.stats();
  EXPECT_GT(stats.restores_from_state, 0);
  EXPECT_EQ(stats.unreadable_windows, 0);
  int64_t first = std::numeric_limits<int64_t>::max(), newest = 0;
  for (const v1::Event& e : events) {
    first = std::min(first, core::EventTimeNanos(e));
    newest = std::max(newest, core::EventTimeNanos(e));
  }
  const int64_t as_of = newest + kMinute;
  int windows = 0;
  for (int64_t since = first - 5 * kMinute; since < as_of; since += kMinute) {
    SCOPED_TRACE(core::FormatTimeNanos(since));
    core::FleetReport got = Window(restarted_.get(), as_of, since);
    core::FleetReport want = Window(uninterrupted_.get(), as_of, since);
    EXPECT_EQ(got.since_ns, want.since_ns);
    core::testing::ExpectEqualReports(got, want);
    windows += got.jobs.empty() ? 0 : 1;
  }
  EXPECT_GT(windows, 60);
}

// A record written before the edges were stored (no `windows` field) still
// loads: the job keeps no edge before the record's cursor, and a window
// that starts there reads the job from the store, with the same answer.
TEST_F(WindowsRecoveryTest, RecordsWithoutEdgesStillLoad) {
  const std::vector<v1::Event> events = RunningFleet(8);
  Restart();
  Send(events, 0, events.size());
  ASSERT_TRUE(restarted_->ingestor.SaveAllStates().ok());
  // Strip the edges from every record, as an older goodputd wrote them.
  std::vector<internal::v1::StoredJobState> states;
  ASSERT_TRUE(
      store_
          ->ScanJobsForRestore([&](const std::string&, auto* stored, auto*) {
            for (internal::v1::StoredJobState& s : *stored) {
              s.clear_windows();
              states.push_back(s);
            }
            return absl::OkStatus();
          })
          .ok());
  ASSERT_FALSE(states.empty());
  ASSERT_TRUE(store_->WriteJobStates(states, {}).ok());
  Restart();
  EXPECT_EQ(restarted_->live.stats().restores_from_state,
            static_cast<int64_t>(uninterrupted_->live.job_count()));
  EXPECT_EQ(restarted_->live.stats().unreadable_windows, 0);
  int64_t newest = 0;
  for (const v1::Event& e : events) {
    newest = std::max(newest, core::EventTimeNanos(e));
  }
  const int64_t as_of = newest + kMinute;
  const int64_t since = newest - 30 * kMinute;
  auto got = restarted_->ingestor.Report(as_of, since, nullptr,
                                         core::FleetSegments::kAll, false);
  ASSERT_TRUE(got.ok()) << got.status();
  // Live, with each job that keeps no edge read alone from the store.
  EXPECT_EQ(restarted_->ingestor.window_stats().live, 1);
  EXPECT_EQ(restarted_->ingestor.window_stats().replayed, 0);
  EXPECT_GT(restarted_->ingestor.window_stats().store_jobs, 0);
  core::FleetReport want = Window(uninterrupted_.get(), as_of, since);
  ASSERT_EQ(got->jobs.size(), want.jobs.size());
  for (size_t i = 0; i < want.jobs.size(); ++i) {
    EXPECT_EQ(got->jobs[i].nanos, want.jobs[i].nanos) << want.jobs[i].job_id;
  }
}

}  // namespace
}  // namespace goodput::server
