#include "agent/log_limiter.h"

#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "util/clock.h"

namespace goodput::agent {
namespace {

constexpr int64_t kSecond = 1'000'000'000;

TEST(LogLimiterTest, AllowsABurstPerIntervalAndCountsTheRest) {
  FakeClock clock(100 * kSecond);
  LogLimiter limiter(&clock, absl::Seconds(1), 2);
  int64_t suppressed = -1;
  EXPECT_TRUE(limiter.Allow(&suppressed));
  EXPECT_EQ(suppressed, 0);
  EXPECT_TRUE(limiter.Allow(&suppressed));
  EXPECT_FALSE(limiter.Allow(&suppressed));
  EXPECT_FALSE(limiter.Allow(&suppressed));
  clock.Advance(kSecond - 1);
  EXPECT_FALSE(limiter.Allow(&suppressed));  // same interval
  clock.Advance(1);
  EXPECT_TRUE(limiter.Allow(&suppressed));
  EXPECT_EQ(suppressed, 3);  // handed to the next allowed line, once
  EXPECT_TRUE(limiter.Allow(&suppressed));
  EXPECT_EQ(suppressed, 0);
}

TEST(LogLimiterTest, TakeSuppressedWaitsForTheIntervalToEnd) {
  FakeClock clock(100 * kSecond);
  LogLimiter limiter(&clock, absl::Seconds(1), 1);
  int64_t suppressed = 0;
  EXPECT_EQ(limiter.TakeSuppressed(), 0);  // nothing refused yet
  ASSERT_TRUE(limiter.Allow(&suppressed));
  EXPECT_FALSE(limiter.Allow(&suppressed));
  EXPECT_FALSE(limiter.Allow(&suppressed));
  clock.Advance(kSecond - 1);
  EXPECT_EQ(limiter.TakeSuppressed(), 0);  // the burst's interval still runs
  clock.Advance(1);
  EXPECT_EQ(limiter.TakeSuppressed(), 2);  // the end of the burst
  EXPECT_EQ(limiter.TakeSuppressed(), 0);  // counted once
  ASSERT_TRUE(limiter.Allow(&suppressed));
  EXPECT_EQ(suppressed, 0);  // not again with the next line
}

TEST(LogLimiterTest, ANextLineTakesTheCountBeforeAFlush) {
  FakeClock clock(100 * kSecond);
  LogLimiter limiter(&clock, absl::Seconds(1), 1);
  int64_t suppressed = 0;
  ASSERT_TRUE(limiter.Allow(&suppressed));
  EXPECT_FALSE(limiter.Allow(&suppressed));
  clock.Advance(2 * kSecond);
  ASSERT_TRUE(limiter.Allow(&suppressed));
  EXPECT_EQ(suppressed, 1);
  clock.Advance(2 * kSecond);
  EXPECT_EQ(limiter.TakeSuppressed(), 0);
}

}  // namespace
}  // namespace goodput::agent
