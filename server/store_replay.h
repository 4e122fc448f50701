#ifndef GOODPUT_SERVER_STORE_REPLAY_H_
#define GOODPUT_SERVER_STORE_REPLAY_H_

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/config.h"
#include "core/report.h"
#include "proto/storage.pb.h"
#include "server/fleet_history.h"
#include "server/shared_exclusions.h"
#include "storage/event_store.h"

namespace goodput::server {

// Reports that the live state cannot answer (an as-of before its newest
// applied event, a --since window), computed from the store alone, job by
// job: each job starts from its newest stored state that the question
// allows (one recorded at or before the window's start, or the as-of) and
// reads only its events after that state, through batch `through_batch`
// (a consistent cut: later batches are ignored). An ended job whose final
// snapshot answers the question is not replayed at all. Memory: one job's
// events at a time, plus the reports. Equals core::ReplayEvents of the
// same stored events (SPEC rule 8). Does not own the store; one call at a
// time per object (any number may read one store while ingest writes).
class StoreReplay {
 public:
  struct Stats {
    int64_t jobs = 0;           // jobs reported
    int64_t from_snapshot = 0;  // ... from an ended job's final snapshot
    int64_t from_state = 0;     // ... starting from a stored state
    int64_t events_read = 0;    // stored events read
  };

  // `config.since_ns` is the window's start (its default: no window).
  // `cancelled`, if set, is polled between jobs: a true ends the replay
  // with CANCELLED.
  StoreReplay(storage::EventStore* store, core::Config config,
              uint64_t through_batch, std::function<bool()> cancelled);

  // The fleet report as of `as_of_ns`. FailedPrecondition if a job whose
  // events retention deleted would have to be cut.
  absl::StatusOr<core::FleetReport> Report(int64_t as_of_ns);

  // One job's report as of `as_of_ns`; nullopt if it has no event then.
  absl::StatusOr<std::optional<core::JobReport>> Job(const std::string& job_id,
                                                     int64_t as_of_ns);

  const Stats& stats() const { return stats_; }

 private:
  bool windowed() const;
  // If the final snapshot of `job_id` answers as of `as_of_ns`: its report,
  // or no report when the job ended before the window.
  std::optional<std::optional<core::JobReport>> FromSnapshot(
      const std::string& job_id, storage::JobEventsReader* events,
      int64_t as_of_ns);
  // Whether the job had an event at or before `as_of_ns`, from its newest
  // state record (its first event time) and the events stored after it, so
  // that a job that began later costs no replay.
  absl::StatusOr<bool> BegunBy(
      const std::vector<internal::v1::StoredJobState>& states,
      storage::JobEventsReader* events, int64_t as_of_ns);
  // The job's report from `states` (its stored states, oldest first) and
  // `events` (a reader of its stored events).
  absl::StatusOr<std::optional<core::JobReport>> JobFrom(
      const std::string& job_id,
      const std::vector<internal::v1::StoredJobState>& states,
      storage::JobEventsReader* events, int64_t as_of_ns);
  absl::StatusOr<std::optional<core::JobReport>> Replay(
      const std::string& job_id,
      const std::vector<internal::v1::StoredJobState>& states,
      storage::JobEventsReader* events, int64_t as_of_ns);
  // FailedPrecondition if `states` (a job's, oldest first) start with a
  // record imported from a partition snapshot whose last applied event is
  // after `start_ns`: the question needs events this store does not have.
  absl::Status BeforeImport(
      const std::string& job_id,
      const std::vector<internal::v1::StoredJobState>& states,
      int64_t start_ns) const;
  // The report of a job whose events retention deleted (or that was
  // imported as its final snapshot), or an error if the question cuts it;
  // nullopt if it does not count as of `as_of_ns`.
  absl::StatusOr<std::optional<core::JobReport>> Deleted(
      const storage::JobSnapshot& snapshot, int64_t as_of_ns) const;
  // Capacity from the newest spaced fleet state record that fits and the
  // fleet events after it (FleetHistory; FailedPrecondition if retention
  // deleted the heartbeats it needs).
  absl::StatusOr<std::map<std::string, double>> Capacity(int64_t as_of_ns);
  // Loads the snapshots and the shared exclusions (once).
  absl::Status LoadSnapshots();
  absl::Status LoadShared();

  storage::EventStore* store_;
  const core::Config config_;
  const uint64_t through_batch_;
  std::function<bool()> cancelled_;
  bool snapshots_loaded_ = false;
  std::map<std::string, storage::JobSnapshot> snapshots_;
  SharedExclusions shared_;  // HOSTS and FLEET, through through_batch_
  FleetHistory history_;     // capacity from the spaced fleet state records
  Stats stats_;
};

}  // namespace goodput::server

#endif  // GOODPUT_SERVER_STORE_REPLAY_H_
