#ifndef GOODPUT_CORE_EXCLUSIONS_H_
#define GOODPUT_CORE_EXCLUSIONS_H_

#include <cstdint>
#include <utility>
#include <vector>

namespace goodput::core {

// The time of one job that does not count (exclusion events,
// docs/semantics.md "Exclusions"): the union of the [start, until)
// intervals added, kept as sorted, disjoint, non-adjacent intervals, so
// overlapping exclusions exclude their time once. A copyable value that
// owns its intervals. Not thread-safe: one caller at a time.
class ExclusionSet {
 public:
  using Interval = std::pair<int64_t, int64_t>;  // [first, second)

  // Adds [start_ns, until_ns); nothing when it is empty.
  void Add(int64_t start_ns, int64_t until_ns);

  // Calls fn(from, to, excluded) for the consecutive pieces that cover
  // [from, to), in order: each wholly excluded or wholly not.
  template <typename Fn>
  void Split(int64_t from, int64_t to, Fn fn) const;

  // Excluded nanoseconds within [from, to).
  int64_t ExcludedIn(int64_t from, int64_t to) const;

  // The instant at which `ns` (>= 0) nanoseconds that are not excluded
  // have passed since `from`: from + ns when nothing after `from` is
  // excluded.
  int64_t AfterIncluded(int64_t from, int64_t ns) const;

  // Forgets the intervals that end at or before `t` (they can no longer
  // cut time at or after `t`).
  void DropBefore(int64_t t);

  bool empty() const { return intervals_.empty(); }
  const std::vector<Interval>& intervals() const { return intervals_; }

 private:
  // The first interval that ends after `t`.
  std::vector<Interval>::const_iterator FirstEndingAfter(int64_t t) const;

  std::vector<Interval> intervals_;
};

template <typename Fn>
void ExclusionSet::Split(int64_t from, int64_t to, Fn fn) const {
  for (auto it = FirstEndingAfter(from); from < to; ++it) {
    if (it == intervals_.end() || it->first >= to) {
      fn(from, to, false);
      return;
    }
    if (it->first > from) fn(from, it->first, false);
    const int64_t end = std::min(it->second, to);
    fn(std::max(from, it->first), end, true);
    from = end;
  }
}

}  // namespace goodput::core

#endif  // GOODPUT_CORE_EXCLUSIONS_H_
