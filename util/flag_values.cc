#include "util/flag_values.h"

#include <cmath>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace goodput {
namespace {

std::string IntRange(int64_t min, int64_t max) {
  if (max == kNoMax) return absl::StrCat("an integer >= ", min);
  return absl::StrCat("an integer in [", min, ", ", max, "]");
}

}  // namespace

absl::Status BadFlag(absl::string_view flag, absl::string_view want,
                     absl::string_view value) {
  return absl::InvalidArgumentError(
      absl::StrCat("--", flag, ": want ", want, ", got \"", value, "\""));
}

absl::Status SetIntFlag(absl::string_view flag,
                        const std::optional<std::string>& value, int64_t min,
                        int64_t max, int64_t* out) {
  if (!value) return absl::OkStatus();
  int64_t n = 0;
  if (!absl::SimpleAtoi(*value, &n) || n < min || n > max) {
    return BadFlag(flag, IntRange(min, max), *value);
  }
  *out = n;
  return absl::OkStatus();
}

absl::Status SetNumberFlag(absl::string_view flag,
                           const std::optional<std::string>& value, double min,
                           double max, double* out) {
  if (!value) return absl::OkStatus();
  double n = 0;
  if (!absl::SimpleAtod(*value, &n) || !std::isfinite(n) || n < min ||
      n > max) {
    return BadFlag(flag, absl::StrCat("a number in [", min, ", ", max, "]"),
                   *value);
  }
  *out = n;
  return absl::OkStatus();
}

absl::Status SetDurationFlag(absl::string_view flag,
                             const std::optional<std::string>& value,
                             absl::Duration min, absl::Duration* out) {
  if (!value) return absl::OkStatus();
  absl::Duration d;
  if (!absl::ParseDuration(*value, &d) || d == absl::InfiniteDuration() ||
      d < min) {
    return BadFlag(
        flag,
        absl::StrCat("a duration of at least ", absl::FormatDuration(min),
                     " such as 200ms, 30s or 1h30m"),
        *value);
  }
  *out = d;
  return absl::OkStatus();
}

absl::Status SetDurationFlag(absl::string_view flag,
                             const std::optional<std::string>& value,
                             absl::Duration min, int64_t* out_ns) {
  absl::Duration d = absl::Nanoseconds(*out_ns);
  absl::Status s = SetDurationFlag(flag, value, min, &d);
  if (s.ok()) *out_ns = absl::ToInt64Nanoseconds(d);
  return s;
}

}  // namespace goodput
