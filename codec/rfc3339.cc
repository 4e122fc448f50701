#include "codec/rfc3339.h"

namespace goodput {
namespace codec {
namespace {

// Reads exactly `n` decimal digits at `p`; false on any non-digit.
bool Digits(const char* p, int n, int* out) {
  int value = 0;
  for (int i = 0; i < n; ++i) {
    const unsigned digit = static_cast<unsigned char>(p[i]) - '0';
    if (digit > 9) return false;
    value = value * 10 + static_cast<int>(digit);
  }
  *out = value;
  return true;
}

bool IsLeapYear(int y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

int DaysInMonth(int y, int m) {
  static constexpr int kDays[] = {31, 28, 31, 30, 31, 30,
                                  31, 31, 30, 31, 30, 31};
  return (m == 2 && IsLeapYear(y)) ? 29 : kDays[m - 1];
}

// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's
// days_from_civil).
int64_t DaysFromCivil(int y, int m, int d) {
  y -= m <= 2;
  const int era = (y >= 0 ? y : y - 399) / 400;
  const int yoe = y - era * 400;
  const int doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const int doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return static_cast<int64_t>(era) * 146097 + doe - 719468;
}

// "YYYY-MM-DDTHH:MM:SS" at the start of `t` (19 chars) to seconds.
bool ParseDateTime(absl::string_view t, int64_t* seconds) {
  int y, mo, d, h, mi, s;
  if (t.size() < 19 || t[4] != '-' || t[7] != '-' || t[10] != 'T' ||
      t[13] != ':' || t[16] != ':') {
    return false;
  }
  const char* p = t.data();
  if (!Digits(p, 4, &y) || !Digits(p + 5, 2, &mo) || !Digits(p + 8, 2, &d) ||
      !Digits(p + 11, 2, &h) || !Digits(p + 14, 2, &mi) ||
      !Digits(p + 17, 2, &s)) {
    return false;
  }
  // Years 1 and 9999 are left to the reference: its range check applies to
  // the local time, before the offset.
  if (y < 2 || y > 9998 || mo < 1 || mo > 12 || d < 1 ||
      d > DaysInMonth(y, mo) || h > 23 || mi > 59 || s > 59) {
    return false;
  }
  *seconds = DaysFromCivil(y, mo, d) * 86400 + h * 3600 + mi * 60 + s;
  return true;
}

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// Optional ".F{1,9}" at the start of `*t`; consumes it. More than 9 digits
// are left to the reference (which truncates them).
bool ParseFraction(absl::string_view* t, int32_t* nanos) {
  *nanos = 0;
  if (t->empty() || (*t)[0] != '.') return true;
  size_t digits = 0;
  while (digits < t->size() - 1 && IsDigit((*t)[digits + 1])) ++digits;
  int value = 0;
  if (digits == 0 || digits > 9 ||
      !Digits(t->data() + 1, static_cast<int>(digits), &value)) {
    return false;
  }
  for (size_t i = digits; i < 9; ++i) value *= 10;
  *nanos = value;
  t->remove_prefix(digits + 1);
  return true;
}

// "Z", "+HH:MM" or "-HH:MM", which must end `t`; offset east of UTC.
bool ParseOffset(absl::string_view t, int64_t* offset_seconds) {
  if (t == "Z") {
    *offset_seconds = 0;
    return true;
  }
  int h, m;
  if (t.size() != 6 || (t[0] != '+' && t[0] != '-') || t[3] != ':' ||
      !Digits(t.data() + 1, 2, &h) || !Digits(t.data() + 4, 2, &m) || h > 23 ||
      m > 59) {
    return false;
  }
  *offset_seconds = (t[0] == '+' ? 1 : -1) * (h * 3600 + m * 60);
  return true;
}

}  // namespace

bool ParseRfc3339Strict(absl::string_view text, int64_t* seconds,
                        int32_t* nanos) {
  int64_t local = 0;
  int64_t offset = 0;
  if (!ParseDateTime(text, &local)) return false;
  text.remove_prefix(19);
  if (!ParseFraction(&text, nanos) || !ParseOffset(text, &offset)) {
    return false;
  }
  *seconds = local - offset;
  return true;
}

}  // namespace codec
}  // namespace goodput
