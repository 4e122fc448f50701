#include "util/proto_time.h"

#include "gtest/gtest.h"

namespace goodput {
namespace {

constexpr int64_t kSecond = 1'000'000'000;

TEST(ProtoTimeTest, TimestampSplitsSecondsAndNanos) {
  // 2026-11-22T10:00:00.250Z
  const google::protobuf::Timestamp t =
      NanosToTimestamp(1795341600 * kSecond + 250'000'000);
  EXPECT_EQ(t.seconds(), 1795341600);
  EXPECT_EQ(t.nanos(), 250'000'000);
  EXPECT_EQ(TimestampToNanos(t), 1795341600 * kSecond + 250'000'000);
}

TEST(ProtoTimeTest, TimesBeforeTheEpochKeepNanosNonNegative) {
  const google::protobuf::Timestamp t = NanosToTimestamp(-1);
  EXPECT_EQ(t.seconds(), -1);
  EXPECT_EQ(t.nanos(), 999'999'999);
  EXPECT_EQ(TimestampToNanos(t), -1);
  EXPECT_EQ(NanosToTimestamp(-kSecond).nanos(), 0);
  EXPECT_EQ(NanosToTimestamp(-kSecond).seconds(), -1);
}

TEST(ProtoTimeTest, DurationsRoundTrip) {
  for (int64_t ns : {int64_t{0}, int64_t{1}, 90 * kSecond + 5, -kSecond - 3}) {
    EXPECT_EQ(DurationToNanos(NanosToDuration(ns)), ns) << ns;
  }
  const google::protobuf::Duration d = NanosToDuration(-kSecond - 3);
  EXPECT_EQ(d.seconds(), -1);
  EXPECT_EQ(d.nanos(), -3);
}

}  // namespace
}  // namespace goodput
