#include "util/shard_map.h"

#include <map>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace goodput {
namespace {

TEST(Fnv1a64Test, KnownVectors) {
  // From the FNV reference test suite.
  EXPECT_EQ(Fnv1a64(""), 0xcbf29ce484222325ull);
  EXPECT_EQ(Fnv1a64("a"), 0xaf63dc4c8601ec8cull);
  EXPECT_EQ(Fnv1a64("foobar"), 0x85944171f73967e8ull);
}

TEST(JumpConsistentHashTest, OneBucketIsZero) {
  for (uint64_t k = 0; k < 100; ++k) EXPECT_EQ(JumpConsistentHash(k, 1), 0);
}

TEST(JumpConsistentHashTest, GrowingMovesKeysOnlyToTheNewBucket) {
  int moved = 0;
  for (int i = 0; i < 10000; ++i) {
    const uint64_t key = Fnv1a64(absl::StrCat("job-", i));
    const int32_t before = JumpConsistentHash(key, 3);
    const int32_t after = JumpConsistentHash(key, 4);
    ASSERT_GE(before, 0);
    ASSERT_LT(before, 3);
    if (after != before) {
      EXPECT_EQ(after, 3);
      ++moved;
    }
  }
  EXPECT_GT(moved, 2000);  // about a quarter
  EXPECT_LT(moved, 3000);
}

TEST(ShardMapTest, SpreadsJobsOverEveryShard) {
  ShardMap map({"a:1", "b:2", "c:3"});
  std::map<size_t, int> count;
  for (int i = 0; i < 3000; ++i) ++count[map.ShardOf(absl::StrCat("j", i))];
  ASSERT_EQ(count.size(), 3u);
  for (const auto& [shard, n] : count) EXPECT_GT(n, 800) << shard;
}

TEST(ShardMapTest, PinnedPlacements) {
  // Changing these breaks every deployed shard map: data would be on the
  // wrong shard. Never update them; reshard instead (docs/scaling.md).
  ShardMap map({"a:1", "b:2", "c:3"});
  EXPECT_EQ(map.ShardOf("job-1"), 0u);
  EXPECT_EQ(map.ShardOf("job-2"), 2u);
  EXPECT_EQ(map.ShardOf("train-llm-7b"), 2u);
  EXPECT_EQ(JumpConsistentHash(Fnv1a64("job-1"), 10), 8);
  EXPECT_EQ(JumpConsistentHash(Fnv1a64("serve-a"), 10), 5);
  // Hosts' capacity shards, by the same rule.
  EXPECT_EQ(map.CapacityShardOf("host-1"), 0u);
  EXPECT_EQ(map.CapacityShardOf("host-2"), 1u);
}

TEST(ShardMapTest, AJobGoesToItsShardAHeartbeatToItsHostsShard) {
  ShardMap shards({"a:1", "b:2", "c:3"});
  EXPECT_THAT(shards.ShardsFor("llm-7"),
              ::testing::ElementsAre(shards.ShardOf("llm-7")));
  // An exclusion of hosts or of the fleet (no job_id): every shard.
  EXPECT_THAT(shards.ShardsFor(""), ::testing::ElementsAre(0, 1, 2));
  EXPECT_THAT(ShardMap({"a:1"}).ShardsFor(""), ::testing::ElementsAre(0));
  // A heartbeat: its host's capacity shard only, whatever its job_id.
  EXPECT_THAT(shards.ShardsFor("", "host-1"), ::testing::ElementsAre(0));
  EXPECT_THAT(shards.ShardsFor("", "host-2"), ::testing::ElementsAre(1));
  EXPECT_THAT(shards.ShardsFor("x", "host-2"), ::testing::ElementsAre(1));
}

TEST(ShardMapTest, SpreadsHostsOverEveryShard) {
  std::map<size_t, int> count;
  for (int i = 0; i < 3000; ++i) {
    ++count[CapacityShardOf(absl::StrCat("host-", i), 3)];
  }
  ASSERT_EQ(count.size(), 3u);
  for (const auto& [shard, n] : count) EXPECT_GT(n, 800) << shard;
  EXPECT_EQ(ShardMap({"a:1", "b:2", "c:3"}).CapacityShardOf("host-7"),
            CapacityShardOf("host-7", 3));
}

TEST(ShardMapTest, ParsesAShardPosition) {
  auto p = ParseShardPosition("2/3", "--shard");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->index, 2u);
  EXPECT_EQ(p->count, 3u);
  for (const char* bad : {"3/3", "1", "a/3", "1/0", "-1/3", "1/3/4", ""}) {
    EXPECT_EQ(ParseShardPosition(bad, "--shard").status().message(),
              absl::StrCat("--shard: \"", bad, "\": want I/N with 0 <= I < N"))
        << bad;
  }
}

TEST(ShardMapTest, ParsesAList) {
  auto map = ShardMap::Parse("127.0.0.1:7701,host-b:80", "--server");
  ASSERT_TRUE(map.ok()) << map.status();
  EXPECT_EQ(map->size(), 2u);
  EXPECT_EQ(map->address(1), "host-b:80");
}

TEST(ShardMapTest, RejectsBadEntriesNamingThem) {
  EXPECT_EQ(ShardMap::Parse("", "--server").status().message(),
            "--server: required");
  EXPECT_EQ(ShardMap::Parse("a:1,b:x", "--server").status().message(),
            "--server: entry 2 \"b:x\": want HOST:PORT");
  EXPECT_EQ(ShardMap::Parse("a:1,,b:2", "--server").status().message(),
            "--server: entry 2 \"\": want HOST:PORT");
  EXPECT_EQ(ShardMap::Parse("a:1,a:1", "--server").status().message(),
            "--server: entry 2 \"a:1\" is listed twice");
  EXPECT_FALSE(ShardMap::Parse("a:0", "--server").ok());
  EXPECT_FALSE(ShardMap::Parse(":80", "--server").ok());
}

}  // namespace
}  // namespace goodput
