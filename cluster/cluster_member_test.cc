#include "cluster/cluster_member.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "cluster/testing/fake_event_log.h"
#include "cluster/testing/fake_lease_store.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace goodput::cluster {
namespace {

using ::testing::ElementsAreArray;
using ::testing::IsEmpty;

constexpr int64_t kSecond = 1000 * 1000 * 1000;
constexpr int64_t kTtl = 9 * kSecond;
constexpr int32_t kPartitions = 8;

// Remembers every applied (partition, sequence) and fails the test on a
// sequence at or below the partition's last one (applied twice or out of
// order).
class RecordingSink : public PartitionSink {
 public:
  absl::StatusOr<uint64_t> LastApplied(int32_t p) override {
    absl::MutexLock lock(&mu_);
    return applied_[p].empty() ? 0 : applied_[p].back();
  }
  absl::Status Apply(int32_t p, uint64_t seq, const v1::Batch& b) override {
    absl::MutexLock lock(&mu_);
    std::vector<uint64_t>& seqs = applied_[p];
    EXPECT_TRUE(seqs.empty() || seq > seqs.back())
        << "partition " << p << " sequence " << seq;
    seqs.push_back(seq);
    events_ += b.events_size();
    return absl::OkStatus();
  }
  std::vector<uint64_t> Applied(int32_t p) {
    absl::MutexLock lock(&mu_);
    return applied_[p];
  }

 private:
  absl::Mutex mu_;
  std::map<int32_t, std::vector<uint64_t>> applied_ ABSL_GUARDED_BY(mu_);
  int64_t events_ ABSL_GUARDED_BY(mu_) = 0;
};

struct Member {
  Member(const std::string& id, LeaseStore* store, Clock* clock, EventLog* log,
         const BatchPublisher* subjects)
      : leases(store, clock,
               {.self = id, .partitions = kPartitions, .ttl_ns = kTtl}),
        member(&leases, log, &sink, subjects) {}
  LeaseKeeper leases;
  RecordingSink sink;
  ClusterMember member;
};

class ClusterMemberTest : public ::testing::Test {
 protected:
  ClusterMemberTest()
      : clock_(1000 * kSecond),
        store_(&clock_, kTtl),
        pub_(&log_, {.partitions = kPartitions}) {}

  void Publish(const std::string& agent, int batches) {
    for (int s = 1; s <= batches; ++s) {
      v1::Batch b;
      b.set_agent_id(agent);
      b.set_sequence(s);
      for (int j = 0; j < 10; ++j) {
        v1::Event* e = b.add_events();
        e->set_job_id(absl::StrCat("job-", j));
        e->mutable_step()->set_step(s);
      }
      ASSERT_TRUE(pub_.Publish(b).ok());
    }
  }
  void Round(const std::vector<Member*>& alive) {
    for (Member* m : alive) m->member.TickLeases().IgnoreError();
    for (Member* m : alive) ASSERT_TRUE(m->member.Pump(1000, 0).ok());
    clock_.Advance(kTtl / 3);
  }
  // Every message of partition p's subject, in order.
  std::vector<uint64_t> Subject(int32_t p) {
    std::vector<uint64_t> seqs;
    std::vector<FakeEventLog::Message> all = log_.messages();
    for (size_t i = 0; i < all.size(); ++i) {
      const std::string subject = p == kHeartbeatPartition
                                      ? pub_.HeartbeatSubject()
                                      : pub_.PartitionSubject(p);
      if (all[i].subject == subject) seqs.push_back(i + 1);
    }
    return seqs;
  }

  FakeClock clock_;
  FakeLeaseStore store_;
  FakeEventLog log_;
  BatchPublisher pub_;
};

TEST_F(ClusterMemberTest, EachOwnerAppliesItsPartitionsOnceInOrder) {
  Publish("x", 20);
  Member a("a", &store_, &clock_, &log_, &pub_);
  Member b("b", &store_, &clock_, &log_, &pub_);
  Round({&a});
  Round({&a, &b});
  Round({&a, &b});
  Publish("y", 20);
  Round({&a, &b});
  for (int32_t p = 0; p < kPartitions; ++p) {
    Member& owner = a.leases.Holds(p) ? a : b;
    ASSERT_TRUE(owner.leases.Holds(p)) << p;
    EXPECT_THAT(owner.sink.Applied(p), ElementsAreArray(Subject(p))) << p;
  }
  EXPECT_FALSE(b.member.Applying().empty());
}

TEST_F(ClusterMemberTest, ATakeoverGoesOnFromWhatTheTakerAppliedBefore) {
  Publish("x", 10);
  Member a("a", &store_, &clock_, &log_, &pub_);
  Round({&a});  // a applies everything so far
  Member b("b", &store_, &clock_, &log_, &pub_);
  Round({&a, &b});
  Round({&a, &b});  // b's share moved to b
  Publish("y", 10);
  Round({&a, &b});
  // b dies; a takes its share back after the TTL and reads only what it
  // has not applied: the sink fails the test on any repeat.
  for (int i = 0; i < 5; ++i) Round({&a});
  Publish("z", 10);
  Round({&a});
  for (int32_t p = 0; p < kPartitions; ++p) {
    ASSERT_TRUE(a.leases.Holds(p)) << p;
    EXPECT_THAT(a.sink.Applied(p), ElementsAreArray(Subject(p))) << p;
  }
}

TEST_F(ClusterMemberTest, ALapsedLeaseStopsApplyingAtOnce) {
  Member a("a", &store_, &clock_, &log_, &pub_);
  Round({&a});
  ASSERT_FALSE(a.member.Applying().empty());
  clock_.Advance(kTtl);  // no renewal: a must not apply any more
  Publish("x", 5);
  absl::StatusOr<int64_t> n = a.member.Pump(1000, 0);
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(*n, 0);
  EXPECT_THAT(a.member.Applying(), IsEmpty());
}

TEST_F(ClusterMemberTest, AnUnparsableMessageIsCountedAndSkippedOnce) {
  Member a("a", &store_, &clock_, &log_, &pub_);
  Round({&a});
  ASSERT_TRUE(log_.Publish(pub_.PartitionSubject(3), "junk", "\xff\xff").ok());
  Publish("x", 3);
  Round({&a});
  EXPECT_EQ(a.member.unparsable(), 1);
  EXPECT_THAT(a.sink.Applied(3), ElementsAreArray(Subject(3)));
}

TEST_F(ClusterMemberTest, EveryMemberAppliesEveryHeartbeatWithoutALease) {
  Member a("a", &store_, &clock_, &log_, &pub_);
  Member b("b", &store_, &clock_, &log_, &pub_);
  Round({&a, &b});
  Round({&a, &b});
  for (int s = 1; s <= 3; ++s) {
    v1::Batch beats;
    beats.set_agent_id("host-agent");
    beats.set_sequence(s);
    beats.add_events()->mutable_heartbeat()->set_chips(8);
    beats.add_events()->set_job_id("job-1");
    ASSERT_TRUE(pub_.Publish(beats).ok());
  }
  clock_.Advance(kTtl);  // leases lapse: heartbeats need none
  ASSERT_TRUE(a.member.Pump(1000, 0).ok());
  ASSERT_TRUE(b.member.Pump(1000, 0).ok());
  ASSERT_EQ(Subject(kHeartbeatPartition).size(), 3u);
  EXPECT_THAT(a.sink.Applied(kHeartbeatPartition),
              ElementsAreArray(Subject(kHeartbeatPartition)));
  EXPECT_THAT(b.sink.Applied(kHeartbeatPartition),
              ElementsAreArray(Subject(kHeartbeatPartition)));
}

}  // namespace
}  // namespace goodput::cluster
