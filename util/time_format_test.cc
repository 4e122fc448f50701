#include "util/time_format.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace goodput {
namespace {

constexpr int64_t kSecond = 1'000'000'000;
constexpr int64_t kTen = 1795341600 * kSecond;  // 2026-11-22T10:00:00Z

TEST(FormatRfc3339Test, WholeSecondsHaveNoFraction) {
  EXPECT_EQ(FormatRfc3339(kTen), "2026-11-22T10:00:00Z");
  EXPECT_EQ(FormatRfc3339(0), "1970-01-01T00:00:00Z");
}

TEST(FormatRfc3339Test, FractionUsesFewestExactDigitGroups) {
  EXPECT_EQ(FormatRfc3339(kTen + 250'000'000), "2026-11-22T10:00:00.250Z");
  EXPECT_EQ(FormatRfc3339(kTen + 1'000'000), "2026-11-22T10:00:00.001Z");
  EXPECT_EQ(FormatRfc3339(kTen + 250'500'000), "2026-11-22T10:00:00.250500Z");
  EXPECT_EQ(FormatRfc3339(kTen + 7), "2026-11-22T10:00:00.000000007Z");
}

TEST(FormatRfc3339Test, BeforeTheEpochFloors) {
  EXPECT_EQ(FormatRfc3339(-250'000'000), "1969-12-31T23:59:59.750Z");
}

TEST(ParseRfc3339Test, ParsesUtcOffsetsAndFractions) {
  EXPECT_EQ(*ParseRfc3339("2026-11-22T10:00:00Z"), kTen);
  EXPECT_EQ(*ParseRfc3339("2026-11-22T11:00:00.5+01:00"), kTen + 500'000'000);
  EXPECT_EQ(*ParseRfc3339("2026-11-22T10:00:00.000000001Z"), kTen + 1);
}

TEST(ParseRfc3339Test, RoundTripsWithFormat) {
  for (int64_t t : {kTen, kTen + 250'000'000, kTen + 123'456, kTen + 9}) {
    EXPECT_EQ(*ParseRfc3339(FormatRfc3339(t)), t);
  }
}

TEST(ParseRfc3339Test, RejectsWhatIsNotRfc3339) {
  for (const char* bad :
       {"", "yesterday", "2026-11-22", "2026-11-22 10:00:00",
        "2026-11-22T10:00:00", "infinite-future", "2026-13-01T00:00:00Z"}) {
    absl::StatusOr<int64_t> t = ParseRfc3339(bad);
    ASSERT_FALSE(t.ok()) << bad;
    EXPECT_THAT(t.status().message(), ::testing::HasSubstr("'")) << bad;
  }
}

TEST(ParseDurationNanosTest, ParsesUnits) {
  EXPECT_EQ(*ParseDurationNanos("10m"), 600 * kSecond);
  EXPECT_EQ(*ParseDurationNanos("30s"), 30 * kSecond);
  EXPECT_EQ(*ParseDurationNanos("1h30m"), 5400 * kSecond);
  EXPECT_EQ(*ParseDurationNanos("250ms"), kSecond / 4);
  EXPECT_EQ(*ParseDurationNanos("0"), 0);
}

TEST(ParseDurationNanosTest, RejectsBadOrNegative) {
  for (const char* bad : {"", "10", "ten minutes", "-5m", "inf"}) {
    EXPECT_FALSE(ParseDurationNanos(bad).ok()) << bad;
  }
}

TEST(FormatHmsTest, Formats) {
  EXPECT_EQ(FormatHms(0), "0:00:00");
  EXPECT_EQ(FormatHms(3723 * kSecond + kSecond / 2), "1:02:03");
  EXPECT_EQ(FormatHms(100 * 3600 * kSecond), "100:00:00");
  EXPECT_EQ(FormatHms(-61 * kSecond), "-0:01:01");
}

TEST(FormatShortDurationTest, PicksTheLargestUnits) {
  constexpr int64_t kS = 1'000'000'000;
  EXPECT_EQ(FormatShortDuration(0), "0.000s");
  EXPECT_EQ(FormatShortDuration(kS / 4), "0.250s");
  EXPECT_EQ(FormatShortDuration(29 * kS + kS / 2), "29s");
  EXPECT_EQ(FormatShortDuration(28 * 60 * kS), "28m");
  EXPECT_EQ(FormatShortDuration((28 * 60 + 5) * kS), "28m05s");
  EXPECT_EQ(FormatShortDuration(3600 * kS), "1h");
  EXPECT_EQ(FormatShortDuration(3900 * kS), "1h05m");
  EXPECT_EQ(FormatShortDuration((2 * 3600 + 5 * 60 + 7) * kS), "2h05m07s");
  EXPECT_EQ(FormatShortDuration((3 * 86400 + 4 * 3600 + 600 + 9) * kS),
            "3d04h10m");
  EXPECT_EQ(FormatShortDuration(86400 * kS), "1d");
  EXPECT_EQ(FormatShortDuration(90000 * kS), "1d01h");
}

}  // namespace
}  // namespace goodput
