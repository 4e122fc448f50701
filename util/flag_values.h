// Values of command-line flags, parsed one way for every binary (goodputd,
// goodput-agent, goodput-run, goodput-sim, goodputctl): an absent value
// (nullopt) leaves `*out` as it is; a bad one is an InvalidArgument that
// names the flag, what it wants and what it got, e.g.
//   --max_connections: want an integer >= 1, got "ten"
// Free functions; thread-safe.
#ifndef GOODPUT_UTIL_FLAG_VALUES_H_
#define GOODPUT_UTIL_FLAG_VALUES_H_

#include <cstdint>
#include <limits>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace goodput {

inline constexpr int64_t kNoMax = std::numeric_limits<int64_t>::max();

// The error for `value` of --`flag` (`flag` without dashes), which wants
// `want` ("an integer >= 1").
absl::Status BadFlag(absl::string_view flag, absl::string_view want,
                     absl::string_view value);

// An integer in [min, max].
absl::Status SetIntFlag(absl::string_view flag,
                        const std::optional<std::string>& value, int64_t min,
                        int64_t max, int64_t* out);

// The same into a narrower integer type; [min, max] must fit in it.
template <typename Int>
absl::Status SetIntFlag(absl::string_view flag,
                        const std::optional<std::string>& value, int64_t min,
                        int64_t max, Int* out) {
  int64_t n = static_cast<int64_t>(*out);
  absl::Status s = SetIntFlag(flag, value, min, max, &n);
  if (s.ok()) *out = static_cast<Int>(n);
  return s;
}

// A finite number in [min, max].
absl::Status SetNumberFlag(absl::string_view flag,
                           const std::optional<std::string>& value, double min,
                           double max, double* out);

// A finite duration such as 200ms, 30s or 1h30m, at least `min`.
absl::Status SetDurationFlag(absl::string_view flag,
                             const std::optional<std::string>& value,
                             absl::Duration min, absl::Duration* out);

// The same into nanoseconds.
absl::Status SetDurationFlag(absl::string_view flag,
                             const std::optional<std::string>& value,
                             absl::Duration min, int64_t* out_ns);

}  // namespace goodput

#endif  // GOODPUT_UTIL_FLAG_VALUES_H_
