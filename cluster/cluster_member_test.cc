#include "cluster/cluster_member.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"
#include "cluster/partition_snapshots.h"
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
  absl::Status ApplyAll(int32_t p, std::vector<SequencedBatch>* run) override {
    {
      absl::MutexLock lock(&mu_);
      runs_[p].push_back(static_cast<int>(run->size()));
    }
    return PartitionSink::ApplyAll(p, run);
  }
  // The sizes of the runs ApplyAll got for `p`, in order.
  std::vector<int> Runs(int32_t p) {
    absl::MutexLock lock(&mu_);
    return runs_[p];
  }
  std::vector<uint64_t> Applied(int32_t p) {
    absl::MutexLock lock(&mu_);
    return applied_[p];
  }
  // A snapshot is the list of applied sequences; importing one replaces
  // the partition's list, so a repeat or a gap after it shows.
  absl::StatusOr<PartitionState> ExportPartition(int32_t p) override {
    absl::MutexLock lock(&mu_);
    PartitionState state;
    state.sequence = applied_[p].empty() ? 0 : applied_[p].back();
    state.body = absl::StrJoin(applied_[p], ",");
    return state;
  }
  absl::Status ImportPartition(int32_t p,
                               const PartitionState& state) override {
    absl::MutexLock lock(&mu_);
    std::vector<uint64_t> seqs;
    for (absl::string_view s : absl::StrSplit(state.body, ',')) {
      uint64_t seq = 0;
      if (!absl::SimpleAtoi(s, &seq)) return absl::DataLossError("body");
      seqs.push_back(seq);
    }
    if (seqs.empty() || seqs.back() != state.sequence) {
      return absl::DataLossError("sequence");
    }
    applied_[p] = std::move(seqs);
    ++imports_;
    return absl::OkStatus();
  }
  int imports() {
    absl::MutexLock lock(&mu_);
    return imports_;
  }

 private:
  absl::Mutex mu_;
  std::map<int32_t, std::vector<uint64_t>> applied_ ABSL_GUARDED_BY(mu_);
  std::map<int32_t, std::vector<int>> runs_ ABSL_GUARDED_BY(mu_);
  int64_t events_ ABSL_GUARDED_BY(mu_) = 0;
  int imports_ ABSL_GUARDED_BY(mu_) = 0;
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

  void Publish(const std::string& agent, int batches, int jobs = 10) {
    for (int s = 1; s <= batches; ++s) {
      v1::Batch b;
      b.set_agent_id(agent);
      b.set_sequence(s);
      for (int j = 0; j < jobs; ++j) {
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

// A pump out of time after its first partition leaves the rest to the
// next pumps, which go on from there: held partitions {0..7} with 4
// messages each; pump k (always out of time) applies the k-th partition of
// the reader order only, so after as many pumps as readers every partition
// has everything, each once and in order.
TEST_F(ClusterMemberTest, APumpOutOfTimeGoesOnWithTheNextPartitionNextTime) {
  Member a("a", &store_, &clock_, &log_, &pub_);
  ASSERT_TRUE(a.member.TickLeases().ok());
  Publish("x", 4, /*jobs=*/64);
  const std::vector<int32_t> order = a.member.Applying();
  ASSERT_EQ(order.size(), static_cast<size_t>(kPartitions));
  for (int32_t p : order) ASSERT_EQ(Subject(p).size(), 4u) << p;
  int asked = 0;
  auto out_of_time = [&asked] {
    ++asked;
    return true;
  };
  for (size_t k = 0; k < order.size(); ++k) {
    ASSERT_TRUE(a.member.Pump(1000, 0, out_of_time).ok());
    for (size_t j = 0; j < order.size(); ++j) {
      const int32_t p = order[j];
      EXPECT_EQ(a.sink.Applied(p).size(), j <= k ? Subject(p).size() : 0u)
          << "after pump " << k << ", partition " << p;
    }
  }
  EXPECT_EQ(asked, kPartitions);  // once per pump, before its second
  for (int32_t p = 0; p < kPartitions; ++p) {
    EXPECT_THAT(a.sink.Applied(p), ElementsAreArray(Subject(p))) << p;
  }
}

// The sink gets each partition's fetched messages as one run.
TEST_F(ClusterMemberTest, APartitionsFetchedMessagesGoToTheSinkAsOneRun) {
  Member a("a", &store_, &clock_, &log_, &pub_);
  ASSERT_TRUE(a.member.TickLeases().ok());
  Publish("x", 6);
  ASSERT_TRUE(a.member.Pump(1000, 0).ok());
  int32_t busiest = 0;
  for (int32_t p = 0; p < kPartitions; ++p) {
    if (Subject(p).size() > Subject(busiest).size()) busiest = p;
  }
  ASSERT_EQ(Subject(busiest).size(), 6u);
  EXPECT_THAT(a.sink.Runs(busiest), ElementsAreArray({6}));
  Publish("y", 2);
  ASSERT_TRUE(a.member.Pump(1000, 0).ok());
  EXPECT_THAT(a.sink.Runs(busiest), ElementsAreArray({6, 2}));
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

namespace goodput::cluster {
namespace {

// Members that publish snapshots (every 25 events of a partition) to their
// own log, and take partitions over from them.
class ClusterMemberSnapshotTest : public ClusterMemberTest {
 protected:
  void Enable(Member* m) {
    m->member.EnableSnapshots(
        &snapshots_, &clock_,
        {.self = "m", .every_events = 25, .every_ns = 1000 * kSecond});
  }
  int64_t Applied(const std::vector<int>& runs) {
    int64_t n = 0;
    for (int r : runs) n += r;
    return n;
  }

  FakeEventLog snapshot_log_;
  PartitionSnapshots snapshots_{&snapshot_log_};
};

// a applies everything and publishes snapshots; b never applied anything,
// takes every partition over when a dies, imports the newest snapshot and
// reads only the messages after it: every message applied exactly once
// (the snapshot's and the tail's neither overlap nor leave a gap).
TEST_F(ClusterMemberSnapshotTest, ATakeoverReadsTheNewestSnapshotAndTheTail) {
  Member a("a", &store_, &clock_, &log_, &pub_);
  Enable(&a);
  Round({&a});
  Publish("x", 40);  // 40 events per job, 10 jobs: 400 events
  for (int i = 0; i < 3; ++i) Round({&a});
  EXPECT_GT(a.member.snapshot_stats().published, 0);
  EXPECT_EQ(a.member.snapshot_stats().publish_errors, 0);
  Publish("y", 7);  // after a's last snapshots: the tail
  Member b("b", &store_, &clock_, &log_, &pub_);
  Enable(&b);
  for (int i = 0; i < 5; ++i) Round({&b});  // a is dead
  int64_t tail = 0, imported = 0;
  for (int32_t p = 0; p < kPartitions; ++p) {
    ASSERT_TRUE(b.leases.Holds(p)) << p;
    // b's record: the snapshot's messages, then the tail's.
    EXPECT_THAT(b.sink.Applied(p), ElementsAreArray(Subject(p))) << p;
    const std::vector<uint64_t> snap = a.sink.Applied(p);
    const int64_t read = Applied(b.sink.Runs(p));
    tail += read;
    if (!snap.empty() && Subject(p).size() > 7) {
      ++imported;
      // Only the messages after a's last snapshot were read from the log.
      EXPECT_LT(read, static_cast<int64_t>(Subject(p).size())) << p;
    }
  }
  EXPECT_GT(imported, 0);
  EXPECT_EQ(b.sink.imports(), b.member.snapshot_stats().imported);
  EXPECT_GT(b.member.snapshot_stats().imported, 0);
  EXPECT_GT(b.member.snapshot_stats().chunks_read, 0);
  int64_t all = 0;
  for (int32_t p = 0; p < kPartitions; ++p) all += Subject(p).size();
  EXPECT_LT(tail, all / 2);
}

// A member that applied a partition further than the newest snapshot goes
// on from its own last applied message: the snapshot is not imported.
TEST_F(ClusterMemberSnapshotTest, ASnapshotBehindTheTakerIsNotImported) {
  Member a("a", &store_, &clock_, &log_, &pub_);
  Publish("x", 30);
  for (int i = 0; i < 3; ++i) Round({&a});  // a applies everything
  ASSERT_TRUE(a.leases.Leave().ok());
  for (int32_t p = 0; p < kPartitions; ++p) {
    if (Subject(p).empty()) continue;
    SnapshotHeader old;
    old.id = absl::StrCat("old-", p);
    old.partition = p;
    old.sequence = Subject(p).front();
    ASSERT_TRUE(snapshots_.Publish(old, absl::StrCat(old.sequence)).ok());
  }
  Enable(&a);
  for (int i = 0; i < 2; ++i) Round({&a});  // a takes them again
  EXPECT_EQ(a.sink.imports(), 0);
  EXPECT_EQ(a.member.snapshot_stats().imported, 0);
  for (int32_t p = 0; p < kPartitions; ++p) {
    ASSERT_TRUE(a.leases.Holds(p)) << p;
    EXPECT_THAT(a.sink.Applied(p), ElementsAreArray(Subject(p))) << p;
  }
}

// Imports happen in pumps, one partition at least and no further one once
// the next lease round is due, so they never delay the leases' renewal.
TEST_F(ClusterMemberSnapshotTest, APumpOutOfTimeOpensOnePartitionOnly) {
  Member a("a", &store_, &clock_, &log_, &pub_);
  Enable(&a);
  ASSERT_TRUE(a.member.TickLeases().ok());
  EXPECT_THAT(a.member.Applying(), IsEmpty());  // not in the lease round
  ASSERT_TRUE(a.member.Pump(1000, 0, [] { return true; }).ok());
  EXPECT_EQ(a.member.Applying().size(), 1u);
  ASSERT_TRUE(a.member.Pump(1000, 0).ok());
  EXPECT_EQ(a.member.Applying().size(), static_cast<size_t>(kPartitions));
}

}  // namespace
}  // namespace goodput::cluster
