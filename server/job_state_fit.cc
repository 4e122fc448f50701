#include "server/job_state_fit.h"

#include <utility>

#include "core/event_order.h"
#include "proto/tracker_state.pb.h"

namespace goodput::server {

bool StateFits(const internal::v1::StoredJobState& state,
               const std::vector<v1::Event>& tail) {
  if (!state.has_last_applied_ns()) return true;
  const auto last =
      std::make_pair(state.last_applied_ns(), state.last_applied_rank());
  for (const v1::Event& e : tail) {
    if (std::make_pair(core::EventTimeNanos(e), core::KindRank(e)) < last) {
      return false;
    }
  }
  return true;
}

absl::StatusOr<core::JobTracker> TrackerOfState(
    const internal::v1::StoredJobState& state, const core::Config* config) {
  internal::v1::JobTrackerState tracker_state;
  if (!tracker_state.ParseFromString(state.tracker())) {
    return absl::DataLossError("tracker: does not parse");
  }
  return core::JobTracker::FromState(tracker_state, config);
}

}  // namespace goodput::server
