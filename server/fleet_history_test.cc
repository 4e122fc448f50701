// FleetHistory over a real RocksDB in a temp dir and over the in-memory
// store: a past as-of's capacity from the spaced fleet state records equals
// the scan of every stored batch to the last bit, reads only the batches
// after the record up to what the as-of needs, skips stale and torn
// records, and retention deletes the heartbeats a record covers.
#include "server/fleet_history.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/event_order.h"
#include "core/testing/timeline.h"
#include "gtest/gtest.h"
#include "server/testing/stored_heartbeats.h"
#include "storage/memory_event_store.h"
#include "storage/rocksdb_event_store.h"

namespace goodput::server {
namespace {

using ::goodput::core::testing::ParseEvents;
using ::goodput::core::testing::Timeline;
using internal::v1::StoredFleetState;

constexpr int64_t kMinute = 60 * core::kNanosPerSecond;

class FleetHistoryTest : public ::testing::TestWithParam<bool> {
 protected:
  FleetHistoryTest() {
    char tmpl[] = "/tmp/goodput-fleet-history-XXXXXX";
    EXPECT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    Fresh();
  }
  ~FleetHistoryTest() override {
    store_.reset();
    std::filesystem::remove_all(dir_);
  }

  // An empty store of the kind under test (true: RocksDB).
  void Fresh() {
    store_.reset();
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    shared_.Clear();
    newest_beat_ = std::numeric_limits<int64_t>::min();
    memory_ = nullptr;
    if (!GetParam()) {
      auto memory = std::make_unique<storage::MemoryEventStore>();
      memory_ = memory.get();
      store_ = std::move(memory);
      return;
    }
    auto store = storage::RocksDbEventStore::Open(dir_, {});
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = *std::move(store);
  }

  // Stores `events` as one batch, keeping what LiveState::FleetState
  // would record of them (newest heartbeat, exclusions with their batch).
  void Write(std::vector<v1::Event> events) {
    storage::BatchWrite b;
    b.agent_id = "a";
    b.sequence = ++sequence_;
    b.accepted = std::move(events);
    auto id = store_->Write(b);
    ASSERT_TRUE(id.ok()) << id.status();
    for (const v1::Event& e : b.accepted) {
      if (e.has_heartbeat()) {
        newest_beat_ = std::max(newest_beat_, core::EventTimeNanos(e));
      } else if (SharedExclusions::IsShared(e)) {
        auto* x = shared_.add_shared();
        x->set_batch(*id);
        *x->mutable_event() = e;
      }
    }
  }

  // Writes a spaced record through the newest batch.
  void Record() {
    StoredFleetState live = shared_;
    live.set_version(1);
    live.set_through_batch(store_->LastBatchId());
    live.set_newest_beat_ns(newest_beat_);
    FleetHistory history(store_.get(), &config_);
    ASSERT_TRUE(history.Load(store_->LastBatchId()).ok());
    ASSERT_TRUE(history.Record(live).ok());
  }

  // Heartbeats of "h" and "g" each minute from 10:00 for two hours, a
  // batch a minute, and a record after every 10th (cut 10:04, ..., 11:54).
  void WriteTwoHours();
  int64_t StoredBeats() { return testing::StoredHeartbeats(store_.get()); }

  std::map<std::string, double> Want(const core::Config& config,
                                     uint64_t through, int64_t as_of) {
    auto want =
        FleetHistory::FullScanCapacity(store_.get(), config, through, as_of);
    EXPECT_TRUE(want.ok()) << want.status();
    return want.ok() ? *want : std::map<std::string, double>();
  }

  std::string dir_;
  core::Config config_;
  std::unique_ptr<storage::EventStore> store_;
  storage::MemoryEventStore* memory_ = nullptr;  // store_ if in memory
  uint64_t sequence_ = 0;
  StoredFleetState shared_;  // the exclusions stored so far
  int64_t newest_beat_ = 0;
};

v1::Event Beat(int64_t t, const std::string& host, int chips) {
  v1::Event e;
  e.mutable_time()->set_seconds(t / core::kNanosPerSecond);
  e.mutable_time()->set_nanos(static_cast<int32_t>(t % core::kNanosPerSecond));
  e.set_host(host);
  e.mutable_heartbeat()->set_chips(chips);
  e.mutable_heartbeat()->set_accelerator(host == "h0" ? "h100" : "tpu-v5p");
  return e;
}

void FleetHistoryTest::WriteTwoHours() {
  const int64_t ten = core::testing::T("2026-11-22T10:00:00Z");
  for (int m = 0; m < 120; ++m) {
    Write({Beat(ten + m * kMinute, "h", 8), Beat(ten + m * kMinute, "g", 4)});
    if (m % 10 == 9) Record();
  }
}

v1::Event Exclusion(int64_t start, int64_t until, const std::string& host) {
  v1::Event e;
  e.mutable_time()->set_seconds(start / core::kNanosPerSecond);
  e.mutable_time()->set_nanos(
      static_cast<int32_t>(start % core::kNanosPerSecond));
  auto* x = e.mutable_exclusion();
  x->mutable_until()->set_seconds(until / core::kNanosPerSecond);
  x->mutable_until()->set_nanos(
      static_cast<int32_t>(until % core::kNanosPerSecond));
  x->set_reason("maintenance");
  x->set_scope(host.empty() ? v1::Exclusion::FLEET : v1::Exclusion::HOSTS);
  if (!host.empty()) x->add_hosts(host);
  return e;
}

// Hand-computed: host h (8 chips) beats every minute 10:00..10:59, one
// batch each; a FLEET exclusion 10:10-10:12 comes in batch 5. A record
// after batch 30 (newest beat 10:29) holds the capacity as of its cut,
// 10:24. As of 10:26:30: 26.5 min of 8 chips less the 2 excluded =
// 8 * 1470 s = 11760 chip-s, read from the record plus batches 26 (the
// first with a beat after 10:24) to 33 (its beat, 10:32, is 5 min past
// the as-of: the scan stops). A heartbeat of host g (4 chips) at 10:20
// stored last makes the record stale: the answer comes from the start and
// adds g's 5 min (its timeout): 12960.
TEST_P(FleetHistoryTest, APastAsOfStartsFromTheRecordBeforeIt) {
  const int64_t ten = core::testing::T("2026-11-22T10:00:00Z");
  for (int m = 0; m < 60; ++m) {
    std::vector<v1::Event> batch = {Beat(ten + m * kMinute, "h", 8)};
    if (m == 4)
      batch.push_back(Exclusion(ten + 10 * kMinute, ten + 12 * kMinute, ""));
    Write(batch);
    if (m == 29) Record();
  }
  const int64_t as_of = ten + 26 * kMinute + 30 * core::kNanosPerSecond;
  FleetHistory history(store_.get(), &config_);
  ASSERT_TRUE(history.Load(store_->LastBatchId()).ok());
  ASSERT_EQ(history.records().size(), 1u);
  EXPECT_EQ(history.records()[0].cut_ns(), ten + 24 * kMinute);
  EXPECT_EQ(history.records()[0].cut_after_batch(), 25u);
  auto got = history.Capacity(as_of);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(*got, (std::map<std::string, double>{{"tpu-v5p", 11760.0}}));
  EXPECT_EQ(*got, Want(config_, store_->LastBatchId(), as_of));
  EXPECT_TRUE(history.stats().from_record);
  // The memory store has no marks: it reads every later batch.
  EXPECT_EQ(history.stats().batches_read, GetParam() ? 8 : 35);

  Write({Beat(ten + 20 * kMinute, "g", 4)});
  FleetHistory after(store_.get(), &config_);
  ASSERT_TRUE(after.Load(store_->LastBatchId()).ok());
  got = after.Capacity(as_of);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(*got, (std::map<std::string, double>{{"tpu-v5p", 12960.0}}));
  EXPECT_EQ(*got, Want(config_, store_->LastBatchId(), as_of));
  EXPECT_FALSE(after.stats().from_record);
  EXPECT_EQ(after.stats().records_skipped, 1);
}

// Random fleets: hosts beat at random intervals, some heartbeats and
// exclusions arrive late (a few beyond storage::kFleetLateNanos), in
// batches of random size, with records every few batches. Every capacity
// as of a random time, through a random batch, with and without a
// window, equals the full scan to the last bit.
TEST_P(FleetHistoryTest, EqualsTheFullScanOverRandomFleets) {
  int from_record = 0, skipped = 0;
  for (uint32_t seed = 1; seed <= 6; ++seed) {
    SCOPED_TRACE(seed);
    Fresh();
    std::mt19937 rng(seed);
    const int64_t start = core::testing::T("2026-11-22T10:00:00Z");
    std::vector<v1::Event> events;
    for (int h = 0; h < 4; ++h) {
      for (int64_t t = start + rng() % 60 * core::kNanosPerSecond;
           t < start + 240 * kMinute;
           t += (20 + rng() % 300) * core::kNanosPerSecond) {
        events.push_back(Beat(t, "h" + std::to_string(h), 1 + rng() % 16));
      }
    }
    for (int i = 0; i < 12; ++i) {
      const int64_t s =
          start + static_cast<int64_t>(rng() % 14400) * core::kNanosPerSecond;
      const int64_t u = s + (1 + rng() % 1200) * core::kNanosPerSecond;
      events.push_back(Exclusion(
          s, u, rng() % 3 == 0 ? "" : "h" + std::to_string(rng() % 5)));
    }
    std::stable_sort(events.begin(), events.end(),
                     [](const v1::Event& a, const v1::Event& b) {
                       return core::EventTimeNanos(a) < core::EventTimeNanos(b);
                     });
    for (size_t i = 0; i + 1 < events.size(); ++i) {  // late ones
      if (rng() % 10 != 0) continue;
      const size_t far = rng() % 4 == 0 ? 150 : 8;
      std::rotate(events.begin() + i, events.begin() + i + 1,
                  events.begin() + std::min(events.size(), i + far));
    }
    for (size_t i = 0, n = 0; i < events.size(); ++n) {
      const size_t end = std::min(events.size(), i + 1 + rng() % 6);
      Write({events.begin() + i, events.begin() + end});
      i = end;
      if (n % 7 == 6) Record();
    }
    for (int q = 0; q < 40; ++q) {
      const uint64_t through = 1 + rng() % store_->LastBatchId();
      const int64_t as_of =
          start + static_cast<int64_t>(rng() % 15000) * core::kNanosPerSecond;
      core::Config config = config_;
      if (q % 4 == 3)
        config.since_ns =
            as_of - static_cast<int64_t>(rng() % 7200) * core::kNanosPerSecond;
      SCOPED_TRACE(absl::StrCat("through ", through, " as_of ", as_of));
      FleetHistory history(store_.get(), &config);
      ASSERT_TRUE(history.Load(through).ok());
      auto got = history.Capacity(as_of);
      ASSERT_TRUE(got.ok()) << got.status();
      EXPECT_EQ(*got, Want(config, through, as_of));
      from_record += history.stats().from_record;
      skipped += history.stats().records_skipped > 0;
    }
  }
  EXPECT_GT(from_record, 60);
  EXPECT_GT(skipped, 0);
}

// A torn record is skipped (an older one or the full scan answers), and a
// record is never read for a question through a batch before it.
TEST_P(FleetHistoryTest, ATornRecordIsSkipped) {
  const int64_t ten = core::testing::T("2026-11-22T10:00:00Z");
  for (int m = 0; m < 40; ++m) {
    Write({Beat(ten + m * kMinute, "h", 8)});
    if (m % 10 == 9) Record();
  }
  std::vector<std::string> names;
  ASSERT_TRUE(store_
                  ->ScanMeta(FleetHistory::kRecordPrefix,
                             [&](const std::string& name, const std::string&) {
                               names.push_back(name);
                               return absl::OkStatus();
                             })
                  .ok());
  ASSERT_EQ(names.size(), 4u);
  ASSERT_TRUE(store_->WriteMeta(names[3], "torn").ok());
  const int64_t as_of = ten + 36 * kMinute;
  FleetHistory history(store_.get(), &config_);
  ASSERT_TRUE(history.Load(store_->LastBatchId()).ok());
  EXPECT_EQ(history.stats().records_skipped, 1);
  ASSERT_EQ(history.records().size(), 3u);
  auto got = history.Capacity(as_of);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(*got, Want(config_, store_->LastBatchId(), as_of));
  EXPECT_TRUE(history.stats().from_record);
  // A record whose capacity does not load is skipped too.
  StoredFleetState bad = history.records()[2];
  bad.set_cut_capacity("\x08\x09");  // version 9
  ASSERT_TRUE(store_->WriteMeta(names[2], bad.SerializeAsString()).ok());
  FleetHistory again(store_.get(), &config_);
  ASSERT_TRUE(again.Load(store_->LastBatchId()).ok());
  got = again.Capacity(as_of);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(*got, Want(config_, store_->LastBatchId(), as_of));
  EXPECT_EQ(again.stats().records_skipped, 2);
}

// Retention: the heartbeats that the newest record at or before the
// horizon covers are deleted with the records before it; a question after
// its cut is answered as before, one before it is refused naming as_of.
TEST_P(FleetHistoryTest, RetentionDeletesTheHeartbeatsARecordCovers) {
  const int64_t ten = core::testing::T("2026-11-22T10:00:00Z");
  WriteTwoHours();
  const uint64_t last = store_->LastBatchId();
  const int64_t late = ten + 100 * kMinute;
  const auto want_late = Want(config_, last, late);
  const auto want_cut = Want(config_, last, ten + 64 * kMinute);
  FleetHistory history(store_.get(), &config_);
  ASSERT_TRUE(history.Load(last).ok());
  // Records are cut at 10:04, 10:14, ..., 11:54 (one each 10 min: all
  // kept). At 11:10 the one cut at 11:04 (after batch 70) covers batches
  // 1..65 (its first beat after 11:04 is in batch 66).
  auto deleted = history.DeleteBefore(ten + 70 * kMinute, /*done_through=*/0);
  ASSERT_TRUE(deleted.ok()) << deleted.status();
  EXPECT_EQ(*deleted, 65u);
  EXPECT_EQ(history.deleted_through(), 65u);
  ASSERT_EQ(history.records().size(), 6u);  // 11:04 to 11:54
  EXPECT_EQ(history.records().front().cut_ns(), ten + 64 * kMinute);
  EXPECT_EQ(StoredBeats(), 2 * (120 - 65));
  FleetHistory after(store_.get(), &config_);
  ASSERT_TRUE(after.Load(last).ok());
  auto got = after.Capacity(late);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(*got, want_late);
  got = after.Capacity(ten + 64 * kMinute);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(*got, want_cut);
  got = after.Capacity(ten + 60 * kMinute);
  EXPECT_EQ(got.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(got.status().message().find("as_of"), std::string::npos);
  // Deleting again at the same horizon does nothing.
  auto again = after.DeleteBefore(ten + 70 * kMinute, /*done_through=*/65);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(*again, 65u);
}

// Maintenance counters exact under failures (1): a deletion that fails after
// the retention mark is written leaves every heartbeat (readers already go by
// the mark). A later call whose caller saw no deletion succeed (done_through 0,
// before the mark) deletes them again though no newer record is due, with the
// records before the kept one, and says through which batch; one whose
// caller saw it succeed does not ask the store.
TEST_P(FleetHistoryTest, ADeletionThatFailedAfterTheMarkIsRedone) {
  if (memory_ == nullptr) GTEST_SKIP() << "the failure knob is in memory";
  const int64_t ten = core::testing::T("2026-11-22T10:00:00Z");
  WriteTwoHours();
  const uint64_t last = store_->LastBatchId();
  FleetHistory history(store_.get(), &config_);
  ASSERT_TRUE(history.Load(last).ok());
  memory_->FailNextFleetDelete(absl::UnavailableError("disk on fire"));
  EXPECT_EQ(history.DeleteBefore(ten + 70 * kMinute, 0).status(),
            absl::UnavailableError("disk on fire"));
  EXPECT_EQ(StoredBeats(), 2 * 120);

  FleetHistory retry(store_.get(), &config_);
  ASSERT_TRUE(retry.Load(last).ok());
  EXPECT_EQ(retry.deleted_through(), 65u);  // the mark (see above)
  ASSERT_EQ(retry.records().size(), 12u);
  auto redone = retry.DeleteBefore(ten + 70 * kMinute, /*done_through=*/0);
  ASSERT_TRUE(redone.ok()) << redone.status();
  EXPECT_EQ(*redone, 65u);
  EXPECT_EQ(StoredBeats(), 2 * (120 - 65));
  EXPECT_EQ(retry.records().size(), 6u);  // 11:04 to 11:54
  memory_->FailNextFleetDelete(absl::UnavailableError("disk on fire"));
  auto again = retry.DeleteBefore(ten + 70 * kMinute, /*done_through=*/65);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(*again, 65u);
}

INSTANTIATE_TEST_SUITE_P(Stores, FleetHistoryTest, ::testing::Bool(),
                         [](const auto& info) {
                           return info.param ? "RocksDb" : "Memory";
                         });

}  // namespace
}  // namespace goodput::server
