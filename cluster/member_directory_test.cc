#include "cluster/member_directory.h"

#include <memory>
#include <string>
#include <vector>

#include "cluster/lease_keeper.h"
#include "cluster/testing/fake_lease_store.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace goodput::cluster {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr int64_t kSecond = 1000 * 1000 * 1000;
constexpr int64_t kTtl = 9 * kSecond;
constexpr int32_t kPartitions = 16;

MATCHER_P2(IsMember, id, address, "") {
  return arg.id == id && arg.address == address;
}

TEST(MemberValueTest, HoldsTheAdvertisedAddressOrTheIdAlone) {
  EXPECT_EQ(MemberValue("gp-1", "10.0.0.1:7700"), "advertise=10.0.0.1:7700");
  EXPECT_EQ(MemberValue("gp-1", ""), "gp-1");
  EXPECT_EQ(AdvertisedAddress("advertise=h:1"), "h:1");
  EXPECT_EQ(AdvertisedAddress("gp-1"), "");  // an older member's record
  EXPECT_EQ(AdvertisedAddress(""), "");
}

class MemberDirectoryTest : public ::testing::Test {
 protected:
  MemberDirectoryTest()
      : clock_(1000 * kSecond), store_(&clock_, kTtl), directory_(&store_) {}

  LeaseKeeper& Add(const std::string& id, const std::string& advertise) {
    keepers_.push_back(std::make_unique<LeaseKeeper>(
        &store_, &clock_,
        LeaseKeeperOptions{.self = id,
                           .partitions = kPartitions,
                           .ttl_ns = kTtl,
                           .advertise = advertise}));
    return *keepers_.back();
  }

  FakeClock clock_;
  FakeLeaseStore store_;
  MemberDirectory directory_;
  std::vector<std::unique_ptr<LeaseKeeper>> keepers_;
};

TEST_F(MemberDirectoryTest, ListsTheLiveMembersWithTheirAddresses) {
  LeaseKeeper& b = Add("gp-b", "host-b:7700");
  LeaseKeeper& a = Add("gp-a", "host-a:7700");
  LeaseKeeper& old = Add("gp-old", "");
  for (LeaseKeeper* k : {&b, &a, &old}) ASSERT_TRUE(k->Tick().status.ok());
  auto members = directory_.Members();
  ASSERT_TRUE(members.ok()) << members.status();
  EXPECT_THAT(*members, ElementsAre(IsMember("gp-a", "host-a:7700"),
                                    IsMember("gp-b", "host-b:7700"),
                                    IsMember("gp-old", "")));
  // A member that left (or whose key expired) is gone from the list.
  ASSERT_TRUE(b.Leave().ok());
  members = directory_.Members();
  ASSERT_TRUE(members.ok());
  EXPECT_THAT(*members, ElementsAre(IsMember("gp-a", "host-a:7700"),
                                    IsMember("gp-old", "")));
  clock_.Advance(kTtl);
  members = directory_.Members();
  ASSERT_TRUE(members.ok());
  EXPECT_TRUE(members->empty());
}

TEST_F(MemberDirectoryTest, NamesEachPartitionsHolderAndNotFoundForNone) {
  LeaseKeeper& a = Add("gp-a", "host-a:1");
  LeaseKeeper& b = Add("gp-b", "host-b:1");
  // Two rounds: the first sees only itself as a member.
  for (int round = 0; round < 2; ++round) {
    for (LeaseKeeper* k : {&a, &b}) ASSERT_TRUE(k->Tick().status.ok());
  }
  for (int32_t p = 0; p < kPartitions; ++p) {
    auto holder = directory_.HolderOf(p);
    ASSERT_TRUE(holder.ok()) << p << ": " << holder.status();
    EXPECT_EQ(*holder, a.Holds(p) ? "gp-a" : "gp-b") << p;
    EXPECT_NE(a.Holds(p), b.Holds(p)) << p;
  }
  ASSERT_FALSE(a.Held().empty());
  ASSERT_FALSE(b.Held().empty());
  // gp-a leaves: its partitions have no holder until gp-b's next round.
  ASSERT_TRUE(a.Leave().ok());
  for (int32_t p = 0; p < kPartitions; ++p) {
    if (b.Holds(p)) continue;
    auto holder = directory_.HolderOf(p);
    EXPECT_TRUE(absl::IsNotFound(holder.status())) << p;
    EXPECT_THAT(holder.status().message(), HasSubstr("has no owner now"));
  }
}

TEST_F(MemberDirectoryTest, PassesStoreErrorsOn) {
  store_.set_unavailable(true);
  EXPECT_TRUE(absl::IsUnavailable(directory_.Members().status()));
  EXPECT_TRUE(absl::IsUnavailable(directory_.HolderOf(0).status()));
}

}  // namespace
}  // namespace goodput::cluster
