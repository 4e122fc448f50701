#ifndef GOODPUT_UTIL_TIME_FORMAT_H_
#define GOODPUT_UTIL_TIME_FORMAT_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace goodput {

// Conversions between the command line's and reports' text forms of times
// and durations and integer nanoseconds. Stateless, thread-safe functions.

// `ns` since the Unix epoch as RFC 3339 UTC: whole seconds print as
// "2026-11-22T11:00:00Z"; otherwise with 3, 6 or 9 fractional digits, the
// fewest that are exact ("2026-11-22T11:00:00.250Z"), like protobuf's JSON
// Timestamp.
std::string FormatRfc3339(int64_t ns);

// Parses an RFC 3339 time with any offset ("2026-11-22T10:00:00Z",
// "2026-11-22T11:00:00.5+01:00") into nanoseconds since the Unix epoch.
absl::StatusOr<int64_t> ParseRfc3339(absl::string_view text);

// Parses a non-negative duration such as "10m", "30s", "1h30m", "250ms"
// into nanoseconds.
absl::StatusOr<int64_t> ParseDurationNanos(absl::string_view text);

// `ns` as h:mm:ss (e.g. "1:02:03"), truncated to whole seconds; negative
// values print with a leading '-'.
std::string FormatHms(int64_t ns);

// A non-negative duration, short, truncated to whole seconds (days to
// minutes), trailing zero units left out: "29s", "28m", "28m05s", "1h",
// "2h05m07s", "3d04h10m"; under a second "0.250s".
std::string FormatShortDuration(int64_t ns);

}  // namespace goodput

#endif  // GOODPUT_UTIL_TIME_FORMAT_H_
