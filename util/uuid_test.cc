#include "util/uuid.h"

#include <regex>
#include <set>

#include "gtest/gtest.h"

namespace goodput {
namespace {

TEST(UuidTest, VersionFourAndDistinct) {
  const std::regex shape(
      "[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}");
  std::set<std::string> seen;
  for (int i = 0; i < 100; ++i) {
    auto id = RandomUuid();
    ASSERT_TRUE(id.ok());
    EXPECT_TRUE(std::regex_match(*id, shape)) << *id;
    seen.insert(*id);
  }
  EXPECT_EQ(seen.size(), 100u);
}

}  // namespace
}  // namespace goodput
