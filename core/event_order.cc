#include "core/event_order.h"

#include <algorithm>
#include <tuple>

#include "absl/time/time.h"
#include "core/config.h"

namespace goodput::core {

int64_t EventTimeNanos(const v1::Event& e) {
  return e.time().seconds() * kNanosPerSecond + e.time().nanos();
}

std::string FormatTimeNanos(int64_t ns) {
  return absl::FormatTime("%Y-%m-%d%ET%H:%M:%E*SZ", absl::FromUnixNanos(ns),
                          absl::UTCTimeZone());
}

int KindRank(const v1::Event& e) {
  switch (e.body_case()) {
    case v1::Event::kJobSubmitted:
      return 0;
    case v1::Event::kAllocation:
      return 1;
    case v1::Event::kStep:
      return 2;
    case v1::Event::kCheckpoint:
      return 3;
    case v1::Event::kInterruption:
      return 4;
    case v1::Event::kStarted:
      return 5;
    case v1::Event::kActivity:
      return 6;
    case v1::Event::kJobEnded:
      return 7;
    default:
      return 8;
  }
}

void SortForApply(const std::vector<v1::Event>& events,
                  std::vector<uint32_t>* order) {
  struct Key {
    int64_t time_ns;
    int rank;
    uint32_t index;
  };
  std::vector<Key> keys;
  keys.reserve(order->size());
  for (uint32_t i : *order) {
    keys.push_back({EventTimeNanos(events[i]), KindRank(events[i]), i});
  }
  std::stable_sort(keys.begin(), keys.end(), [](const Key& a, const Key& b) {
    return std::tie(a.time_ns, a.rank) < std::tie(b.time_ns, b.rank);
  });
  for (size_t i = 0; i < keys.size(); ++i) (*order)[i] = keys[i].index;
}

}  // namespace goodput::core
