#include "sim/host_pool.h"

#include "gtest/gtest.h"

namespace goodput::sim {
namespace {

HostPool FourHosts() {
  HostPool pool;
  for (int i = 0; i < 4; ++i)
    pool.AddHost({"h" + std::to_string(i), "tpu-v5p", 4});
  pool.AddHost({"g0", "h100", 8});
  return pool;
}

TEST(HostPoolTest, GangTakesWholeHostsOrNothing) {
  HostPool pool = FourHosts();
  auto grant = pool.Allocate("tpu-v5p", 12);
  ASSERT_TRUE(grant.has_value());
  EXPECT_EQ(grant->hosts.size(), 3u);
  EXPECT_EQ(grant->chips_per_host, 4);
  EXPECT_FALSE(pool.Allocate("tpu-v5p", 8).has_value());  // one host left
  EXPECT_EQ(pool.FreeChips(), 4 + 8);
  pool.Release(*grant);
  EXPECT_TRUE(pool.Allocate("tpu-v5p", 16).has_value());
}

TEST(HostPoolTest, SmallJobsShareAHostBestFit) {
  HostPool pool = FourHosts();
  auto a = pool.Allocate("tpu-v5p", 1);
  auto b = pool.Allocate("tpu-v5p", 3);
  ASSERT_TRUE(a && b);
  EXPECT_EQ(a->hosts, b->hosts);  // the partly used host fits exactly
  EXPECT_TRUE(pool.Allocate("tpu-v5p", 12).has_value());
  EXPECT_FALSE(pool.Allocate("tpu-v5p", 1).has_value());
}

TEST(HostPoolTest, UnknownAcceleratorOrTooLargeIsRefused) {
  HostPool pool = FourHosts();
  EXPECT_FALSE(pool.Allocate("tpu-v4", 1).has_value());
  EXPECT_FALSE(pool.Allocate("h100", 16).has_value());
  EXPECT_EQ(pool.Capacity("tpu-v5p"), 16);
  EXPECT_EQ(pool.Capacity("tpu-v4"), 0);
}

}  // namespace
}  // namespace goodput::sim
