#include "logs/cri_line.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace goodput::logs {
namespace {

using ::testing::HasSubstr;

constexpr int64_t kT0 = int64_t{1795341600} * 1000 * 1000 * 1000;

TEST(CriJoinerTest, AFullLineGivesItsMessageAndTime) {
  CriJoiner joiner;
  std::string line;
  int64_t ns = 0;
  absl::StatusOr<bool> done =
      joiner.Add("2026-11-22T10:00:00.5Z stdout F step 3 done", &line, &ns);
  ASSERT_TRUE(done.ok()) << done.status();
  EXPECT_TRUE(*done);
  EXPECT_EQ(line, "step 3 done");
  EXPECT_EQ(ns, kT0 + 500 * 1000 * 1000);
}

TEST(CriJoinerTest, PartialsJoinWithTheFirstPartsTime) {
  CriJoiner joiner;
  std::string line;
  int64_t ns = 0;
  EXPECT_FALSE(*joiner.Add("2026-11-22T10:00:00Z stderr P abc", &line, &ns));
  EXPECT_FALSE(*joiner.Add("2026-11-22T10:00:01Z stderr P def", &line, &ns));
  EXPECT_TRUE(*joiner.Add("2026-11-22T10:00:02Z stderr F ghi", &line, &ns));
  EXPECT_EQ(line, "abcdefghi");
  EXPECT_EQ(ns, kT0);
  EXPECT_TRUE(*joiner.Add("2026-11-22T10:00:03Z stderr F ", &line, &ns));
  EXPECT_EQ(line, "");
}

TEST(CriJoinerTest, APartialFloodKeepsAtMostMaxBytes) {
  CriJoiner joiner(8);
  std::string line;
  int64_t ns = 0;
  for (int i = 0; i < 1000; ++i) {
    ASSERT_FALSE(
        *joiner.Add("2026-11-22T10:00:00Z stdout P 0123456789", &line, &ns));
  }
  EXPECT_TRUE(*joiner.Add("2026-11-22T10:00:00Z stdout F end", &line, &ns));
  EXPECT_EQ(line, "01234567");
}

TEST(CriJoinerTest, BadLinesNameTheField) {
  CriJoiner joiner;
  std::string line;
  int64_t ns = 0;
  EXPECT_THAT(joiner.Add("yesterday stdout F x", &line, &ns).status().message(),
              HasSubstr("bad time 'yesterday'"));
  EXPECT_THAT(joiner.Add("2026-11-22T10:00:00Z stdin F x", &line, &ns)
                  .status()
                  .message(),
              HasSubstr("bad stream 'stdin'"));
  EXPECT_THAT(joiner.Add("2026-11-22T10:00:00Z stdout X x", &line, &ns)
                  .status()
                  .message(),
              HasSubstr("bad tag 'X'"));
}

}  // namespace
}  // namespace goodput::logs
