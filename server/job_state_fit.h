#ifndef GOODPUT_SERVER_JOB_STATE_FIT_H_
#define GOODPUT_SERVER_JOB_STATE_FIT_H_

#include <vector>

#include "absl/status/statusor.h"
#include "core/config.h"
#include "core/job_tracker.h"
#include "proto/event.pb.h"
#include "proto/storage.pb.h"

namespace goodput::server {

// Whether the job's stored events `tail`, those in batches after `state`,
// all come after the state's last applied event in apply order (time, then
// kind rank), so that the state plus the tail is the job. A tail event that
// sorts before it (a late event stored after the state) makes the state
// stale for good: tails only grow (storage/KEY_LAYOUT.md, `job_states`).
bool StateFits(const internal::v1::StoredJobState& state,
               const std::vector<v1::Event>& tail);

// The tracker of `state` under `config` (core::JobTracker::FromState of its
// `tracker` bytes): DataLoss if they do not parse, else FromState's error
// (another tracker state version or config, an inconsistent record).
absl::StatusOr<core::JobTracker> TrackerOfState(
    const internal::v1::StoredJobState& state, const core::Config* config);

}  // namespace goodput::server

#endif  // GOODPUT_SERVER_JOB_STATE_FIT_H_
