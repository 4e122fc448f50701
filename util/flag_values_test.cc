#include "util/flag_values.h"

#include "gtest/gtest.h"

namespace goodput {
namespace {

using Opt = std::optional<std::string>;

TEST(FlagValuesTest, AbsentLeavesTheDefault) {
  int64_t n = 7;
  double x = 0.5;
  absl::Duration d = absl::Seconds(3);
  EXPECT_TRUE(SetIntFlag("n", std::nullopt, 1, kNoMax, &n).ok());
  EXPECT_TRUE(SetNumberFlag("x", std::nullopt, 0, 1, &x).ok());
  EXPECT_TRUE(
      SetDurationFlag("d", std::nullopt, absl::ZeroDuration(), &d).ok());
  EXPECT_EQ(n, 7);
  EXPECT_EQ(x, 0.5);
  EXPECT_EQ(d, absl::Seconds(3));
}

TEST(FlagValuesTest, IntegersWithinTheirBounds) {
  int n = 0;
  EXPECT_TRUE(SetIntFlag("n", Opt("1"), 1, 10, &n).ok());
  EXPECT_EQ(n, 1);
  EXPECT_TRUE(SetIntFlag("n", Opt("10"), 1, 10, &n).ok());
  EXPECT_EQ(n, 10);
  EXPECT_EQ(SetIntFlag("n", Opt("11"), 1, 10, &n).message(),
            "--n: want an integer in [1, 10], got \"11\"");
  EXPECT_EQ(SetIntFlag("max_connections", Opt("0"), 1, kNoMax, &n).message(),
            "--max_connections: want an integer >= 1, got \"0\"");
  EXPECT_FALSE(SetIntFlag("n", Opt("1.5"), 1, 10, &n).ok());
  EXPECT_FALSE(SetIntFlag("n", Opt(""), 0, 10, &n).ok());
  EXPECT_EQ(n, 10);  // unchanged by the errors
}

TEST(FlagValuesTest, NumbersAreFiniteAndWithinTheirBounds) {
  double x = 0;
  EXPECT_TRUE(SetNumberFlag("x", Opt("0.25"), 0, 1, &x).ok());
  EXPECT_EQ(x, 0.25);
  EXPECT_EQ(SetNumberFlag("x", Opt("1.5"), 0, 1, &x).message(),
            "--x: want a number in [0, 1], got \"1.5\"");
  EXPECT_FALSE(SetNumberFlag("x", Opt("nan"), 0, 1, &x).ok());
  EXPECT_FALSE(SetNumberFlag("x", Opt("inf"), 0, 1e300, &x).ok());
  EXPECT_EQ(x, 0.25);
}

TEST(FlagValuesTest, DurationsAtLeastTheirMinimum) {
  absl::Duration d;
  EXPECT_TRUE(SetDurationFlag("d", Opt("1h30m"), absl::Seconds(1), &d).ok());
  EXPECT_EQ(d, absl::Minutes(90));
  EXPECT_TRUE(SetDurationFlag("d", Opt("1s"), absl::Seconds(1), &d).ok());
  EXPECT_EQ(SetDurationFlag("d", Opt("999ms"), absl::Seconds(1), &d).message(),
            "--d: want a duration of at least 1s such as 200ms, 30s or 1h30m, "
            "got \"999ms\"");
  EXPECT_FALSE(SetDurationFlag("d", Opt("inf"), absl::Seconds(1), &d).ok());
  EXPECT_FALSE(SetDurationFlag("d", Opt("10"), absl::Seconds(1), &d).ok());
  EXPECT_EQ(d, absl::Seconds(1));
}

TEST(FlagValuesTest, DurationsInNanoseconds) {
  int64_t ns = 7;
  EXPECT_TRUE(
      SetDurationFlag("d", std::nullopt, absl::ZeroDuration(), &ns).ok());
  EXPECT_EQ(ns, 7);
  EXPECT_TRUE(
      SetDurationFlag("d", Opt("1.5s"), absl::ZeroDuration(), &ns).ok());
  EXPECT_EQ(ns, 1'500'000'000);
  EXPECT_FALSE(
      SetDurationFlag("d", Opt("-1s"), absl::ZeroDuration(), &ns).ok());
  EXPECT_EQ(ns, 1'500'000'000);
}

}  // namespace
}  // namespace goodput
