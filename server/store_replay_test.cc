// StoreReplay over a real RocksDB in a temp dir: a report as of a past time
// equals the replay of every stored event (late ones included), and reads
// only the stored batches a question as of that time needs (issue 12: a
// past as-of costs what the jobs did until then, not the store since).
#include "server/store_replay.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/event_order.h"
#include "core/testing/expect.h"
#include "core/testing/random_fleet.h"
#include "core/testing/timeline.h"
#include "gtest/gtest.h"
#include "server/ingestor.h"
#include "storage/rocksdb_event_store.h"

namespace goodput::server {
namespace {

using ::goodput::core::testing::ExpectEqualReports;
using ::goodput::core::testing::ParseEvents;
using ::goodput::core::testing::RandomFleet;
using ::goodput::core::testing::Replay;
using ::goodput::core::testing::Timeline;

constexpr int64_t kLateness = 5 * core::kNanosPerSecond;

class StoreReplayTest : public ::testing::Test {
 protected:
  StoreReplayTest() {
    char tmpl[] = "/tmp/goodput-store-replay-XXXXXX";
    EXPECT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    auto store = storage::RocksDbEventStore::Open(dir_, {});
    EXPECT_TRUE(store.ok()) << store.status();
    store_ = *std::move(store);
  }
  ~StoreReplayTest() override {
    store_.reset();
    std::filesystem::remove_all(dir_);
  }

  std::string dir_;
  core::Config config_;
  std::unique_ptr<storage::RocksDbEventStore> store_;
};

// Hand-computed: one job, one step a second in ten batches of one event.
// As of the third step, without a state record, the replay reads the three
// batches at or before it and leaves out the seven later ones unparsed.
TEST_F(StoreReplayTest, APastAsOfReadsOnlyTheBatchesAtOrBeforeIt) {
  std::vector<v1::Event> events;
  for (int i = 1; i <= 10; ++i) {
    storage::BatchWrite b;
    b.agent_id = "a";
    b.sequence = static_cast<uint64_t>(i);
    b.accepted = ParseEvents(Timeline(absl::StrCat(
        "10:00:0", i - 1, " {\"job_id\":\"j\",\"step\":{\"step\":", i, "}}")));
    events.push_back(b.accepted[0]);
    ASSERT_TRUE(store_->Write(b).ok());
  }
  const int64_t as_of = core::EventTimeNanos(events[2]);
  StoreReplay replay(store_.get(), config_, store_->LastBatchId(), nullptr);
  const int64_t visited = store_->job_values_visited();
  absl::StatusOr<core::FleetReport> got = replay.Report(as_of);
  ASSERT_TRUE(got.ok()) << got.status();
  ExpectEqualReports(*got, Replay(events, config_, as_of));
  EXPECT_EQ(replay.stats().events_read, 3);
  // The walk stops at the fourth batch: its events are later, and no later
  // batch holds an older event (none has a job_late key).
  EXPECT_EQ(store_->job_values_visited() - visited, 4);
  StoreReplay one(store_.get(), config_, store_->LastBatchId(), nullptr);
  absl::StatusOr<std::optional<core::JobReport>> job = one.Job("j", as_of);
  ASSERT_TRUE(job.ok()) << job.status();
  ASSERT_TRUE(job->has_value());
  EXPECT_EQ(one.stats().events_read, 3);
}

// Random fleets, sent with disorder and some events far later than the
// lateness (in batches after their job's state records), through a server
// that records states often and restarts once: every past as-of equals
// the replay.
TEST_F(StoreReplayTest, PastAsOfEqualsReplayOverRandomFleetsWithLateEvents) {
  for (uint32_t seed = 1; seed <= 3; ++seed) {
    store_.reset();
    std::filesystem::remove_all(dir_);
    auto store = storage::RocksDbEventStore::Open(dir_, {});
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = *std::move(store);
    std::vector<v1::Event> events = RandomFleet(seed, 12, 60);
    int64_t first = events.front().time().seconds();
    int64_t last = first;
    for (const v1::Event& e : events) {
      first = std::min<int64_t>(first, e.time().seconds());
      last = std::max<int64_t>(last, e.time().seconds());
    }
    FakeClock clock((last + 3600) * core::kNanosPerSecond);
    std::unique_ptr<LiveState> live;
    std::unique_ptr<Ingestor> ingestor;
    // A new process on the store: it forgets the jobs' high-water marks
    // and reads them back from their newest values.
    auto start = [&] {
      ingestor.reset();
      live.reset();
      store_.reset();
      auto reopened = storage::RocksDbEventStore::Open(dir_, {});
      ASSERT_TRUE(reopened.ok()) << reopened.status();
      store_ = *std::move(reopened);
      live = std::make_unique<LiveState>(&config_, kLateness, store_.get());
      ingestor = std::make_unique<Ingestor>(store_.get(), live.get(), &clock,
                                            codec::ValidationLimits());
      ingestor->set_state_policy({.every_events = 5,
                                  .every_ns = 300 * core::kNanosPerSecond,
                                  .keep = 6});
      ASSERT_TRUE(ingestor->Recover().ok());
    };
    start();
    std::vector<v1::Event> sent, heartbeats;
    for (const v1::Event& e : events) {
      (e.has_heartbeat() ? heartbeats : sent).push_back(e);
    }
    std::mt19937 rng(seed);
    for (int k = 0; k < 20; ++k) {  // far late: moved back up to 400 places
      const size_t i = rng() % (sent.size() / 2);
      std::rotate(sent.begin() + i, sent.begin() + i + 1,
                  sent.begin() + std::min(sent.size(), i + 400));
    }
    sent.insert(sent.end(), heartbeats.begin(), heartbeats.end());
    for (size_t i = 0; i < sent.size(); i += 17) {
      if (i == 17 * 20) start();
      v1::Batch batch;
      batch.set_agent_id("agent-1");
      batch.set_sequence(i / 17 + 1);
      for (size_t j = i; j < std::min(sent.size(), i + 17); ++j) {
        *batch.add_events() = sent[j];
      }
      ASSERT_TRUE(ingestor->Ingest(batch).ok());
    }
    for (int part = 1; part <= 4; ++part) {
      const int64_t as_of =
          (first + (last - first) * part / 5) * core::kNanosPerSecond;
      absl::StatusOr<core::FleetReport> got =
          ingestor->Report(as_of, std::nullopt);
      ASSERT_TRUE(got.ok()) << got.status();
      SCOPED_TRACE(absl::StrCat("seed ", seed, " part ", part));
      ExpectEqualReports(*got, Replay(events, config_, as_of));
    }
  }
}

}  // namespace
}  // namespace goodput::server
