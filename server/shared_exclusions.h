#ifndef GOODPUT_SERVER_SHARED_EXCLUSIONS_H_
#define GOODPUT_SERVER_SHARED_EXCLUSIONS_H_

#include <cstdint>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/capacity_tracker.h"
#include "core/event_order.h"
#include "core/job_tracker.h"
#include "core/job_windows.h"
#include "proto/event.pb.h"

namespace goodput::server {

// The HOSTS and FLEET exclusions the server stored (docs/semantics.md,
// "Exclusions"), each with its stored batch, and how one job's event
// stream takes them so that the job ends up as core::FleetTracker's: an
// exclusion covers a job that has begun and not ended where it sorts
// (apply order) and, for HOSTS, has sent an event from one of its hosts
// before it; a job whose first event comes while one lasts is covered if
// that event's host matches. Owns copies of the events. Not thread-safe:
// one caller at a time.
class SharedExclusions {
 public:
  static constexpr uint64_t kAllBatches = std::numeric_limits<uint64_t>::max();

  // Whether `e` is a HOSTS or FLEET exclusion (one without a job).
  static bool IsShared(const v1::Event& e) {
    return e.has_exclusion() && e.job_id().empty();
  }

  // Adds shared exclusion `e`, stored in batch `batch`.
  void Add(const v1::Event& e, uint64_t batch);

  // Whether `e` (shared) may cover a job whose events came from `hosts`
  // (any job if null).
  static bool MayCover(const v1::Event& e, const std::set<std::string>* hosts);

  // Whether an exclusion stored after `through_batch` starts before
  // `applied_ns` and may cover a job with `hosts` (any job if null): a
  // record of the job made through `through_batch` with everything before
  // `applied_ns` applied no longer fits.
  bool StaleAfter(uint64_t through_batch, int64_t applied_ns,
                  const std::set<std::string>* hosts) const;

  // The exclusions that start within [from_ns, to_ns], in order.
  std::vector<const v1::Event*> Between(int64_t from_ns, int64_t to_ns) const;
  // Whether one starts within [from_ns, to_ns].
  bool AnyBetween(int64_t from_ns, int64_t to_ns) const;
  // The latest start (the lowest int64_t if there is none).
  int64_t LastStart() const {
    return entries_.empty() ? std::numeric_limits<int64_t>::min()
                            : entries_.back().start_ns;
  }

  // Appends to `out` the exclusions stored through `through_batch` that
  // start within [from_ns, to_ns].
  void EventsIn(int64_t from_ns, int64_t to_ns, uint64_t through_batch,
                std::vector<v1::Event>* out) const;

  // Applies `e`, the job's next event in apply order (a shared exclusion
  // or one of the job's events), to `tracker` (a core::JobTracker or
  // core::JobWindows), with `hosts` the hosts of the job's events so far
  // (updated). A job's first event first takes the exclusions stored
  // through `through_batch` that it starts inside of.
  template <typename Tracker>
  absl::StatusOr<core::ApplyResult> Apply(
      const v1::Event& e, std::set<std::string>* hosts, Tracker* tracker,
      uint64_t through_batch = kAllBatches) const;

  // Leaves every exclusion's hosts' time out of `capacity`.
  void ExcludeFrom(core::CapacityTracker* capacity) const;
  // Leaves `e`'s (shared) hosts' time out of `capacity`.
  static void ExcludeOne(const v1::Event& e, core::CapacityTracker* capacity);

  bool empty() const { return entries_.empty(); }
  // Calls fn(event, batch) for every exclusion, in the order kept (Add
  // again in this order to make the same set).
  template <typename Fn>
  void ForEach(Fn fn) const {
    for (const Entry& x : entries_) fn(x.event, x.batch);
  }

  // The end of exclusion `e` (its `until`) in nanoseconds.
  static int64_t UntilNanos(const v1::Event& e);

 private:
  struct Entry {
    int64_t start_ns, until_ns;
    uint64_t batch;
    v1::Event event;
  };
  static const core::JobTracker& Live(const core::JobTracker& t) { return t; }
  // Whether an event other than an exclusion was applied (the cursor moves
  // only with those; event times are after the epoch).
  static bool Started(const core::JobTracker& t) { return t.cursor_ns() != 0; }
  static const core::JobTracker& Live(const core::JobWindows& w) {
    return w.live();
  }
  // Exclusions `first` (a job's first event) starts inside of.
  std::vector<const Entry*> Around(const v1::Event& first,
                                   uint64_t through_batch) const;
  // The first entry that starts at or after `t`.
  std::vector<Entry>::const_iterator FirstFrom(int64_t t) const;

  std::vector<Entry> entries_;  // by start time, then arrival
};

template <typename Tracker>
absl::StatusOr<core::ApplyResult> SharedExclusions::Apply(
    const v1::Event& e, std::set<std::string>* hosts, Tracker* tracker,
    uint64_t through_batch) const {
  const core::JobTracker& live = Live(*tracker);
  if (IsShared(e)) {
    if (!Started(live) || live.ended() || !MayCover(e, hosts)) {
      return core::ApplyResult::kApplied;  // not covered
    }
    absl::Status s = tracker->Exclude(core::EventTimeNanos(e), UntilNanos(e));
    if (!s.ok()) return s;
    return core::ApplyResult::kApplied;
  }
  if (e.has_exclusion()) return tracker->Apply(e);
  if (!Started(live)) {
    for (const Entry* x : Around(e, through_batch)) {
      (void)tracker->Exclude(x->start_ns, x->until_ns);  // before any event
    }
  }
  if (!e.host().empty()) hosts->insert(e.host());
  return tracker->Apply(e);
}

}  // namespace goodput::server

#endif  // GOODPUT_SERVER_SHARED_EXCLUSIONS_H_
