#ifndef GOODPUT_UTIL_PROTO_TIME_H_
#define GOODPUT_UTIL_PROTO_TIME_H_

#include <cstdint>

#include "google/protobuf/duration.pb.h"
#include "google/protobuf/timestamp.pb.h"

namespace goodput {

// The one conversion between google.protobuf.Timestamp / Duration and
// integer nanoseconds (since the Unix epoch for times). Nanoseconds below
// zero give a Timestamp with non-negative nanos, as protobuf requires.
// Stateless, thread-safe functions.

int64_t TimestampToNanos(const google::protobuf::Timestamp& t);
google::protobuf::Timestamp NanosToTimestamp(int64_t ns);

int64_t DurationToNanos(const google::protobuf::Duration& d);
google::protobuf::Duration NanosToDuration(int64_t ns);

}  // namespace goodput

#endif  // GOODPUT_UTIL_PROTO_TIME_H_
