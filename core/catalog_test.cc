#include "core/catalog.h"

#include "gtest/gtest.h"

namespace goodput::core {
namespace {

TEST(CatalogTest, DefaultHasTheSpecEntries) {
  Catalog c = Catalog::Default();
  EXPECT_EQ(c.entries().size(), 8u);
  ASSERT_NE(c.Find("tpu-v5p"), nullptr);
  EXPECT_DOUBLE_EQ(c.Find("tpu-v5p")->flops_per_second, 459e12);
  EXPECT_DOUBLE_EQ(c.Find("tpu-v5e")->bytes_per_second, 0.819e12);
  EXPECT_DOUBLE_EQ(c.Find("b200")->flops_per_second, 2250e12);
  EXPECT_EQ(c.Find("tpu-v9"), nullptr);
}

TEST(CatalogTest, SetAddsAndOverrides) {
  Catalog c = Catalog::Default();
  c.Set("h100", {1.0, 2.0});
  c.Set("mi300x", {1307e12, 5.3e12});
  EXPECT_DOUBLE_EQ(c.Find("h100")->bytes_per_second, 2.0);
  EXPECT_DOUBLE_EQ(c.Find("mi300x")->flops_per_second, 1307e12);
}

}  // namespace
}  // namespace goodput::core
