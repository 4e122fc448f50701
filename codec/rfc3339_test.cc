#include "codec/rfc3339.h"

#include <cstdint>
#include <string>

#include "gmock/gmock.h"
#include "google/protobuf/timestamp.pb.h"
#include "google/protobuf/util/time_util.h"
#include "gtest/gtest.h"

namespace goodput {
namespace codec {
namespace {

using google::protobuf::util::TimeUtil;

struct Parsed {
  bool ok = false;
  int64_t seconds = 0;
  int32_t nanos = 0;
};

Parsed Parse(const std::string& text) {
  Parsed p;
  p.ok = ParseRfc3339Strict(text, &p.seconds, &p.nanos);
  return p;
}

TEST(Rfc3339Test, ParsesUtc) {
  const Parsed p = Parse("2026-11-22T10:00:00Z");
  ASSERT_TRUE(p.ok);
  EXPECT_EQ(p.seconds, 1795341600);
  EXPECT_EQ(p.nanos, 0);
}

TEST(Rfc3339Test, ParsesFractionsOfOneToNineDigits) {
  EXPECT_EQ(Parse("2026-11-22T10:00:00.1Z").nanos, 100000000);
  EXPECT_EQ(Parse("2026-11-22T10:00:00.000001Z").nanos, 1000);
  EXPECT_EQ(Parse("2026-11-22T10:00:00.123456789Z").nanos, 123456789);
  EXPECT_EQ(Parse("2026-11-22T10:00:00.999999999+01:00").nanos, 999999999);
}

// Found by decoder_fuzzer (UBSan: int overflow reading a 10th digit).
TEST(Rfc3339Test, LongFractionsAreRejectedWithoutOverflow) {
  EXPECT_FALSE(Parse("2026-11-22T10:00:00.6235174891Z").ok);
  EXPECT_FALSE(Parse("2026-11-22T10:00:00.99999999999999999999Z").ok);
  EXPECT_FALSE(Parse("2026-11-22T10:00:00.").ok);
}

TEST(Rfc3339Test, AppliesOffsets) {
  EXPECT_EQ(Parse("2026-11-22T11:00:00+01:00").seconds, 1795341600);
  EXPECT_EQ(Parse("2026-11-22T08:30:00-01:30").seconds, 1795341600);
  EXPECT_EQ(Parse("1969-12-31T23:59:59.5Z").seconds, -1);
}

TEST(Rfc3339Test, LeavesUnusualShapesToTheReference) {
  for (const char* text :
       {"2026-11-22T10:00:00", "2026-11-22t10:00:00Z", "2026-11-22T10:00:00z",
        "2026-11-22 10:00:00Z", "2026-11-22T10:00:00.Z",
        "2026-11-22T10:00:00.1234567891Z", "2026-11-22T10:00:00+0100",
        "2026-11-22T10:00:00+24:00", "2026-02-29T10:00:00Z",
        "2026-04-31T10:00:00Z", "2026-11-22T24:00:00Z", "2026-11-22T23:59:60Z",
        "0001-01-01T00:00:00Z", "9999-12-31T23:59:59Z", "2026-1-22T10:00:00Z",
        " 2026-11-22T10:00:00Z", "2026-11-22T10:00:00Z ", ""}) {
    EXPECT_FALSE(Parse(text).ok) << text;
  }
}

// Every instant the fast path accepts must equal protobuf's own parse.
TEST(Rfc3339Test, AgreesWithTimeUtil) {
  int checked = 0;
  for (const char* text :
       {"2024-02-29T23:59:59.999999999Z", "2000-02-29T00:00:00Z",
        "1900-03-01T00:00:00-23:59", "0002-01-01T00:00:00+23:59",
        "9998-12-31T23:59:59.5-23:59", "1970-01-01T00:00:00Z",
        "2038-01-19T03:14:08+00:00", "1600-02-29T12:00:00.25+05:30"}) {
    const Parsed p = Parse(text);
    google::protobuf::Timestamp expected;
    ASSERT_TRUE(TimeUtil::FromString(text, &expected)) << text;
    ASSERT_TRUE(p.ok) << text;
    EXPECT_EQ(p.seconds, expected.seconds()) << text;
    EXPECT_EQ(p.nanos, expected.nanos()) << text;
    ++checked;
  }
  EXPECT_EQ(checked, 8);
}

}  // namespace
}  // namespace codec
}  // namespace goodput
