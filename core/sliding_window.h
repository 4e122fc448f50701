#ifndef GOODPUT_CORE_SLIDING_WINDOW_H_
#define GOODPUT_CORE_SLIDING_WINDOW_H_

#include <cstdint>
#include <deque>
#include <optional>
#include <utility>

#include "absl/status/status.h"
#include "core/report.h"
#include "proto/metrics_state.pb.h"

namespace goodput::core {

// Counter increases that the ratios of SPEC section 3 rule 10 need, in
// chip-seconds (fleet, segment) or seconds (one job).
struct WindowAmounts {
  double total = 0;        // every category
  double unallocated = 0;  // queued + recovery
  double productive = 0;
  double ideal = 0;     // PG numerator
  double costed = 0;    // PG denominator
  double capacity = 0;  // host capacity (fleet only)
  // Rule 14: elastic jobs' all-allocated time weighted by their held chips
  // and by their requested chips (in the window's unit).
  double elastic_held = 0, elastic_requested = 0;

  void Add(const WindowAmounts& o);
  // The ratios of these amounts; `with_capacity` adds sg/mpg_capacity.
  TotalsRatios Ratios(bool with_capacity) const;
  // elastic_held / elastic_requested (at most 1); nullopt while the
  // requested amount is 0 (no elastic job was all-allocated).
  std::optional<double> SliceEfficiency() const;
};

// A sliding sum over event time with bounded memory: increases are added
// to fixed buckets of window / buckets; the sum as of `now` covers the
// bucket holding `now` and the buckets - 1 before it, so it spans between
// window - bucket and window of event time. Memory is at most `buckets`
// buckets; an increase older than that is dropped (and counted). A plain
// value; not thread-safe.
class SlidingWindow {
 public:
  SlidingWindow(int64_t window_ns, int buckets);

  void Add(int64_t time_ns, const WindowAmounts& amounts);
  WindowAmounts Sum(int64_t now_ns) const;

  // Start (inclusive) of the span Sum(now_ns) covers.
  int64_t SpanStart(int64_t now_ns) const;
  int64_t dropped() const { return dropped_; }
  size_t bucket_count() const { return buckets_.size(); }

  // Its shape, buckets and dropped count, and back. LoadState replaces
  // everything; a state of another shape (bucket length, buckets) is
  // InvalidArgument, and buckets out of order or further apart than the
  // window are DataLoss, both naming the field. On error it is unchanged.
  void SaveState(internal::v1::SlidingWindowState* state) const;
  absl::Status LoadState(const internal::v1::SlidingWindowState& state);

 private:
  int64_t BucketOf(int64_t time_ns) const;

  int64_t bucket_ns_;
  int64_t n_;
  std::deque<std::pair<int64_t, WindowAmounts>> buckets_;  // ascending
  int64_t dropped_ = 0;
};

}  // namespace goodput::core

#endif  // GOODPUT_CORE_SLIDING_WINDOW_H_
