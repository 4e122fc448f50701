#include "util/time_format.h"

#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/time.h"

namespace goodput {
namespace {

constexpr int64_t kNanosPerSecond = 1'000'000'000;

// The fractional part `nanos` (0 < nanos < 1e9) with 3, 6 or 9 digits.
std::string Fraction(int64_t nanos) {
  if (nanos % 1'000'000 == 0)
    return absl::StrFormat(".%03d", nanos / 1'000'000);
  if (nanos % 1'000 == 0) return absl::StrFormat(".%06d", nanos / 1'000);
  return absl::StrFormat(".%09d", nanos);
}

}  // namespace

std::string FormatRfc3339(int64_t ns) {
  int64_t seconds = ns / kNanosPerSecond;
  int64_t nanos = ns % kNanosPerSecond;
  if (nanos < 0) {  // floor division for times before the epoch
    nanos += kNanosPerSecond;
    --seconds;
  }
  std::string out = absl::FormatTime(
      "%Y-%m-%dT%H:%M:%S", absl::FromUnixSeconds(seconds), absl::UTCTimeZone());
  if (nanos != 0) out += Fraction(nanos);
  return out + "Z";
}

absl::StatusOr<int64_t> ParseRfc3339(absl::string_view text) {
  absl::Time t;
  std::string why;
  if (!absl::ParseTime(absl::RFC3339_full, std::string(text), &t, &why)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "bad time '", text, "': want RFC 3339 like 2026-11-22T10:00:00Z"));
  }
  if (t == absl::InfiniteFuture() || t == absl::InfinitePast() ||
      t < absl::UnixEpoch() - absl::Hours(24 * 365 * 200) ||
      t > absl::UnixEpoch() + absl::Hours(24 * 365 * 200)) {
    return absl::InvalidArgumentError(
        absl::StrCat("time '", text, "' is out of range"));
  }
  return absl::ToUnixNanos(t);
}

absl::StatusOr<int64_t> ParseDurationNanos(absl::string_view text) {
  absl::Duration d;
  if (!absl::ParseDuration(std::string(text), &d) ||
      d == absl::InfiniteDuration() || d < absl::ZeroDuration()) {
    return absl::InvalidArgumentError(
        absl::StrCat("bad duration '", text, "': want e.g. 10m, 30s or 1h30m"));
  }
  return absl::ToInt64Nanoseconds(d);
}

std::string FormatHms(int64_t ns) {
  std::string sign = ns < 0 ? "-" : "";
  int64_t s = (ns < 0 ? -ns : ns) / kNanosPerSecond;
  return absl::StrFormat("%s%d:%02d:%02d", sign, s / 3600, s / 60 % 60, s % 60);
}

std::string FormatShortDuration(int64_t ns) {
  if (ns < kNanosPerSecond) {
    return absl::StrFormat("%.3fs", static_cast<double>(ns) / kNanosPerSecond);
  }
  const int64_t s = ns / kNanosPerSecond;
  const int64_t sec = s % 60, min = s / 60 % 60, hour = s / 3600 % 24;
  if (s < 60) return absl::StrFormat("%ds", s);
  if (s < 3600) {
    return sec ? absl::StrFormat("%dm%02ds", s / 60, sec)
               : absl::StrFormat("%dm", s / 60);
  }
  if (s < 86400) {
    if (sec) return absl::StrFormat("%dh%02dm%02ds", s / 3600, min, sec);
    return min ? absl::StrFormat("%dh%02dm", s / 3600, min)
               : absl::StrFormat("%dh", s / 3600);
  }
  if (min) return absl::StrFormat("%dd%02dh%02dm", s / 86400, hour, min);
  return hour ? absl::StrFormat("%dd%02dh", s / 86400, hour)
              : absl::StrFormat("%dd", s / 86400);
}

}  // namespace goodput
