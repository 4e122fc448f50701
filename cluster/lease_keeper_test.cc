#include "cluster/lease_keeper.h"

#include <algorithm>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "cluster/partition_assigner.h"
#include "cluster/testing/fake_lease_store.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace goodput::cluster {
namespace {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::UnorderedElementsAreArray;

constexpr int64_t kSecond = 1000 * 1000 * 1000;
constexpr int64_t kTtl = 9 * kSecond;
constexpr int32_t kPartitions = 16;

class LeaseKeeperTest : public ::testing::Test {
 protected:
  LeaseKeeperTest() : clock_(1000 * kSecond), store_(&clock_, kTtl) {}

  LeaseKeeper& Add(const std::string& id) {
    keepers_.push_back(std::make_unique<LeaseKeeper>(
        &store_, &clock_,
        LeaseKeeperOptions{
            .self = id, .partitions = kPartitions, .ttl_ns = kTtl}));
    return *keepers_.back();
  }
  // One round of every keeper in `alive`, then the clock moves ttl/3; and
  // at no moment is a partition held twice.
  void Round(const std::vector<LeaseKeeper*>& alive) {
    for (LeaseKeeper* k : alive) {
      LeaseChanges c = k->Tick();
      EXPECT_TRUE(c.status.ok()) << c.status;
      ExpectNoPartitionHeldTwice();
    }
    clock_.Advance(kTtl / 3);
    ExpectNoPartitionHeldTwice();
  }
  void ExpectNoPartitionHeldTwice() {
    std::set<int32_t> seen;
    for (const auto& k : keepers_) {
      for (int32_t p : k->Held()) EXPECT_TRUE(seen.insert(p).second) << p;
    }
  }
  std::vector<int32_t> All() {
    std::vector<int32_t> all(kPartitions);
    for (int32_t p = 0; p < kPartitions; ++p) all[p] = p;
    return all;
  }

  FakeClock clock_;
  FakeLeaseStore store_;
  std::vector<std::unique_ptr<LeaseKeeper>> keepers_;
};

TEST_F(LeaseKeeperTest, ALoneInstanceTakesEveryPartition) {
  LeaseKeeper& a = Add("a");
  LeaseChanges c = a.Tick();
  ASSERT_TRUE(c.status.ok()) << c.status;
  EXPECT_THAT(c.acquired, ElementsAreArray(All()));
  EXPECT_THAT(a.Held(), ElementsAreArray(All()));
  EXPECT_THAT(a.members(), ElementsAre("a"));
  // Renewing acquires nothing new.
  clock_.Advance(kTtl / 3);
  EXPECT_THAT(a.Tick().acquired, IsEmpty());
  EXPECT_THAT(a.Held(), ElementsAreArray(All()));
}

TEST_F(LeaseKeeperTest, AJoinerGetsItsShareOnceTheHolderGivesItBack) {
  LeaseKeeper& a = Add("a");
  Round({&a});
  LeaseKeeper& b = Add("b");
  Round({&a, &b});  // b ticks after a: a saw one member, b two
  EXPECT_THAT(b.Held(), IsEmpty());
  Round({&a, &b});  // a gives back b's share, b takes it
  EXPECT_THAT(a.Held(),
              ElementsAreArray(PartitionsOf("a", kPartitions, {"a", "b"})));
  EXPECT_THAT(b.Held(),
              ElementsAreArray(PartitionsOf("b", kPartitions, {"a", "b"})));
  EXPECT_FALSE(b.Held().empty());
  EXPECT_EQ(a.Held().size() + b.Held().size(), kPartitions);
}

TEST_F(LeaseKeeperTest, AnInstanceThatMissedARenewalTakesItsLeasesBack) {
  LeaseKeeper& a = Add("a");
  Round({&a});
  clock_.Advance(kTtl / 3);  // a's renewal is overdue (2/3 ttl > ttl/2)...
  EXPECT_THAT(a.Held(), IsEmpty());
  LeaseChanges c = a.Tick();  // ...but its keys have not expired
  ASSERT_TRUE(c.status.ok()) << c.status;
  EXPECT_THAT(c.released, ElementsAreArray(All()));
  EXPECT_THAT(c.acquired, ElementsAreArray(All()));
  EXPECT_THAT(a.Held(), ElementsAreArray(All()));
}

TEST_F(LeaseKeeperTest, ADeadInstancesPartitionsMoveAfterTheTtl) {
  LeaseKeeper& a = Add("a");
  LeaseKeeper& b = Add("b");
  Round({&a, &b});
  Round({&a, &b});
  const std::vector<int32_t> bs = b.Held();
  ASSERT_FALSE(bs.empty());
  // b stops (kill -9): a cannot take b's leases before they expire.
  Round({&a});
  for (int32_t p : bs) EXPECT_FALSE(a.Holds(p)) << p;
  Round({&a});
  Round({&a});  // b's keys expired at its last write + ttl
  Round({&a});
  EXPECT_THAT(a.Held(), ElementsAreArray(All()));
  EXPECT_THAT(a.members(), ElementsAre("a"));
}

TEST_F(LeaseKeeperTest, AnUnreachableStoreStopsHoldingBeforeTheKeysExpire) {
  LeaseKeeper& a = Add("a");
  Round({&a});
  store_.set_unavailable(true);
  LeaseChanges c = a.Tick();
  EXPECT_TRUE(absl::IsUnavailable(c.status)) << c.status;
  EXPECT_THAT(c.released, IsEmpty());  // renewed ttl/3 ago: still valid
  clock_.Advance(kTtl / 2 - kTtl / 3);
  EXPECT_THAT(a.Held(), IsEmpty());  // ttl/2 after the last renewal
  c = a.Tick();
  EXPECT_THAT(c.released, UnorderedElementsAreArray(All()));
  // Back before the keys expire: a takes them again only once they have.
  store_.set_unavailable(false);
  LeaseKeeper& b = Add("b");
  Round({&b});
  EXPECT_THAT(b.Held(), IsEmpty());  // a's leases still there for ttl
}

// The store goes away in the middle of a round (after the membership
// calls): the round stops at the first refused call instead of making
// every partition's call wait its own timeout, so the caller learns it
// (and says it) within one call's time.
TEST_F(LeaseKeeperTest, ARoundEndsAtTheFirstCallTheStoreRefuses) {
  LeaseKeeper& a = Add("a");
  Round({&a});
  ASSERT_THAT(a.Held(), UnorderedElementsAreArray(All()));
  store_.set_unavailable_after(3);  // membership renewal, read, one lease
  LeaseChanges c = a.Tick();
  EXPECT_TRUE(absl::IsUnavailable(c.status)) << c.status;
  EXPECT_EQ(store_.refused(), 1);
  EXPECT_THAT(a.Held(), UnorderedElementsAreArray(All()));  // still valid
}

TEST_F(LeaseKeeperTest, TwoInstancesWithOneIdAreRefused) {
  LeaseKeeper& a = Add("a");
  Round({&a});
  LeaseKeeper& twin = Add("a");
  LeaseChanges c = twin.Tick();
  EXPECT_TRUE(absl::IsAlreadyExists(c.status)) << c.status;
  EXPECT_THAT(c.status.message(), HasSubstr("another live instance"));
  EXPECT_THAT(twin.Held(), IsEmpty());
}

TEST_F(LeaseKeeperTest, LeaveGivesEverythingBackAtOnce) {
  LeaseKeeper& a = Add("a");
  Round({&a});
  LeaseKeeper& b = Add("b");
  Round({&a, &b});
  ASSERT_TRUE(a.Leave().ok());
  EXPECT_THAT(a.Held(), IsEmpty());
  Round({&b});
  EXPECT_THAT(b.Held(), ElementsAreArray(All()));
  EXPECT_THAT(b.members(), ElementsAre("b"));
}

TEST_F(LeaseKeeperTest, PartitionsNobodyTakesAreCountedUnowned) {
  LeaseKeeper& a = Add("a");
  EXPECT_EQ(a.unowned(), -1);  // before any round
  Round({&a});
  EXPECT_EQ(a.unowned(), 0);
  LeaseKeeper& b = Add("b");
  ASSERT_TRUE(b.Tick().status.ok());  // b joins, then stops before taking any
  EXPECT_THAT(b.Held(), IsEmpty());
  Round({&a});  // a gives b's share back (its keys were there at the start)
  EXPECT_EQ(a.unowned(), 0);
  Round({&a});  // b's share has no lease and nobody takes it
  const int32_t share =
      static_cast<int32_t>(PartitionsOf("b", kPartitions, {"a", "b"}).size());
  ASSERT_GT(share, 0);
  EXPECT_EQ(a.unowned(), share);
  for (int i = 0; i < 3; ++i) Round({&a});  // b's membership expired
  EXPECT_EQ(a.unowned(), 0);
  EXPECT_THAT(a.Held(), ElementsAreArray(All()));
}

TEST_F(LeaseKeeperTest, OptionsAreChecked) {
  EXPECT_THAT(
      LeaseKeeper::Validate({.self = "a b", .partitions = 4, .ttl_ns = 1})
          .message(),
      HasSubstr("--cluster_id='a b'"));
  EXPECT_THAT(LeaseKeeper::Validate({.self = "a", .partitions = 0, .ttl_ns = 1})
                  .message(),
              HasSubstr("--cluster_partitions=0"));
  EXPECT_TRUE(
      LeaseKeeper::Validate({.self = "a-1_x", .partitions = 4, .ttl_ns = 1})
          .ok());
}

}  // namespace
}  // namespace goodput::cluster
