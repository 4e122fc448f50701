#include "core/exclusions.h"

#include <algorithm>

namespace goodput::core {

void ExclusionSet::Add(int64_t start_ns, int64_t until_ns) {
  if (until_ns <= start_ns) return;
  // The intervals that touch [start, until) merge into it.
  auto first = std::lower_bound(
      intervals_.begin(), intervals_.end(), start_ns,
      [](const Interval& i, int64_t t) { return i.second < t; });
  auto last = first;
  while (last != intervals_.end() && last->first <= until_ns) {
    start_ns = std::min(start_ns, last->first);
    until_ns = std::max(until_ns, last->second);
    ++last;
  }
  first = intervals_.erase(first, last);
  intervals_.insert(first, {start_ns, until_ns});
}

std::vector<ExclusionSet::Interval>::const_iterator
ExclusionSet::FirstEndingAfter(int64_t t) const {
  return std::upper_bound(
      intervals_.begin(), intervals_.end(), t,
      [](int64_t x, const Interval& i) { return x < i.second; });
}

int64_t ExclusionSet::ExcludedIn(int64_t from, int64_t to) const {
  int64_t excluded = 0;
  Split(from, to, [&](int64_t a, int64_t b, bool x) {
    if (x) excluded += b - a;
  });
  return excluded;
}

int64_t ExclusionSet::AfterIncluded(int64_t from, int64_t ns) const {
  for (auto it = FirstEndingAfter(from); it != intervals_.end(); ++it) {
    const int64_t gap = std::max<int64_t>(0, it->first - from);
    if (ns <= gap) break;  // reached before this interval starts
    ns -= gap;
    from = it->second;
  }
  return from + ns;
}

void ExclusionSet::DropBefore(int64_t t) {
  intervals_.erase(intervals_.begin(), FirstEndingAfter(t));
}

}  // namespace goodput::core
