// The Ingestor's group commit: batches of several agents that wait for the
// ingest lock together are judged as if one after another and stored in
// one write, against a real RocksDB in a temp dir (and the in-memory store
// for a failed write).
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <thread>

#include "absl/synchronization/notification.h"
#include "core/testing/timeline.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/ingestor.h"
#include "storage/memory_event_store.h"
#include "storage/rocksdb_event_store.h"

namespace goodput::server {
namespace {

using ::goodput::core::testing::JobEvents;
using ::testing::HasSubstr;
using ::testing::Pair;
using ::testing::UnorderedElementsAre;

constexpr int64_t kLateness = 5'000'000'000;
constexpr int64_t kAsOf = (1795341600LL + 5 * 3600) * core::kNanosPerSecond;

v1::Batch MakeBatch(const std::string& agent, uint64_t seq,
                    const std::vector<v1::Event>& events) {
  v1::Batch batch;
  batch.set_agent_id(agent);
  batch.set_sequence(seq);
  for (const v1::Event& e : events) *batch.add_events() = e;
  return batch;
}

// An event every validator refuses: a step without its job_id.
v1::Event Invalid() {
  v1::Event e = JobEvents("x", "10:00:30 {\"step\":{\"step\":9}}")[0];
  e.clear_job_id();
  return e;
}

class GroupCommitTest : public ::testing::Test {
 protected:
  GroupCommitTest() {
    char tmpl[] = "/tmp/goodput-group-XXXXXX";
    EXPECT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  ~GroupCommitTest() override {
    Stop();
    std::filesystem::remove_all(dir_);
  }
  void SetUp() override { Restart(); }
  void Stop() {
    ingestor_.reset();
    live_.reset();
    store_.reset();
  }
  // A new server process over the same store.
  virtual void Restart() {
    Stop();
    auto store = storage::RocksDbEventStore::Open(dir_, {});
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = *std::move(store);
    Start();
  }
  void Start() {
    live_ = std::make_unique<LiveState>(&config_, kLateness, store_.get());
    ingestor_ = std::make_unique<Ingestor>(store_.get(), live_.get(), &clock_,
                                           codec::ValidationLimits());
    ASSERT_TRUE(ingestor_->Recover().ok());
  }

  // Ingests `first` on one thread and, while it holds the ingest lock
  // after its store write (the "after_store" fault hook) until they all
  // wait for the lock, `rest` on a thread each: `rest` make the next
  // group, queued in their order. `then` (if set) runs once they wait. Returns
  // each batch's result, `first`'s first.
  std::vector<absl::StatusOr<v1::Ack>> SendTogether(
      v1::Batch first, std::vector<v1::Batch> rest,
      const std::function<void()>& then = nullptr) {
    absl::Notification holding, release;
    std::atomic<bool> once{false};
    ingestor_->set_fault_hook([&](const char* point) {
      if (std::string(point) != "after_store" || once.exchange(true)) return;
      holding.Notify();
      release.WaitForNotification();
      if (then) then();
    });
    std::vector<absl::StatusOr<v1::Ack>> results(
        rest.size() + 1, absl::UnknownError("not sent"));
    std::vector<std::thread> threads;
    threads.emplace_back([&] { results[0] = ingestor_->IngestTaking(&first); });
    holding.WaitForNotification();
    // The lock is held until `release`: the waiting count only grows.
    for (size_t i = 0; i < rest.size(); ++i) {
      threads.emplace_back(
          [&, i] { results[i + 1] = ingestor_->IngestTaking(&rest[i]); });
      // Queued in this order: the next starts once this one waits.
      while (ingestor_->batches_waiting() < static_cast<int>(i + 1)) {
        std::this_thread::yield();
      }
    }
    release.Notify();
    for (std::thread& t : threads) t.join();
    ingestor_->set_fault_hook(nullptr);
    return results;
  }

  std::string dir_;
  core::Config config_;
  FakeClock clock_{kAsOf};
  std::unique_ptr<storage::EventStore> store_;
  std::unique_ptr<LiveState> live_;
  std::unique_ptr<Ingestor> ingestor_;
};

TEST_F(GroupCommitTest, BatchesWaitingTogetherAreOneWrite) {
  const auto results = SendTogether(
      MakeBatch("agent-a", 1, JobEvents("a", "10:00:00 {\"started\":{}}")),
      {MakeBatch("agent-b", 1, JobEvents("b", R"(
10:00:00 {"started":{}}
10:00:10 {"step":{"step":1}}
)")),
       MakeBatch("agent-c", 4, JobEvents("c", "10:00:00 {\"started\":{}}"))});
  for (const auto& r : results) ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(results[1]->accepted(), 2u);
  EXPECT_EQ(results[1]->sequence(), 1u);
  EXPECT_EQ(results[2]->accepted(), 1u);
  EXPECT_EQ(results[2]->sequence(), 4u);
  EXPECT_EQ(store_->LastBatchId(), 2u);  // a's write, then b's and c's
  auto sequences = store_->AgentSequences();
  ASSERT_TRUE(sequences.ok());
  EXPECT_THAT(*sequences,
              UnorderedElementsAre(Pair("agent-a", 1u), Pair("agent-b", 1u),
                                   Pair("agent-c", 4u)));
  std::vector<v1::Event> b;
  ASSERT_TRUE(store_->ReadJob("b", 0, 2, &b).ok());
  EXPECT_EQ(b.size(), 2u);
  const IngestStats stats = ingestor_->stats();
  EXPECT_EQ(stats.batches, 3);
  EXPECT_EQ(stats.batch_writes, 2);
  EXPECT_EQ(stats.accepted_events, 4);

  // A restart knows both agents' sequences: their resends are duplicates.
  Restart();
  v1::Batch again = MakeBatch("agent-c", 4, {});
  auto ack = ingestor_->IngestTaking(&again);
  ASSERT_TRUE(ack.ok()) << ack.status();
  EXPECT_TRUE(ack->duplicate());
  EXPECT_EQ(store_->LastBatchId(), 2u);
}

TEST_F(GroupCommitTest, BusyTimeIsTheServerTimeTheLockWasHeldForBatches) {
  // The clock moves 7 s while the first batch holds the lock, and 2 s
  // between batches (no batch holds it then).
  SendTogether(MakeBatch("agent-a", 1, {}), {MakeBatch("agent-b", 1, {})},
               [&] { clock_.Advance(7 * core::kNanosPerSecond); });
  clock_.Advance(2 * core::kNanosPerSecond);
  ASSERT_TRUE(ingestor_->Ingest(MakeBatch("agent-c", 1, {})).ok());
  EXPECT_EQ(ingestor_->stats().busy_ns, 7 * core::kNanosPerSecond);
}

TEST_F(GroupCommitTest, RejectionsOfAGroupKeepTheirOwnIndexes) {
  const v1::Event ok = JobEvents("b", "10:00:00 {\"started\":{}}")[0];
  const auto results = SendTogether(MakeBatch("agent-a", 1, {ok}),
                                    {MakeBatch("agent-b", 1, {Invalid(), ok}),
                                     MakeBatch("agent-c", 1, {Invalid()})});
  for (const auto& r : results) ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(results[1]->rejections_size(), 1);
  EXPECT_EQ(results[1]->rejections(0).index(), 0u);
  EXPECT_EQ(results[1]->accepted(), 1u);
  ASSERT_EQ(results[2]->rejections_size(), 1);
  EXPECT_EQ(results[2]->rejections(0).index(), 0u);
  // Both dead letters are kept, each with its agent's batch and index.
  std::vector<v1::DeadLetter> dead;
  uint64_t total = 0;
  ASSERT_TRUE(store_->DeadLetters(10, &dead, &total).ok());
  ASSERT_EQ(total, 2u);
  ASSERT_EQ(dead.size(), 2u);
  EXPECT_EQ(dead[0].agent_id(), "agent-b");
  EXPECT_EQ(dead[1].agent_id(), "agent-c");
  EXPECT_EQ(dead[1].index(), 0u);
  EXPECT_THAT(dead[1].reason(), HasSubstr("job_id"));
}

TEST_F(GroupCommitTest, AJobEndedEarlierInTheGroupRefusesLaterEvents) {
  const auto results = SendTogether(
      MakeBatch("agent-a", 1, JobEvents("j", "10:00:00 {\"started\":{}}")),
      {MakeBatch("agent-b", 1, JobEvents("j", R"(
10:00:20 {"job_ended":{"outcome":"SUCCEEDED"}}
)")),
       MakeBatch("agent-c", 1, JobEvents("j", R"(
10:00:10 {"step":{"step":1}}
10:00:30 {"step":{"step":2}}
)"))});
  for (const auto& r : results) ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(results[1]->accepted(), 1u);
  // As if agent-b's batch were applied first: the 10:00:30 step is after
  // the job's end.
  EXPECT_EQ(results[2]->accepted(), 1u);
  ASSERT_EQ(results[2]->rejections_size(), 1);
  EXPECT_EQ(results[2]->rejections(0).index(), 1u);
  EXPECT_THAT(results[2]->rejections(0).reason(), HasSubstr("ended at"));
  EXPECT_EQ(store_->LastBatchId(), 2u);
}

TEST_F(GroupCommitTest, DuplicatesAndJumpsOfAGroupStoreNothing) {
  ingestor_->set_max_sequence_jump(10);
  v1::Batch one = MakeBatch("agent-b", 1, JobEvents("b", R"(
10:00:00 {"started":{}}
)"));
  ASSERT_TRUE(ingestor_->Ingest(one).ok());
  const auto results = SendTogether(
      MakeBatch("agent-a", 1, JobEvents("a", "10:00:00 {\"started\":{}}")),
      {one,
       MakeBatch("agent-c", 50, JobEvents("c", "10:00:00 {\"started\":{}}")),
       MakeBatch("agent-d", 1, JobEvents("d", "10:00:00 {\"started\":{}}"))});
  ASSERT_TRUE(results[1].ok()) << results[1].status();
  EXPECT_TRUE(results[1]->duplicate());
  EXPECT_TRUE(absl::IsOutOfRange(results[2].status())) << results[2].status();
  ASSERT_TRUE(results[3].ok()) << results[3].status();
  EXPECT_EQ(results[3]->accepted(), 1u);
  EXPECT_EQ(store_->LastBatchId(), 3u);  // b, a, then d alone
  EXPECT_EQ(ingestor_->AckedSequence("agent-c"), 0u);
}

class FailedGroupTest : public GroupCommitTest {
 protected:
  void Restart() override {
    Stop();
    memory_ = new storage::MemoryEventStore();
    store_.reset(memory_);
    Start();
  }
  storage::MemoryEventStore* memory_ = nullptr;
};

TEST_F(FailedGroupTest, AFailedWriteFailsEachBatchOfItAndStoresNone) {
  v1::Batch b = MakeBatch("agent-b", 1, JobEvents("b", R"(
10:00:00 {"started":{}}
)"));
  v1::Batch c = MakeBatch("agent-c", 1, JobEvents("c", R"(
10:00:00 {"started":{}}
)"));
  const auto results = SendTogether(MakeBatch("agent-a", 1, {}), {b, c}, [&] {
    memory_->FailNextWrite(absl::UnavailableError("disk full"));
  });
  ASSERT_TRUE(results[0].ok());
  EXPECT_THAT(results[1].status().message(), HasSubstr("disk full"));
  EXPECT_THAT(results[2].status().message(), HasSubstr("disk full"));
  EXPECT_EQ(ingestor_->AckedSequence("agent-b"), 0u);
  EXPECT_EQ(ingestor_->AckedSequence("agent-c"), 0u);
  EXPECT_EQ(ingestor_->stats().failed_batches, 2);
  // Resent, each is stored once.
  auto ack = ingestor_->Ingest(b);
  ASSERT_TRUE(ack.ok());
  EXPECT_EQ(ack->accepted(), 1u);
  EXPECT_EQ(store_->LastBatchId(), 2u);  // agent-a's, then b's resend
  std::vector<v1::Event> stored;
  ASSERT_TRUE(store_->ReadJob("b", 0, 2, &stored).ok());
  EXPECT_EQ(stored.size(), 1u);
  ASSERT_TRUE(store_->ReadJob("c", 0, 2, &stored).ok());
  EXPECT_EQ(stored.size(), 1u);  // nothing of c
}

}  // namespace
}  // namespace goodput::server
