#ifndef GOODPUT_STORAGE_JOB_SNAPSHOT_H_
#define GOODPUT_STORAGE_JOB_SNAPSHOT_H_

#include <cstdint>

#include "absl/status/status.h"
#include "core/report.h"
#include "proto/storage.pb.h"

namespace goodput::storage {

// The final state of an ended job (storage/KEY_LAYOUT.md, `snapshots`):
// its report, which no longer changes with the as-of (for as-ofs at or
// after `ended_ns`, without a --since window that cuts the job). Valid for
// the job's events stored in batches up to `through_batch`; a later batch
// with an event of the job makes it stale. Plain data.
struct JobSnapshot {
  uint64_t through_batch = 0;
  int64_t first_event_ns = 0;
  int64_t ended_ns = 0;
  bool events_deleted = false;  // by retention; no more events accepted
  // Taken over from a partition snapshot: no raw events here, none
  // accepted (cluster mode).
  bool imported = false;
  core::JobReport report;
};

// The stored record of `snapshot`, and back. FromRecord fails with
// DataLoss naming the job when the record does not fit core's types.
internal::v1::JobSnapshot ToRecord(const JobSnapshot& snapshot);
absl::Status FromRecord(const internal::v1::JobSnapshot& record,
                        JobSnapshot* snapshot);

}  // namespace goodput::storage

#endif  // GOODPUT_STORAGE_JOB_SNAPSHOT_H_
