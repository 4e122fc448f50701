#ifndef GOODPUT_SERVER_EVICTED_AT_CUT_H_
#define GOODPUT_SERVER_EVICTED_AT_CUT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/report.h"
#include "storage/event_store.h"
#include "storage/job_snapshot.h"

namespace goodput::server {

// Which jobs a report as of now must read from the store: those evicted
// from memory at a cut of the live state (the newest stored batch when the
// report took what the live state held, under the ingest lock). It knows
// the jobs held at the cut, so that their final snapshots are read after
// the lock is released (Read): a store of many ended jobs then costs the
// report, not ingest. A plain value that owns its ids; not thread-safe.
class EvictedAtCut {
 public:
  // Nothing was evicted at the cut: Read reads nothing.
  EvictedAtCut() = default;
  // Jobs were evicted by batch `through_batch`, the cut.
  explicit EvictedAtCut(uint64_t through_batch)
      : through_batch_(through_batch), any_(true) {}

  // `job_id` was held in memory at the cut (in any order; no-op when
  // nothing was evicted).
  void AddHeld(const std::string& job_id);
  // The same for the job of each of `reports`.
  void AddHeld(const std::vector<core::JobReport>& reports);

  // The stored final snapshots of the jobs evicted at the cut, in job id
  // order: every snapshot of a job not held then. Aborted when one was
  // stored after the cut (its through_batch is later; retention's, marked
  // events_deleted, only restates a final report) by a job not held then:
  // a job a late event brought back and that left memory again, or a new
  // one. The caller then answers under the ingest lock.
  absl::StatusOr<std::vector<storage::JobSnapshot>> Read(
      storage::EventStore* store);

 private:
  uint64_t through_batch_ = 0;
  bool any_ = false;
  std::vector<std::string> held_;
};

}  // namespace goodput::server

#endif  // GOODPUT_SERVER_EVICTED_AT_CUT_H_
