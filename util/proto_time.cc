#include "util/proto_time.h"

namespace goodput {
namespace {

constexpr int64_t kNanosPerSecond = 1'000'000'000;

// Floor division: -1 ns is second -1 plus 999999999 ns.
int64_t FloorSeconds(int64_t ns) {
  return ns / kNanosPerSecond - (ns % kNanosPerSecond < 0 ? 1 : 0);
}

}  // namespace

int64_t TimestampToNanos(const google::protobuf::Timestamp& t) {
  return t.seconds() * kNanosPerSecond + t.nanos();
}

google::protobuf::Timestamp NanosToTimestamp(int64_t ns) {
  google::protobuf::Timestamp t;
  const int64_t seconds = FloorSeconds(ns);
  t.set_seconds(seconds);
  t.set_nanos(static_cast<int32_t>(ns - seconds * kNanosPerSecond));
  return t;
}

int64_t DurationToNanos(const google::protobuf::Duration& d) {
  return d.seconds() * kNanosPerSecond + d.nanos();
}

google::protobuf::Duration NanosToDuration(int64_t ns) {
  // Duration's seconds and nanos share the sign (truncation).
  google::protobuf::Duration d;
  d.set_seconds(ns / kNanosPerSecond);
  d.set_nanos(static_cast<int32_t>(ns % kNanosPerSecond));
  return d;
}

}  // namespace goodput
