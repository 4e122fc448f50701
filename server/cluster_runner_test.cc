// ClusterRunner: lease rounds when due, pumps between them, errors noted
// and cleared, and the thread applies what is published, then leaves.
#include "server/cluster_runner.h"

#include <stdlib.h>
#include <unistd.h>

#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "cluster/batch_publisher.h"
#include "cluster/testing/fake_event_log.h"
#include "cluster/testing/fake_lease_store.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace goodput::server {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::SizeIs;

constexpr int64_t kSecond = 1'000'000'000;
constexpr int64_t kTtl = 9 * kSecond;
constexpr int32_t kPartitions = 4;

// Counts applied events; tests wait on the count.
class CountingSink : public cluster::PartitionSink {
 public:
  absl::StatusOr<uint64_t> LastApplied(int32_t p) override {
    absl::MutexLock lock(&mu_);
    return last_[p];
  }
  absl::Status Apply(int32_t p, uint64_t seq, const v1::Batch& b) override {
    absl::MutexLock lock(&mu_);
    last_[p] = seq;
    events_ += b.events_size();
    return absl::OkStatus();
  }
  // Each ApplyAll advances `clock` by `ns` (a slow apply).
  void AdvanceEachRun(FakeClock* clock, int64_t ns) {
    absl::MutexLock lock(&mu_);
    clock_ = clock;
    advance_ns_ = ns;
  }
  absl::Status ApplyAll(int32_t p,
                        std::vector<cluster::SequencedBatch>* run) override {
    {
      absl::MutexLock lock(&mu_);
      ++runs_;
      if (clock_ != nullptr) clock_->Advance(advance_ns_);
    }
    return PartitionSink::ApplyAll(p, run);
  }
  int64_t runs() {
    absl::MutexLock lock(&mu_);
    return runs_;
  }
  int64_t events() {
    absl::MutexLock lock(&mu_);
    return events_;
  }
  bool AwaitEvents(int64_t n) {
    absl::MutexLock lock(&mu_);
    auto enough = [this, n]()
                      ABSL_SHARED_LOCKS_REQUIRED(mu_) { return events_ >= n; };
    return mu_.AwaitWithTimeout(absl::Condition(&enough), absl::Seconds(60));
  }

 private:
  absl::Mutex mu_;
  std::map<int32_t, uint64_t> last_ ABSL_GUARDED_BY(mu_);
  int64_t events_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t runs_ ABSL_GUARDED_BY(mu_) = 0;
  FakeClock* clock_ ABSL_GUARDED_BY(mu_) = nullptr;
  int64_t advance_ns_ ABSL_GUARDED_BY(mu_) = 0;
};

class ClusterRunnerTest : public ::testing::Test {
 protected:
  ClusterRunnerTest()
      : clock_(1000 * kSecond),
        store_(&clock_, kTtl),
        publisher_(&log_, {.partitions = kPartitions}),
        leases_(&store_, &clock_,
                {.self = "a", .partitions = kPartitions, .ttl_ns = kTtl}),
        member_(&leases_, &log_, &sink_, &publisher_),
        runner_(&leases_, &member_, &clock_, {.tick_ns = kTtl / 3}) {}

  void Publish(int batches) {
    for (int s = 1; s <= batches; ++s) {
      v1::Batch b;
      b.set_agent_id("x");
      b.set_sequence(++sequence_);
      for (int j = 0; j < 10; ++j) {
        b.add_events()->set_job_id(absl::StrCat("job-", j));
      }
      ASSERT_TRUE(publisher_.Publish(b).ok());
    }
  }

  FakeClock clock_;
  cluster::FakeLeaseStore store_;
  cluster::FakeEventLog log_;
  cluster::BatchPublisher publisher_;
  CountingSink sink_;
  cluster::LeaseKeeper leases_;
  cluster::ClusterMember member_;
  ClusterRunner runner_;
  uint64_t sequence_ = 0;
};

TEST_F(ClusterRunnerTest, RoundsRunWhenDueAndPumpsBetweenThem) {
  Publish(3);
  EXPECT_TRUE(runner_.Step());
  ClusterRunnerStatus s = runner_.status();
  EXPECT_EQ(s.rounds, 1);
  EXPECT_THAT(s.held, SizeIs(kPartitions));
  EXPECT_EQ(s.unowned, 0);
  EXPECT_GT(s.applied, 0);
  EXPECT_FALSE(runner_.Step());  // nothing new, no round due
  EXPECT_EQ(runner_.status().rounds, 1);
  clock_.Advance(kTtl / 3);
  Publish(1);
  EXPECT_TRUE(runner_.Step());
  EXPECT_EQ(runner_.status().rounds, 2);
}

// A pump whose applying outlasts the time to the next round (the sink
// advances the clock a tick per partition's run) starts no further
// partition; the next step runs the round first and goes on with the next
// partition. So a long catch-up renews the leases on time (without the
// stop, the third partition of the first pump would find its lease lapsed
// at TTL/2) and applies everything once.
TEST_F(ClusterRunnerTest, ALongPumpLeavesTheNextPartitionsForAfterTheRound) {
  Publish(3);
  std::set<std::string> subjects;
  for (const auto& m : log_.messages()) subjects.insert(m.subject);
  ASSERT_EQ(subjects.size(), static_cast<size_t>(kPartitions));
  sink_.AdvanceEachRun(&clock_, kTtl / 3);
  std::vector<int64_t> runs;
  for (int i = 0; i < kPartitions; ++i) {
    EXPECT_TRUE(runner_.Step()) << i;
    runs.push_back(sink_.runs());
    EXPECT_THAT(runner_.status().held, SizeIs(kPartitions)) << i;
  }
  EXPECT_THAT(runs, ElementsAre(1, 2, 3, 4));
  EXPECT_EQ(runner_.status().rounds, kPartitions);
  EXPECT_EQ(runner_.status().errors, 0);
  EXPECT_EQ(sink_.events(), 30);
}

TEST_F(ClusterRunnerTest, AFailedRoundIsNotedUntilOneWorks) {
  store_.set_unavailable(true);
  runner_.Step();
  ClusterRunnerStatus s = runner_.status();
  EXPECT_EQ(s.errors, 1);
  EXPECT_THAT(s.last_error, ::testing::Not(IsEmpty()));
  EXPECT_THAT(s.held, IsEmpty());
  store_.set_unavailable(false);
  clock_.Advance(kTtl / 3);
  runner_.Step();
  s = runner_.status();
  EXPECT_THAT(s.last_error, IsEmpty());
  EXPECT_THAT(s.held, SizeIs(kPartitions));
}

// The log says when the log becomes unreachable, again only once a minute
// while it stays so, and when it is back; the status says why meanwhile.
TEST(ClusterRunnerReachableTest, UnreachableIsLoggedRateLimitedAndCleared) {
  FakeClock clock(1000 * kSecond);
  cluster::FakeLeaseStore store(&clock, kTtl);
  cluster::FakeEventLog log;
  cluster::BatchPublisher publisher(&log, {.partitions = kPartitions});
  CountingSink sink;
  cluster::LeaseKeeper leases(
      &store, &clock, {.self = "a", .partitions = kPartitions, .ttl_ns = kTtl});
  cluster::ClusterMember member(&leases, &log, &sink, &publisher);
  char path[] = "/tmp/goodput-runner-log-XXXXXX";
  const int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  absl::Status reachable;
  ClusterRunner runner(
      &leases, &member, &clock,
      {.tick_ns = kTtl / 3,
       .reachable = [&] { return reachable; },
       .log = Logger("goodputd", Logger::Format::kText, &clock, fd),
       .unreachable_log_every_ns = 60 * kSecond});
  auto lines = [&] {
    std::ifstream in(path);
    std::vector<std::string> out;
    for (std::string l; std::getline(in, l);) out.push_back(l);
    return out;
  };
  runner.Step();
  EXPECT_THAT(runner.status().unreachable, IsEmpty());
  reachable = absl::UnavailableError("NATS unreachable (nats://x:1)");
  runner.Step();
  EXPECT_EQ(runner.status().unreachable, "NATS unreachable (nats://x:1)");
  clock.Advance(59 * kSecond);
  runner.Step();  // not again within the minute
  EXPECT_THAT(lines(), SizeIs(1));
  clock.Advance(1 * kSecond);
  runner.Step();
  reachable = absl::OkStatus();
  clock.Advance(5 * kSecond);
  runner.Step();
  runner.Step();
  EXPECT_THAT(runner.status().unreachable, IsEmpty());
  const std::vector<std::string> got = lines();
  ASSERT_THAT(got, SizeIs(3));
  EXPECT_EQ(got[0],
            "goodputd: NATS unreachable (nats://x:1); agents' batches are "
            "refused UNAVAILABLE and stay spooled");
  EXPECT_THAT(got[1], HasSubstr("(nats://x:1) for 1m; agents'"));
  EXPECT_EQ(got[2], "goodputd: cluster log reachable again after 1m5s");
  runner.Stop();
  close(fd);
  unlink(path);
}

TEST_F(ClusterRunnerTest, TheThreadAppliesWhatIsPublishedAndStopLeaves) {
  runner_.Start();
  Publish(5);
  EXPECT_TRUE(sink_.AwaitEvents(50));
  runner_.Stop();
  EXPECT_THAT(runner_.status().held, IsEmpty());
  absl::StatusOr<std::vector<std::string>> keys = store_.Keys();
  ASSERT_TRUE(keys.ok());
  EXPECT_THAT(*keys, IsEmpty());  // leases and membership given back
  runner_.Stop();                 // idempotent
}

}  // namespace
}  // namespace goodput::server
