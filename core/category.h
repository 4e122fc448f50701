#ifndef GOODPUT_CORE_CATEGORY_H_
#define GOODPUT_CORE_CATEGORY_H_

#include <array>
#include <cstdint>

namespace goodput::core {

// The categories that partition every instant of a job's lifetime
// (SPEC section 3). The order is the report order.
enum class Category : int {
  kQueued = 0,
  kRecovery,
  kInit,
  kPrep,
  kCompile,
  kRestore,
  kDataWait,
  kCheckpoint,
  kReshard,  // re-sharding after an elastic resize (rule 14)
  kCustom,
  kIdle,
  kProductive,
  kLost,
  // Time an exclusion event said does not count (docs/semantics.md,
  // "Exclusions"): part of the lifetime, left out of every ratio.
  kExcluded,
};

inline constexpr int kNumCategories = 14;

// The report name of `c`, e.g. "data_wait".
const char* CategoryName(Category c);

// Per-category amounts of one job, in integer nanoseconds.
using CategoryNanos = std::array<int64_t, kNumCategories>;

// Per-category amounts summed over jobs, in chip-seconds.
using CategoryChipSeconds = std::array<double, kNumCategories>;

inline int Index(Category c) { return static_cast<int>(c); }

}  // namespace goodput::core

#endif  // GOODPUT_CORE_CATEGORY_H_
