// One contract, two stores: every test runs against MemoryEventStore and
// against RocksDbEventStore in a fresh temporary directory.
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <iterator>
#include <limits>
#include <memory>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/event_order.h"
#include "core/testing/timeline.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "proto/storage.pb.h"
#include "rocksdb/db.h"
#include "storage/memory_event_store.h"
#include "storage/rocksdb_event_store.h"

namespace goodput::storage {
namespace {

using ::goodput::core::testing::ParseEvents;
using ::goodput::core::testing::Timeline;

// A snapshot of job `id`, valid through batch `through`.
JobSnapshot SnapshotOf(const std::string& id, uint64_t through) {
  JobSnapshot s;
  s.through_batch = through;
  s.ended_ns = 20;
  s.report.job_id = id;
  s.report.state = core::JobStateKind::kEnded;
  return s;
}

// The final snapshot of job `id` as retention stores it (DeleteJobEvents).
std::vector<JobSnapshot> Retired(const std::string& id) {
  JobSnapshot s = SnapshotOf(id, std::numeric_limits<uint64_t>::max());
  s.events_deleted = true;
  return {s};
}

std::string TempDir() {
  std::string tmpl = ::testing::TempDir() + "event_store_XXXXXX";
  return mkdtemp(tmpl.data());
}

class EventStoreTest : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    dir_ = TempDir();
    Reopen();
  }
  void TearDown() override {
    store_.reset();
    std::filesystem::remove_all(dir_);
  }
  virtual bool rocks() const { return GetParam(); }
  void Reopen() {
    store_.reset();
    if (!rocks()) {
      store_ = std::make_unique<MemoryEventStore>();
      return;
    }
    auto opened = RocksDbEventStore::Open(dir_, {});
    ASSERT_TRUE(opened.ok()) << opened.status();
    store_ = *std::move(opened);
  }
  uint64_t Write(const std::string& agent, uint64_t seq,
                 const std::string& timeline) {
    BatchWrite b;
    b.agent_id = agent;
    b.sequence = seq;
    b.accepted = ParseEvents(Timeline(timeline));
    auto id = store_->Write(b);
    EXPECT_TRUE(id.ok()) << id.status();
    return id.ok() ? *id : 0;
  }
  std::vector<std::string> JobSteps(const std::string& job, uint64_t through) {
    std::vector<v1::Event> events;
    EXPECT_TRUE(store_->ReadJob(job, 0, through, &events).ok());
    std::vector<std::string> out;
    for (const auto& e : events) {
      out.push_back(e.job_id() + ":" + std::to_string(e.step().step()));
    }
    return out;
  }

  std::string dir_;
  std::unique_ptr<EventStore> store_;
};

TEST_P(EventStoreTest, BatchesGetIncreasingIdsAndHeartbeatsScanInOrder) {
  EXPECT_EQ(store_->LastBatchId(), 0u);
  EXPECT_EQ(Write("a", 1, R"(
10:00:00 {"step":{"step":1}}
10:00:00 {"host":"h","heartbeat":{"chips":4}}
)"),
            1u);
  EXPECT_EQ(Write("a", 2, "10:00:01 {\"step\":{\"step\":2}}"), 2u);
  EXPECT_EQ(Write("a", 3, R"(
10:00:02 {"host":"h","heartbeat":{"chips":4}}
10:00:02 {"host":"g","heartbeat":{"chips":8}}
)"),
            3u);
  EXPECT_EQ(store_->LastBatchId(), 3u);
  std::vector<std::pair<uint64_t, size_t>> seen;
  ASSERT_TRUE(
      store_
          ->ScanHeartbeats([&](uint64_t id, std::vector<v1::Event>* events) {
            seen.emplace_back(id, events->size());
            return absl::OkStatus();
          })
          .ok());
  EXPECT_EQ(seen, (std::vector<std::pair<uint64_t, size_t>>{{1, 1}, {3, 2}}));
  // After batch 1 or 2 (a restart from the fleet state record through
  // it): batch 3 only; after the last batch: nothing.
  using Seen = std::vector<std::pair<uint64_t, size_t>>;
  for (uint64_t after : {1u, 2u, 3u}) {
    seen.clear();
    ASSERT_TRUE(store_
                    ->ScanHeartbeatsAfter(
                        after,
                        [&](uint64_t id, std::vector<v1::Event>* events) {
                          seen.emplace_back(id, events->size());
                          return absl::OkStatus();
                        })
                    .ok());
    const Seen want = after < 3 ? Seen{{3, 2}} : Seen{};
    EXPECT_EQ(seen, want) << after;
  }
}

TEST_P(EventStoreTest, ReadJobTakesTheBatchesAfterOneThroughAnother) {
  Write("a", 1, "10:00:00 {\"job_id\":\"a\",\"step\":{\"step\":1}}");
  Write("a", 2, "10:00:01 {\"job_id\":\"a\",\"step\":{\"step\":2}}");
  Write("a", 3, "10:00:02 {\"job_id\":\"b\",\"step\":{\"step\":1}}");
  Write("a", 4, "10:00:03 {\"job_id\":\"a\",\"step\":{\"step\":3}}");
  std::vector<v1::Event> events;
  ASSERT_TRUE(store_->ReadJob("a", 1, 4, &events).ok());
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].step().step(), 2);
  EXPECT_EQ(events[1].step().step(), 3);
  events.clear();
  ASSERT_TRUE(store_->ReadJob("a", 2, 3, &events).ok());
  EXPECT_TRUE(events.empty());
  ASSERT_TRUE(store_->ReadJob("a", 4, 4, &events).ok());
  EXPECT_TRUE(events.empty());
}

// A batch that interleaves jobs keeps each job's events in batch order,
// even at the same time (apply order breaks ties by arrival).
TEST_P(EventStoreTest, OneBatchKeepsEachJobsEventsInBatchOrder) {
  std::string timeline;
  for (int i = 1; i <= 100; ++i) {
    absl::StrAppend(&timeline, "10:00:00 {\"job_id\":\"", i % 2 ? "a" : "b",
                    "\",\"step\":{\"step\":", i, "}}\n");
  }
  Write("a", 1, timeline);
  std::vector<v1::Event> events;
  ASSERT_TRUE(store_->ReadJob("a", 0, 1, &events).ok());
  std::vector<int64_t> steps, want;
  for (const v1::Event& e : events) steps.push_back(e.step().step());
  for (int i = 1; i <= 100; i += 2) want.push_back(i);
  EXPECT_EQ(steps, want);
}

TEST_P(EventStoreTest, ListJobsNamesEachJobOnceInKeyOrder) {
  Write("a", 1, R"(
10:00:00 {"job_id":"b","step":{"step":1}}
10:00:00 {"job_id":"a\u0000b","step":{"step":9}}
10:00:01 {"job_id":"a","step":{"step":2}}
10:00:01 {"host":"h","heartbeat":{"chips":4}}
)");
  Write("a", 2, "10:00:02 {\"job_id\":\"b\",\"step\":{\"step\":2}}");
  std::vector<std::string> jobs;
  ASSERT_TRUE(store_
                  ->ListJobs([&](const std::string& id) {
                    jobs.push_back(id);
                    return absl::OkStatus();
                  })
                  .ok());
  std::sort(jobs.begin(), jobs.end());
  EXPECT_EQ(jobs, (std::vector<std::string>{"a", std::string("a\0b", 3), "b"}));
}

TEST_P(EventStoreTest, JobStatesRoundTripInBatchOrderAndAreRemoved) {
  std::vector<internal::v1::StoredJobState> put(3);
  for (int i = 0; i < 3; ++i) {
    put[i].set_job_id(i < 2 ? "j" : "k");
    put[i].set_through_batch(10 - i);
    put[i].set_tracker("t" + std::to_string(i));
    put[i].set_last_applied_ns(100 + i);
    put[i].add_buffer()->mutable_step()->set_step(i);
  }
  ASSERT_TRUE(store_->WriteJobStates(put, {}).ok());
  std::vector<internal::v1::StoredJobState> read;
  int unreadable = 0;
  ASSERT_TRUE(store_->ReadJobStates("j", &read, &unreadable).ok());
  ASSERT_EQ(read.size(), 2u);
  EXPECT_EQ(read[0].through_batch(), 9u);  // oldest first
  EXPECT_EQ(read[1].tracker(), "t0");
  EXPECT_EQ(read[0].buffer(0).step().step(), 1);
  EXPECT_EQ(unreadable, 0);
  ASSERT_TRUE(store_->WriteJobStates({}, {{"j", 10}}).ok());
  read.clear();
  ASSERT_TRUE(store_->ReadJobStates("j", &read, &unreadable).ok());
  ASSERT_EQ(read.size(), 1u);
  EXPECT_EQ(read[0].through_batch(), 9u);
  // Retention takes them.
  ASSERT_TRUE(store_->DeleteJobEvents(Retired("j")).ok());
  read.clear();
  ASSERT_TRUE(store_->ReadJobStates("j", &read, &unreadable).ok());
  EXPECT_TRUE(read.empty());
  ASSERT_TRUE(store_->ReadJobStates("k", &read, &unreadable).ok());
  EXPECT_EQ(read.size(), 1u);
}

TEST_P(EventStoreTest, ReadJobFindsOnlyThatJobThroughABatch) {
  Write("a", 1, R"(
10:00:00 {"job_id":"a","step":{"step":1}}
10:00:00 {"job_id":"a\u0000b","step":{"step":9}}
10:00:01 {"job_id":"a","step":{"step":2}}
)");
  Write("a", 2, R"(
10:00:02 {"job_id":"b","step":{"step":1}}
10:00:03 {"job_id":"a","step":{"step":3}}
10:00:04 {"host":"h","heartbeat":{"chips":1}}
)");
  EXPECT_EQ(JobSteps("a", 2), (std::vector<std::string>{"a:1", "a:2", "a:3"}));
  EXPECT_EQ(JobSteps("a", 1), (std::vector<std::string>{"a:1", "a:2"}));
  EXPECT_EQ(JobSteps("b", 1), std::vector<std::string>{});
  EXPECT_EQ(JobSteps(std::string("a\0b", 3), 9).size(), 1u);
}

TEST_P(EventStoreTest, AgentSequencesAndEmptyBatches) {
  Write("a", 3, "10:00:00 {\"started\":{}}");
  Write("b", 1, "");
  Write("a", 4, "");
  auto seqs = store_->AgentSequences();
  ASSERT_TRUE(seqs.ok());
  EXPECT_EQ(*seqs, (std::map<std::string, uint64_t>{{"a", 4}, {"b", 1}}));
}

// A group commit's write (the Ingestor's): several agents' sequences, dead
// letters at their own positions, and the events' wire bytes given.
TEST_P(EventStoreTest, AWriteOfSeveralAgentsBatchesKeepsEachOnesParts) {
  BatchWrite b;
  b.agent_id = "a";
  b.sequence = 3;
  b.more_agents = {{"b", 7}, {"c", 1}};
  b.accepted = ParseEvents(Timeline(R"(
10:00:00 {"job_id":"j","started":{}}
10:00:01 {"job_id":"k","started":{}}
10:00:02 {"job_id":"j","step":{"step":1}}
)"));
  std::vector<std::string> wires;
  for (const v1::Event& e : b.accepted) wires.push_back(e.SerializeAsString());
  // Stored as given: the wire of j's step says step 2.
  v1::Event two = b.accepted[2];
  two.mutable_step()->set_step(2);
  wires[2] = two.SerializeAsString();
  for (const std::string& w : wires) b.accepted_wire.push_back(w);
  for (const char* agent : {"b", "c"}) {
    v1::DeadLetter& d = b.dead_letters.emplace_back();
    d.set_agent_id(agent);
    d.set_index(0);
  }
  b.dead_letter_positions = {0, 5};
  ASSERT_TRUE(store_->Write(b).ok());
  auto sequences = store_->AgentSequences();
  ASSERT_TRUE(sequences.ok());
  EXPECT_EQ(*sequences,
            (std::map<std::string, uint64_t>{{"a", 3}, {"b", 7}, {"c", 1}}));
  std::vector<v1::DeadLetter> dead;
  uint64_t total = 0;
  ASSERT_TRUE(store_->DeadLetters(10, &dead, &total).ok());
  EXPECT_EQ(total, 2u);
  std::vector<v1::Event> j;
  ASSERT_TRUE(store_->ReadJob("j", 0, 1, &j).ok());
  ASSERT_EQ(j.size(), 2u);
  // The in-memory fake keeps the events themselves.
  EXPECT_EQ(j[1].step().step(), rocks() ? 2 : 1);
}

TEST_P(EventStoreTest, DeadLettersKeepReasonAndEvent) {
  BatchWrite b;
  b.agent_id = "a";
  b.sequence = 1;
  for (int i = 0; i < 3; ++i) {
    v1::DeadLetter& d = b.dead_letters.emplace_back();
    d.set_index(i);
    d.set_reason("step.step: must be >= 0, got -" + std::to_string(i));
    d.mutable_event()->mutable_step()->set_step(-i);
  }
  ASSERT_TRUE(store_->Write(b).ok());
  std::vector<v1::DeadLetter> out;
  uint64_t total = 0;
  ASSERT_TRUE(store_->DeadLetters(2, &out, &total).ok());
  EXPECT_EQ(total, 3u);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[1].reason(), "step.step: must be >= 0, got -1");
  EXPECT_EQ(out[1].event().step().step(), -1);
}

// RocksDB only: the fake lives in memory.
TEST_P(EventStoreTest, SnapshotsRoundTripAndReplaceTheJobsEarlierOne) {
  JobSnapshot s;
  s.through_batch = 3;
  s.first_event_ns = 10;
  s.ended_ns = 20;
  s.report.job_id = "j";
  s.report.chips = 8;
  s.report.labels = {{"team", "a"}};
  s.report.state = core::JobStateKind::kEnded;
  s.report.nanos[3] = 7;
  s.report.custom_nanos = {{"eval", 2}};
  s.report.last_step = 5;
  ASSERT_TRUE(store_->WriteSnapshots({s}).ok());
  s.through_batch = 4;
  ASSERT_TRUE(store_->WriteSnapshots({s}).ok());
  std::vector<JobSnapshot> read;
  ASSERT_TRUE(store_->ReadSnapshots(&read).ok());
  ASSERT_EQ(read.size(), 1u);
  EXPECT_EQ(read[0].through_batch, 4u);
  EXPECT_EQ(read[0].ended_ns, 20);
  EXPECT_EQ(read[0].report.labels, s.report.labels);
  EXPECT_EQ(read[0].report.nanos, s.report.nanos);
  EXPECT_EQ(read[0].report.custom_nanos, s.report.custom_nanos);
  EXPECT_EQ(read[0].report.last_step, 5);
  EXPECT_FALSE(read[0].report.last_checkpoint.has_value());
  EXPECT_EQ(read[0].report.state, core::JobStateKind::kEnded);
  std::optional<JobSnapshot> one;
  ASSERT_TRUE(store_->ReadSnapshot("j", &one).ok());
  ASSERT_TRUE(one.has_value());
  EXPECT_EQ(one->through_batch, 4u);
  EXPECT_EQ(one->report.nanos, s.report.nanos);
  ASSERT_TRUE(store_->ReadSnapshot("k", &one).ok());
  EXPECT_FALSE(one.has_value());
}

TEST_P(EventStoreTest, DeleteJobEventsKeepsOtherJobsInPlace) {
  Write("a", 1, R"(
10:00:00 {"job_id":"x","step":{"step":1}}
10:00:00 {"job_id":"y","step":{"step":1}}
10:00:01 {"host":"h","heartbeat":{"chips":4}}
)");
  Write("a", 2, "10:00:02 {\"job_id\":\"x\",\"step\":{\"step\":2}}");
  Write("a", 3, "10:00:03 {\"job_id\":\"x\",\"step\":{\"step\":3}}");
  ASSERT_TRUE(store_->DeleteJobEvents(Retired("x")).ok());
  EXPECT_TRUE(JobSteps("x", 10).empty());
  EXPECT_EQ(JobSteps("y", 10), std::vector<std::string>{"y:1"});
  std::vector<std::pair<uint64_t, size_t>> beats;
  ASSERT_TRUE(store_
                  ->ScanHeartbeats([&](uint64_t id, std::vector<v1::Event>* b) {
                    beats.emplace_back(id, b->size());
                    return absl::OkStatus();
                  })
                  .ok());
  EXPECT_EQ(beats, (std::vector<std::pair<uint64_t, size_t>>{{1, 1}}));
  if (rocks()) Reopen();  // batch ids go on after the deletion
  EXPECT_EQ(Write("a", 4, "10:00:04 {\"job_id\":\"y\",\"step\":{}}"), 4u);
}

TEST_P(EventStoreTest, ScanJobsForRestoreGivesEachJobItsStatesAndEvents) {
  Write("a", 1, R"(
10:00:00 {"job_id":"x","step":{"step":1}}
10:00:00 {"job_id":"y","step":{"step":1}}
)");
  Write("a", 2, "10:00:02 {\"job_id\":\"x\",\"step\":{\"step\":2}}");
  Write("a", 3, "10:00:03 {\"job_id\":\"x\",\"step\":{\"step\":3}}");
  std::vector<internal::v1::StoredJobState> put(3);
  put[0].set_job_id("x");
  put[0].set_through_batch(2);
  put[1].set_job_id("w");  // a job with states but no events: not visited
  put[1].set_through_batch(1);
  put[2].set_job_id("y");
  put[2].set_through_batch(1);
  ASSERT_TRUE(store_->WriteJobStates(put, {}).ok());
  std::vector<std::string> seen;
  ASSERT_TRUE(store_
                  ->ScanJobsForRestore(
                      [&](const std::string& job,
                          std::vector<internal::v1::StoredJobState>* states,
                          JobEventsReader* events) {
                        std::vector<v1::Event> tail, all;
                        EXPECT_TRUE(events->Read(2, 3, &tail).ok());
                        EXPECT_TRUE(events->Read(0, 3, &all).ok());
                        seen.push_back(absl::StrCat(job, ":", states->size(),
                                                    ":", tail.size(), ":",
                                                    all.size()));
                        return absl::OkStatus();
                      })
                  .ok());
  EXPECT_EQ(seen, (std::vector<std::string>{"x:1:1:3", "y:1:0:1"}));
}

// The jobs a scan visits, each with how many of its events it can read.
std::vector<std::string> Visited(
    const std::function<absl::Status(const EventStore::RestoreVisitor&)>&
        scan) {
  std::vector<std::string> seen;
  EXPECT_TRUE(scan([&](const std::string& job, auto*, JobEventsReader* events) {
                std::vector<v1::Event> all;
                EXPECT_TRUE(events->Read(0, 100, &all).ok());
                seen.push_back(absl::StrCat(job, ":", all.size()));
                return absl::OkStatus();
              }).ok());
  return seen;
}

// Layout 6 (storage/KEY_LAYOUT.md, "Evicted jobs"): an evicted job leaves
// the held snapshots and the restart's scan in the write that stores its
// evicted snapshot and the totals; reports still see all of it; a later
// event of the job brings it back into the restart's scan.
TEST_P(EventStoreTest, EvictJobsMovesTheJobOutOfTheRestartInOneWrite) {
  Write("a", 1, R"(
10:00:00 {"job_id":"x","step":{"step":1}}
10:00:00 {"job_id":"y","step":{"step":1}}
)");
  ASSERT_TRUE(
      store_->WriteSnapshots({SnapshotOf("x", 1), SnapshotOf("y", 1)}).ok());
  ASSERT_TRUE(store_->EvictJobs({SnapshotOf("x", 1)}, "totals").ok());
  if (rocks()) Reopen();
  std::vector<JobSnapshot> held, all;
  ASSERT_TRUE(store_->ReadHeldSnapshots(&held).ok());
  ASSERT_TRUE(store_->ReadSnapshots(&all).ok());
  ASSERT_EQ(held.size(), 1u);
  EXPECT_EQ(held[0].report.job_id, "y");
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].report.job_id, "x");
  std::optional<JobSnapshot> one;
  ASSERT_TRUE(store_->ReadSnapshot("x", &one).ok());
  EXPECT_TRUE(one.has_value());
  ASSERT_TRUE(store_->ReadEvictedSnapshot("y", &one).ok());
  EXPECT_FALSE(one.has_value());
  std::optional<std::string> totals;
  ASSERT_TRUE(store_->ReadMeta(kEvictedTotalsMeta, &totals).ok());
  EXPECT_EQ(totals, "totals");
  auto restore = [&](const EventStore::RestoreVisitor& v) {
    return store_->ScanJobsForRestore(v);
  };
  auto every = [&](const EventStore::RestoreVisitor& v) {
    return store_->ScanAllJobs(v);
  };
  EXPECT_EQ(Visited(restore), (std::vector<std::string>{"y:1"}));
  EXPECT_EQ(Visited(every), (std::vector<std::string>{"x:1", "y:1"}));
  Write("a", 2, "10:00:05 {\"job_id\":\"x\",\"step\":{\"step\":2}}");
  EXPECT_EQ(Visited(restore), (std::vector<std::string>{"x:2", "y:1"}));
  EXPECT_EQ(Visited(every), (std::vector<std::string>{"x:2", "y:1"}));
}

// The retention of evicted jobs reads those that ended before its horizon
// (an index by end time, negative times in order too), not every evicted
// job; a retired one (events_deleted) stays in the index until its events
// are deleted, so that a failed or cut-short deletion is done again.
TEST_P(EventStoreTest, EvictedJobsAreFoundByTheirEndTime) {
  JobSnapshot a = SnapshotOf("a", 1), b = SnapshotOf("b", 1),
              c = SnapshotOf("c", 1);
  a.ended_ns = -5;
  b.ended_ns = 30;
  c.ended_ns = 10;
  ASSERT_TRUE(store_->EvictJobs({b, c, a}, std::nullopt).ok());
  auto ids = [&](int64_t before) {
    std::vector<JobSnapshot> due;
    EXPECT_TRUE(store_->ReadEvictedEndedBefore(before, &due).ok());
    std::vector<std::string> out;
    for (const JobSnapshot& s : due) out.push_back(s.report.job_id);
    return out;
  };
  EXPECT_EQ(ids(30), (std::vector<std::string>{"a", "c"}));
  EXPECT_EQ(ids(-5), (std::vector<std::string>{}));
  c.events_deleted = true;
  ASSERT_TRUE(store_->EvictJobs({c}, std::nullopt).ok());
  if (rocks()) Reopen();
  EXPECT_EQ(ids(100), (std::vector<std::string>{"a", "c", "b"}));
  std::vector<JobSnapshot> due;
  ASSERT_TRUE(store_->ReadEvictedEndedBefore(11, &due).ok());
  ASSERT_EQ(due.size(), 2u);
  EXPECT_TRUE(due[1].events_deleted);  // "c", as last stored
  ASSERT_TRUE(store_->DeleteJobEvents({c}).ok());
  if (rocks()) Reopen();
  EXPECT_EQ(ids(100), (std::vector<std::string>{"a", "b"}));
  // A retired job evicted again (retired while held) is not indexed.
  b.events_deleted = true;
  ASSERT_TRUE(store_->DeleteJobEvents({b}).ok());
  ASSERT_TRUE(store_->EvictJobs({b}, std::nullopt).ok());
  EXPECT_EQ(ids(100), (std::vector<std::string>{"a"}));
}

// A job evicted, back and ended again has both snapshots: readers of every
// snapshot get the held (newer) one once; its next eviction replaces the
// evicted one. Retention keeps an evicted job in the reports' scan.
TEST_P(EventStoreTest, AHeldSnapshotHidesTheEvictedOneUntilItIsEvicted) {
  Write("a", 1, "10:00:00 {\"job_id\":\"x\",\"step\":{\"step\":1}}");
  ASSERT_TRUE(store_->EvictJobs({SnapshotOf("x", 1)}, std::nullopt).ok());
  Write("a", 2, "10:00:05 {\"job_id\":\"x\",\"step\":{\"step\":2}}");
  ASSERT_TRUE(store_->WriteSnapshots({SnapshotOf("x", 2)}).ok());
  std::vector<JobSnapshot> all;
  ASSERT_TRUE(store_->ReadSnapshots(&all).ok());
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0].through_batch, 2u);
  std::optional<JobSnapshot> one;
  ASSERT_TRUE(store_->ReadSnapshot("x", &one).ok());
  EXPECT_EQ(one->through_batch, 2u);
  ASSERT_TRUE(store_->ReadEvictedSnapshot("x", &one).ok());
  EXPECT_EQ(one->through_batch, 1u);
  ASSERT_TRUE(store_->EvictJobs({SnapshotOf("x", 2)}, std::nullopt).ok());
  std::vector<JobSnapshot> held;
  ASSERT_TRUE(store_->ReadHeldSnapshots(&held).ok());
  EXPECT_TRUE(held.empty());
  ASSERT_TRUE(store_->ReadSnapshot("x", &one).ok());
  EXPECT_EQ(one->through_batch, 2u);
  auto restore = [&](const EventStore::RestoreVisitor& v) {
    return store_->ScanJobsForRestore(v);
  };
  EXPECT_TRUE(Visited(restore).empty());
  ASSERT_TRUE(store_->DeleteJobEvents(Retired("x")).ok());
  auto every = [&](const EventStore::RestoreVisitor& v) {
    return store_->ScanAllJobs(v);
  };
  EXPECT_EQ(Visited(every), (std::vector<std::string>{"x:0"}));
}

// The step numbers of `job`'s events that ReadUntil(0, through, until)
// gives, in order, through ScanJobsForRestore's reader.
std::vector<int64_t> StepsUntil(EventStore* store, const std::string& job,
                                uint64_t through, int64_t until_ns) {
  std::vector<int64_t> steps;
  EXPECT_TRUE(
      store
          ->ScanJobsForRestore([&](const std::string& id,
                                   std::vector<internal::v1::StoredJobState>*,
                                   JobEventsReader* events) {
            if (id != job) return absl::OkStatus();
            std::vector<v1::Event> read;
            absl::Status s = events->ReadUntil(0, through, until_ns, &read);
            for (const v1::Event& e : read) {
              steps.push_back(e.step().step());
            }
            return s;
          })
          .ok());
  return steps;
}

int64_t TimeOf(const std::string& hms) {
  return core::EventTimeNanos(
      ParseEvents(Timeline(hms + " {\"step\":{}}")).at(0));
}

// A question as of 10:00:02 needs every event at or before it, in batch
// order; RocksDB leaves out the batch whose events are all later without
// parsing it (the memory store may read everything).
TEST_P(EventStoreTest, ReadUntilKeepsEveryEventAtOrBeforeItInOrder) {
  Write("a", 1, "10:00:00 {\"job_id\":\"x\",\"step\":{\"step\":1}}");
  Write("a", 2, R"(
10:00:05 {"job_id":"x","step":{"step":2}}
10:00:01 {"job_id":"x","step":{"step":3}}
)");
  Write("a", 3, "10:00:09 {\"job_id\":\"x\",\"step\":{\"step\":4}}");
  Write("a", 4, "10:00:02 {\"job_id\":\"x\",\"step\":{\"step\":5}}");
  const std::vector<int64_t> read =
      StepsUntil(store_.get(), "x", 4, TimeOf("10:00:02"));
  std::vector<int64_t> kept;  // what a question as of 10:00:02 uses
  std::copy_if(read.begin(), read.end(), std::back_inserter(kept),
               [](int64_t step) { return step != 2 && step != 4; });
  EXPECT_EQ(kept, (std::vector<int64_t>{1, 3, 5}));
  if (rocks()) EXPECT_EQ(read, (std::vector<int64_t>{1, 2, 3, 5}));
  EXPECT_EQ(StepsUntil(store_.get(), "x", 4, TimeOf("10:00:09")),
            (std::vector<int64_t>{1, 2, 3, 4, 5}));
}

// An interleaved fleet: every batch holds one step of every job, the jobs
// in a different order each time, so each job's keys (job_events,
// job_heads, job_states) go into the memtable between other jobs' keys.
// Each job reads back all its steps in order and its newest head, from the
// memtable and after a reopen.
TEST_P(EventStoreTest, InterleavedJobsReadBackTheirOwnEventsInOrder) {
  constexpr int kJobs = 23, kBatches = 17;
  auto job = [](int j) { return std::string(1 + j % 5, char('a' + j)); };
  std::vector<internal::v1::StoredJobState> states;
  for (int b = 1; b <= kBatches; ++b) {
    std::string timeline;
    for (int i = 0; i < kJobs; ++i) {
      const int j = (i * 7 + b * 5) % kJobs;  // a permutation per batch
      absl::StrAppend(&timeline, "10:00:", b < 10 ? "0" : "", b,
                      " {\"job_id\":\"", job(j), "\",\"step\":{\"step\":", b,
                      "}}\n");
      if (b % 4 == 0) {
        states.emplace_back().set_job_id(job(j));
        states.back().set_through_batch(b);
      }
    }
    ASSERT_EQ(Write("a", b, timeline), static_cast<uint64_t>(b));
    ASSERT_TRUE(store_->WriteJobStates(states, {}).ok());
    states.clear();
  }
  for (int pass = 0; pass < 2; ++pass) {
    std::vector<std::string> seen;
    ASSERT_TRUE(store_
                    ->ScanJobsForRestore(
                        [&](const std::string& id,
                            std::vector<internal::v1::StoredJobState>* st,
                            JobEventsReader* events) {
                          std::vector<v1::Event> all;
                          EXPECT_TRUE(events->Read(0, kBatches, &all).ok());
                          std::string steps;
                          for (const auto& e : all) {
                            EXPECT_EQ(e.job_id(), id);
                            absl::StrAppend(&steps, e.step().step(), ",");
                          }
                          std::string through;
                          for (const auto& s : *st) {
                            absl::StrAppend(&through, s.through_batch(), ",");
                          }
                          seen.push_back(
                              absl::StrCat(id, ":", steps, ":", through));
                          return absl::OkStatus();
                        })
                    .ok());
    ASSERT_EQ(seen.size(), static_cast<size_t>(kJobs)) << pass;
    for (const std::string& s : seen) {
      EXPECT_THAT(
          s, ::testing::EndsWith(":1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,"
                                 ":4,8,12,16,"))
          << pass;
    }
    if (rocks()) Reopen();
  }
}

// The store remembers which jobs have a head; retention's deletion must
// make it forget, or the job's next events would be stored unlisted.
TEST_P(EventStoreTest, AJobWrittenAgainAfterItsDeletionIsListedAgain) {
  Write("a", 1, "10:00:00 {\"job_id\":\"x\",\"step\":{\"step\":1}}");
  ASSERT_TRUE(store_->DeleteJobEvents(Retired("x")).ok());
  Write("a", 2, "10:00:01 {\"job_id\":\"x\",\"step\":{\"step\":2}}");
  std::vector<std::string> seen;
  ASSERT_TRUE(
      store_
          ->ScanJobsForRestore([&](const std::string& id,
                                   std::vector<internal::v1::StoredJobState>*,
                                   JobEventsReader* events) {
            std::vector<v1::Event> all;
            EXPECT_TRUE(events->Read(0, 2, &all).ok());
            seen.push_back(absl::StrCat(id, ":", all.size()));
            return absl::OkStatus();
          })
          .ok());
  EXPECT_EQ(seen, (std::vector<std::string>{"x:1"}));
}

TEST_P(EventStoreTest, MetaRecordsRoundTrip) {
  std::optional<std::string> value;
  ASSERT_TRUE(store_->ReadMeta("windows", &value).ok());
  EXPECT_FALSE(value.has_value());
  ASSERT_TRUE(store_->WriteMeta("windows", std::string("a\0b", 3)).ok());
  ASSERT_TRUE(store_->WriteMeta("windows", "v2").ok());
  if (rocks()) Reopen();
  ASSERT_TRUE(store_->ReadMeta("windows", &value).ok());
  EXPECT_EQ(value, "v2");
  ASSERT_TRUE(
      store_->WriteMetas({{"windows/1", "p1"}, {"windows", "v3"}}).ok());
  if (rocks()) Reopen();
  ASSERT_TRUE(store_->ReadMeta("windows", &value).ok());
  EXPECT_EQ(value, "v3");
  ASSERT_TRUE(store_->ReadMeta("windows/1", &value).ok());
  EXPECT_EQ(value, "p1");
}

// The spaced fleet state records are listed by prefix (not the records
// whose names only start like it) and deleted together.
TEST_P(EventStoreTest, MetaRecordsAreListedByPrefixAndDeleted) {
  for (const char* name : {"fleet", "fleet/2", "fleet/1", "fleet_deleted"}) {
    ASSERT_TRUE(store_->WriteMeta(name, name).ok());
  }
  auto list = [&] {
    std::vector<std::string> names;
    EXPECT_TRUE(store_
                    ->ScanMeta("fleet/",
                               [&](const std::string& n, const std::string& v) {
                                 EXPECT_EQ(n, v);
                                 names.push_back(n);
                                 return absl::OkStatus();
                               })
                    .ok());
    return names;
  };
  EXPECT_EQ(list(), (std::vector<std::string>{"fleet/1", "fleet/2"}));
  ASSERT_TRUE(store_->DeleteMeta({"fleet/1", "fleet/9"}).ok());
  if (rocks()) Reopen();
  EXPECT_EQ(list(), (std::vector<std::string>{"fleet/2"}));
  std::optional<std::string> value;
  ASSERT_TRUE(store_->ReadMeta("fleet", &value).ok());
  EXPECT_EQ(value, "fleet");
}

// Retention of heartbeats: the fleet events of the batches through one
// go; the jobs' events, the batch ids and the later heartbeats stay.
TEST_P(EventStoreTest, DeleteFleetEventsKeepsJobsAndLaterBatches) {
  for (uint64_t i = 1; i <= 4; ++i) {
    Write("a", i,
          absl::StrCat("10:00:0", i, R"( {"job_id":"j","step":{"step":)", i,
                       "}}\n10:00:0", i,
                       R"( {"host":"h","heartbeat":{"chips":4}})"));
  }
  EXPECT_EQ(store_->DeleteFleetEvents(4).code(),
            absl::StatusCode::kInvalidArgument);  // the newest stays
  ASSERT_TRUE(store_->DeleteFleetEvents(2).ok());
  if (rocks()) Reopen();
  EXPECT_EQ(store_->LastBatchId(), 4u);
  std::vector<uint64_t> seen;
  ASSERT_TRUE(store_
                  ->ScanHeartbeats([&](uint64_t id, std::vector<v1::Event>*) {
                    seen.push_back(id);
                    return absl::OkStatus();
                  })
                  .ok());
  EXPECT_EQ(seen, (std::vector<uint64_t>{3, 4}));
  EXPECT_EQ(JobSteps("j", 4),
            (std::vector<std::string>{"j:1", "j:2", "j:3", "j:4"}));
}

class RocksDbStoreTest : public EventStoreTest {
 protected:
  bool rocks() const override { return true; }
};

TEST_F(RocksDbStoreTest, ReopenKeepsEverythingAndContinuesIds) {
  Write("a", 1, "10:00:00 {\"step\":{\"step\":1}}");
  Write("a", 2, "10:00:01 {\"step\":{\"step\":2}}");
  Reopen();
  EXPECT_EQ(Write("a", 3, "10:00:02 {\"step\":{\"step\":3}}"), 3u);
  EXPECT_EQ(JobSteps("j", 10), (std::vector<std::string>{"j:1", "j:2", "j:3"}));
  EXPECT_EQ(store_->AgentSequences()->at("a"), 3u);
}

// A store written by the layout-1 code (every accepted event in `batches`,
// varint indices in `job_events`) is migrated at open, once.
TEST_F(RocksDbStoreTest, MigratesALayoutOneStore) {
  store_.reset();
  dir_ += "/layout1";
  {
    std::vector<rocksdb::ColumnFamilyDescriptor> families;
    for (const char* name : {"default", "batches", "job_events", "agents",
                             "dead_letters", "snapshots"}) {
      families.emplace_back(name, rocksdb::ColumnFamilyOptions());
    }
    rocksdb::DBOptions options;
    options.create_if_missing = true;
    options.create_missing_column_families = true;
    rocksdb::DB* raw = nullptr;
    std::vector<rocksdb::ColumnFamilyHandle*> h;
    ASSERT_TRUE(rocksdb::DB::Open(options, dir_, families, &h, &raw).ok());
    internal::v1::StoredBatch batch;
    batch.set_agent_id("a");
    for (const v1::Event& e : ParseEvents(Timeline(R"(
10:00:00 {"job_id":"x","step":{"step":1}}
10:00:01 {"host":"h","heartbeat":{"chips":4}}
10:00:02 {"job_id":"y","step":{"step":1}}
10:00:03 {"job_id":"x","step":{"step":2}}
)"))) {
      *batch.add_events() = e;
    }
    batch.mutable_events(3)->Clear();  // deleted by retention
    const std::string key("\0\0\0\0\0\0\0\x01", 8);
    ASSERT_TRUE(raw->Put({}, h[1], key, batch.SerializeAsString()).ok());
    ASSERT_TRUE(raw->Put({}, h[2], std::string("\0\0\0\x01x", 5) + key,
                         std::string("\x00", 1))
                    .ok());
    ASSERT_TRUE(raw->Put({}, h[2], std::string("\0\0\0\x01y", 5) + key,
                         std::string("\x02", 1))
                    .ok());
    for (auto* handle : h)
      ASSERT_TRUE(raw->DestroyColumnFamilyHandle(handle).ok());
    delete raw;
  }
  auto opened = RocksDbEventStore::Open(dir_, {});
  ASSERT_TRUE(opened.ok()) << opened.status();
  EXPECT_EQ((*opened)->migrated_batches(), 1);
  store_ = *std::move(opened);
  EXPECT_EQ(JobSteps("x", 1), std::vector<std::string>{"x:1"});
  EXPECT_EQ(JobSteps("y", 1), std::vector<std::string>{"y:1"});
  size_t beats = 0;
  ASSERT_TRUE(store_
                  ->ScanHeartbeats([&](uint64_t, std::vector<v1::Event>* b) {
                    beats += b->size();
                    return absl::OkStatus();
                  })
                  .ok());
  EXPECT_EQ(beats, 1u);
  std::vector<std::string> jobs;  // job_heads were filled at open
  ASSERT_TRUE(store_
                  ->ListJobs([&](const std::string& id) {
                    jobs.push_back(id);
                    return absl::OkStatus();
                  })
                  .ok());
  EXPECT_EQ(jobs, (std::vector<std::string>{"x", "y"}));
  EXPECT_EQ(Write("a", 2, "10:00:04 {\"job_id\":\"x\",\"step\":{\"step\":3}}"),
            2u);
  store_.reset();
  opened = RocksDbEventStore::Open(dir_, {});
  ASSERT_TRUE(opened.ok()) << opened.status();
  EXPECT_EQ((*opened)->migrated_batches(), 0);
  store_ = *std::move(opened);
  EXPECT_EQ(JobSteps("x", 2), (std::vector<std::string>{"x:1", "x:3"}));
}

TEST_F(RocksDbStoreTest, AnUnknownLayoutIsRefusedByName) {
  store_.reset();
  dir_ += "/layout9";
  {
    std::vector<rocksdb::ColumnFamilyDescriptor> families = {
        {"default", rocksdb::ColumnFamilyOptions()}};
    rocksdb::DBOptions options;
    options.create_if_missing = true;
    options.create_missing_column_families = true;
    rocksdb::DB* raw = nullptr;
    std::vector<rocksdb::ColumnFamilyHandle*> h;
    ASSERT_TRUE(rocksdb::DB::Open(options, dir_, families, &h, &raw).ok());
    ASSERT_TRUE(raw->Put({}, h[0], "schema_version", "9").ok());
    for (auto* handle : h)
      ASSERT_TRUE(raw->DestroyColumnFamilyHandle(handle).ok());
    delete raw;
  }
  auto opened = RocksDbEventStore::Open(dir_, {});
  ASSERT_FALSE(opened.ok());
  EXPECT_EQ(opened.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(opened.status().message()),
              ::testing::HasSubstr("layout version \"9\""));
}

// Reads (or with `put`, first writes) the schema_version key of the closed
// store in `dir` through RocksDB itself.
std::string RawLayout(const std::string& dir, const char* put = nullptr) {
  std::vector<std::string> names;
  EXPECT_TRUE(
      rocksdb::DB::ListColumnFamilies(rocksdb::DBOptions(), dir, &names).ok());
  std::vector<rocksdb::ColumnFamilyDescriptor> families;
  for (const std::string& n : names) {
    families.emplace_back(n, rocksdb::ColumnFamilyOptions());
  }
  rocksdb::DB* raw = nullptr;
  std::vector<rocksdb::ColumnFamilyHandle*> h;
  EXPECT_TRUE(
      rocksdb::DB::Open(rocksdb::DBOptions(), dir, families, &h, &raw).ok());
  if (put != nullptr)
    EXPECT_TRUE(raw->Put({}, h[0], "schema_version", put).ok());
  std::string layout;
  EXPECT_TRUE(raw->Get({}, h[0], "schema_version", &layout).ok());
  for (auto* handle : h)
    EXPECT_TRUE(raw->DestroyColumnFamilyHandle(handle).ok());
  delete raw;
  return layout;
}

// Layout 3 writes a job's head once, not with every batch: a layout-2
// store (heads = newest batch) opens as layout 6 and reads the same; so
// does a layout-3 one (values without high-water marks), and a layout-5
// one (no evicted jobs).
TEST_F(RocksDbStoreTest, LayoutTwoToFiveStoresOpenAsLayoutSix) {
  Write("a", 1, "10:00:00 {\"job_id\":\"x\",\"step\":{\"step\":1}}");
  Write("a", 2, "10:00:01 {\"job_id\":\"x\",\"step\":{\"step\":2}}");
  store_.reset();
  EXPECT_EQ(RawLayout(dir_), "6");
  EXPECT_EQ(RawLayout(dir_, "2"), "2");
  Reopen();
  EXPECT_EQ(JobSteps("x", 2), (std::vector<std::string>{"x:1", "x:2"}));
  Write("a", 3, "10:00:02 {\"job_id\":\"x\",\"step\":{\"step\":3}}");
  store_.reset();
  EXPECT_EQ(RawLayout(dir_), "6");
  EXPECT_EQ(RawLayout(dir_, "3"), "3");  // layout 3 opens as 4 too
  Reopen();
  EXPECT_EQ(JobSteps("x", 3), (std::vector<std::string>{"x:1", "x:2", "x:3"}));
  store_.reset();
  EXPECT_EQ(RawLayout(dir_, "5"), "5");
  Reopen();
  EXPECT_EQ(JobSteps("x", 3), (std::vector<std::string>{"x:1", "x:2", "x:3"}));
  store_.reset();
  EXPECT_EQ(RawLayout(dir_), "6");
}

// A job_events value written before StoredJobEvents.min_event_ns (events
// only) is read whole by ReadUntil, whatever its events' times.
TEST_F(RocksDbStoreTest, AValueWithoutItsEarliestTimeIsReadWhole) {
  Write("a", 1, "10:00:00 {\"job_id\":\"x\",\"step\":{\"step\":1}}");
  Write("a", 2, "10:00:09 {\"job_id\":\"x\",\"step\":{\"step\":2}}");
  EXPECT_EQ(StepsUntil(store_.get(), "x", 2, TimeOf("10:00:01")),
            (std::vector<int64_t>{1}));
  store_.reset();
  {
    std::vector<std::string> names;
    ASSERT_TRUE(
        rocksdb::DB::ListColumnFamilies(rocksdb::DBOptions(), dir_, &names)
            .ok());
    std::vector<rocksdb::ColumnFamilyDescriptor> families;
    for (const std::string& n : names) {
      families.emplace_back(n, rocksdb::ColumnFamilyOptions());
    }
    rocksdb::DB* raw = nullptr;
    std::vector<rocksdb::ColumnFamilyHandle*> h;
    ASSERT_TRUE(
        rocksdb::DB::Open(rocksdb::DBOptions(), dir_, families, &h, &raw).ok());
    const size_t job_events = static_cast<size_t>(
        std::find(names.begin(), names.end(), "job_events") - names.begin());
    ASSERT_LT(job_events, names.size());
    internal::v1::StoredJobEvents old;
    *old.add_events() = ParseEvents(
        Timeline("10:00:09 {\"job_id\":\"x\",\"step\":{\"step\":2}}"))[0];
    ASSERT_TRUE(raw->Put({}, h[job_events],
                         std::string("\0\0\0\x01x\0\0\0\0\0\0\0\x02", 13),
                         old.SerializeAsString())
                    .ok());
    for (auto* handle : h)
      ASSERT_TRUE(raw->DestroyColumnFamilyHandle(handle).ok());
    delete raw;
  }
  Reopen();
  EXPECT_EQ(StepsUntil(store_.get(), "x", 2, TimeOf("10:00:01")),
            (std::vector<int64_t>{1, 2}));
  // The job's newest value has no high-water mark: the next batch starts
  // one (not late), and the one after is late against it. A read until
  // 10:00:01 stops at batch 3 and finds batch 4 through job_late.
  Write("a", 3, "10:00:05 {\"job_id\":\"x\",\"step\":{\"step\":3}}");
  Write("a", 4, "10:00:01 {\"job_id\":\"x\",\"step\":{\"step\":4}}");
  EXPECT_EQ(StepsUntil(store_.get(), "x", 4, TimeOf("10:00:01")),
            (std::vector<int64_t>{1, 2, 4}));
}

// Hand-computed: batches at 0, 5, 9, 12 s, then a late one at 2 s, then 20
// s. A read until 3 s takes batch 1, stops at batch 2 (all later, with a
// high-water mark) and reads only the late batch 5 beyond it: 3 values
// looked at, not 6. After a reopen (the marks forgotten, read back from
// the newest value) a late batch at 1 s is found the same way.
TEST_F(RocksDbStoreTest, AReadUntilStopsAtTheFirstLaterBatchAndReadsTheLate) {
  int step = 0;
  for (const char* t : {"10:00:00", "10:00:05", "10:00:09", "10:00:12",
                        "10:00:02", "10:00:20"}) {
    ++step;
    Write(
        "a", step,
        absl::StrCat(t, " {\"job_id\":\"x\",\"step\":{\"step\":", step, "}}"));
  }
  auto* rocks = static_cast<RocksDbEventStore*>(store_.get());
  int64_t before = rocks->job_values_visited();
  EXPECT_EQ(StepsUntil(store_.get(), "x", 6, TimeOf("10:00:03")),
            (std::vector<int64_t>{1, 5}));
  EXPECT_EQ(rocks->job_values_visited() - before, 3);
  EXPECT_EQ(StepsUntil(store_.get(), "x", 6, TimeOf("10:00:10")),
            (std::vector<int64_t>{1, 2, 3, 5}));
  EXPECT_EQ(StepsUntil(store_.get(), "x", 4, TimeOf("10:00:03")),
            (std::vector<int64_t>{1}));  // the late batch is past the cut
  Reopen();
  Write("a", 7, "10:00:01 {\"job_id\":\"x\",\"step\":{\"step\":7}}");
  EXPECT_EQ(StepsUntil(store_.get(), "x", 7, TimeOf("10:00:03")),
            (std::vector<int64_t>{1, 5, 7}));
  ASSERT_TRUE(store_->DeleteJobEvents(Retired("x")).ok());
  Write("a", 8, "10:00:30 {\"job_id\":\"x\",\"step\":{\"step\":8}}");
  Write("a", 9, "10:00:31 {\"job_id\":\"x\",\"step\":{\"step\":9}}");
  EXPECT_EQ(StepsUntil(store_.get(), "x", 9, TimeOf("10:00:30")),
            (std::vector<int64_t>{8}));  // deleted with its job_late keys
}

// The high-water mark a restart reads back is the newest batch's newest
// time, not its earliest: a batch with an event older than it gets its
// job_late key, and a read until before a later batch still finds it.
TEST_F(RocksDbStoreTest, AMarkReadBackAfterAReopenIsTheNewestTime) {
  Write("a", 1, "10:00:00 {\"job_id\":\"x\",\"step\":{\"step\":1}}");
  Write("a", 2, "10:00:30 {\"job_id\":\"x\",\"step\":{\"step\":2}}");
  Write("a", 3, R"(
10:00:31 {"job_id":"x","step":{"step":3}}
10:00:01 {"job_id":"x","step":{"step":4}}
)");
  Reopen();  // the mark is read from batch 3's value: 10:00:31
  Write("a", 4, "10:00:02 {\"job_id\":\"x\",\"step\":{\"step\":5}}");
  EXPECT_EQ(StepsUntil(store_.get(), "x", 4, TimeOf("10:00:10")),
            (std::vector<int64_t>{1, 3, 4, 5}));
}

// Layout 5: a scan of the fleet events until T stops at the first batch
// whose newest heartbeat is kFleetLateNanos (5 min) past T and then reads
// only the batches marked late (an event older than the newest heartbeat
// before it less 5 min). The mark is read back after a reopen.
TEST_F(RocksDbStoreTest, AFleetScanStopsPastTheLagAndReadsTheLateBatches) {
  for (int m = 0; m <= 20; ++m) {
    Write("a", static_cast<uint64_t>(m + 1),
          absl::StrFormat(
              "10:%02d:00 {\"host\":\"h\",\"heartbeat\":{\"chips\":4}}", m));
  }
  Reopen();
  Write("a", 22, "10:02:00 {\"host\":\"g\",\"heartbeat\":{\"chips\":4}}");
  Write("a", 23, "10:16:00 {\"host\":\"g\",\"heartbeat\":{\"chips\":4}}");
  std::vector<uint64_t> seen;
  ASSERT_TRUE(store_
                  ->ScanFleetUntil(0, 23, TimeOf("10:05:00"),
                                   [&](uint64_t id, std::vector<v1::Event>*) {
                                     seen.push_back(id);
                                     return absl::OkStatus();
                                   })
                  .ok());
  // Batch 11 (10:10) is not past 10:05 + 5 min; batch 12 (10:11) is.
  std::vector<uint64_t> want;
  for (uint64_t id = 1; id <= 12; ++id) want.push_back(id);
  want.push_back(22);  // 10:02, stored after 10:20: late
  EXPECT_EQ(seen, want);
  seen.clear();  // through batch 21 only: no late batch
  ASSERT_TRUE(store_
                  ->ScanFleetUntil(10, 21, TimeOf("10:05:00"),
                                   [&](uint64_t id, std::vector<v1::Event>*) {
                                     seen.push_back(id);
                                     return absl::OkStatus();
                                   })
                  .ok());
  EXPECT_EQ(seen, (std::vector<uint64_t>{11, 12}));
}

TEST_F(RocksDbStoreTest, OpenFailureIsAStatus) {
  auto bad = RocksDbEventStore::Open("/proc/no/such/dir", {});
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(std::string(bad.status().message()),
              ::testing::HasSubstr("rocksdb open"));
}

INSTANTIATE_TEST_SUITE_P(Stores, EventStoreTest, ::testing::Bool(),
                         [](const auto& info) {
                           return info.param ? "RocksDb" : "Memory";
                         });

}  // namespace
}  // namespace goodput::storage
