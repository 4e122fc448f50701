#include "cluster/partition_assigner.h"

#include <map>
#include <set>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "util/shard_map.h"

namespace goodput::cluster {
namespace {

using ::testing::IsEmpty;

std::map<std::string, int> Counts(int32_t partitions,
                                  const std::vector<std::string>& members) {
  std::map<std::string, int> counts;
  for (int32_t p = 0; p < partitions; ++p) ++counts[OwnerOf(p, members)];
  return counts;
}

TEST(PartitionAssignerTest, EveryPartitionHasExactlyOneOwner) {
  const std::vector<std::string> members = {"a", "b", "c"};
  std::set<int32_t> seen;
  for (const std::string& m : members) {
    for (int32_t p : PartitionsOf(m, 64, members)) {
      EXPECT_TRUE(seen.insert(p).second) << p << " twice";
    }
  }
  EXPECT_EQ(seen.size(), 64u);
}

TEST(PartitionAssignerTest, MembersShareAboutEvenly) {
  // 3 members x 64 partitions: each owns 21.3 on average; rendezvous
  // hashing's spread at this size stays well inside 12..31.
  for (const auto& [m, n] :
       Counts(64, {"goodputd-0", "goodputd-1", "goodputd-2"})) {
    EXPECT_GE(n, 12) << m;
    EXPECT_LE(n, 31) << m;
  }
  // 1,024 partitions: within 15% of the mean.
  for (const auto& [m, n] : Counts(1024, {"x", "y", "z", "w"})) {
    EXPECT_NEAR(n, 256, 40) << m;
  }
}

TEST(PartitionAssignerTest, AJoinerTakesOnlyWhatItWinsAndALeaverOnlyGives) {
  const std::vector<std::string> three = {"a", "b", "c"};
  const std::vector<std::string> four = {"a", "b", "c", "d"};
  int moved = 0;
  for (int32_t p = 0; p < 256; ++p) {
    const std::string before = OwnerOf(p, three);
    const std::string after = OwnerOf(p, four);
    if (before != after) {
      EXPECT_EQ(after, "d") << p;  // nothing moves between old members
      ++moved;
    }
  }
  EXPECT_NEAR(moved, 64, 24);  // about a quarter
}

TEST(PartitionAssignerTest, OrderOfTheMemberListDoesNotMatter) {
  for (int32_t p = 0; p < 64; ++p) {
    EXPECT_EQ(OwnerOf(p, {"a", "b", "c"}), OwnerOf(p, {"c", "a", "b"}));
  }
}

TEST(PartitionAssignerTest, ANonMemberOwnsNothing) {
  EXPECT_THAT(PartitionsOf("z", 64, {"a", "b"}), IsEmpty());
  EXPECT_THAT(PartitionsOf("a", 64, {}), IsEmpty());
  EXPECT_EQ(PartitionsOf("a", 64, {"a"}).size(), 64u);
}

TEST(PartitionAssignerTest, JobsMapLikeTheStaticShardList) {
  ShardMap shards({"a:1", "b:2", "c:3", "d:4"});
  for (const char* job : {"llm-7", "job-0", "", "x"}) {
    EXPECT_EQ(PartitionOfJob(job, 4),
              static_cast<int32_t>(shards.ShardOf(job)));
  }
}

}  // namespace
}  // namespace goodput::cluster
