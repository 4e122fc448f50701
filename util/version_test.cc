#include "util/version.h"

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "util/build_info.h"

namespace goodput {
namespace {

using ::testing::MatchesRegex;

TEST(VersionTest, NamesTheProgramAndTheProjectVersion) {
  const std::string line = VersionLine("goodputd");
  EXPECT_THAT(line, MatchesRegex("goodputd [0-9]+\\.[0-9]+\\.[0-9]+"
                                 "( \\(commit [0-9a-f]+(-dirty)?\\))?"));
  EXPECT_EQ(line.rfind(absl::StrCat("goodputd ", GOODPUT_VERSION), 0), 0u);
}

#ifdef GOODPUT_EXPECTED_VERSION
// The build's own project version (CMake passes PROJECT_VERSION).
TEST(VersionTest, IsTheBuildsProjectVersion) {
  EXPECT_EQ(std::string(GOODPUT_VERSION), GOODPUT_EXPECTED_VERSION);
}
#endif

}  // namespace
}  // namespace goodput
