#ifndef GOODPUT_REPORT_TABLE_CELLS_H_
#define GOODPUT_REPORT_TABLE_CELLS_H_

#include <cmath>
#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/category.h"

namespace goodput::report {

// Cells of goodputctl's text tables, shared by the report and drill-down
// tables. Undefined values print as "-", and so do non-finite ones, which
// the JSON writers print as null (JSON has no inf or nan). Stateless,
// thread-safe functions.

// A ratio with 3 decimals, e.g. "0.822".
inline std::string FormatRatio(const std::optional<double>& v) {
  return v && std::isfinite(*v) ? absl::StrFormat("%.3f", *v) : "-";
}

// A share as a percentage with 1 decimal, e.g. "74.7%".
inline std::string FormatPercent(const std::optional<double>& v) {
  return v && std::isfinite(*v) ? absl::StrFormat("%.1f%%", *v * 100) : "-";
}

// Chip-seconds as chip-hours with the unit, e.g. "12.3 chip-h".
inline std::string FormatChipHours(double chip_seconds) {
  return absl::StrFormat("%.1f chip-h", chip_seconds / 3600);
}

// "queued 25.0%": the largest non-productive category of `amounts` (in any
// unit) and its share of `total`, or "-" if there is none.
template <typename Amounts>
std::string TopBadput(const Amounts& amounts, double total) {
  // Excluded time is no badput and no part of the ratios' time.
  const int excluded = core::Index(core::Category::kExcluded);
  total -= static_cast<double>(amounts[excluded]);
  int top = -1;
  for (int i = 0; i < core::kNumCategories; ++i) {
    if (i == core::Index(core::Category::kProductive) || i == excluded ||
        amounts[i] <= 0) {
      continue;
    }
    if (top < 0 || amounts[i] > amounts[top]) top = i;
  }
  if (top < 0 || total <= 0) return "-";
  return absl::StrCat(core::CategoryName(static_cast<core::Category>(top)), " ",
                      FormatPercent(amounts[top] / total));
}

}  // namespace goodput::report

#endif  // GOODPUT_REPORT_TABLE_CELLS_H_
