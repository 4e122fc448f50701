#ifndef GOODPUT_CORE_CONFIG_H_
#define GOODPUT_CORE_CONFIG_H_

#include <cstdint>
#include <limits>
#include <vector>

#include "core/catalog.h"

namespace goodput::core {

inline constexpr int64_t kNanosPerSecond = 1'000'000'000;

// Tunables of the goodput model. A plain value; trackers keep a pointer to
// one that must outlive them.
struct Config {
  // In-flight step time more than this after the job's last event is idle.
  int64_t stall_after_ns = 600 * kNanosPerSecond;
  // A host's heartbeat holds at most this long (capacity, rule 10).
  int64_t host_timeout_ns = 300 * kNanosPerSecond;
  // Start of the reporting window (--since); the default covers all time.
  int64_t since_ns = std::numeric_limits<int64_t>::min();
  // Upper bounds (inclusive) of the `size` segment buckets, ascending; a
  // job above the last bound is in ">LAST".
  std::vector<int64_t> size_buckets = {8, 64, 512};
  Catalog catalog = Catalog::Default();
};

}  // namespace goodput::core

#endif  // GOODPUT_CORE_CONFIG_H_
