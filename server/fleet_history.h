#ifndef GOODPUT_SERVER_FLEET_HISTORY_H_
#define GOODPUT_SERVER_FLEET_HISTORY_H_

#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/capacity_tracker.h"
#include "core/config.h"
#include "proto/storage.pb.h"
#include "server/shared_exclusions.h"
#include "storage/event_store.h"

namespace goodput::server {

// The spaced fleet state records (storage/KEY_LAYOUT.md, "Spaced fleet
// state records"): `meta/fleet/<through_batch>`, each a StoredFleetState
// holding the live fleet state through its batch and the capacity as of a
// past time (its cut). Answers a past as-of's capacity from the newest
// record whose cut fits plus the fleet events stored after it up to what
// the as-of needs (EventStore::ScanFleetUntil), exactly as FullScanCapacity;
// writes new records and spaces them; deletes the heartbeats retention no
// longer needs. Reads and writes `store`, which it does not own; `config`
// must outlive it. Not thread-safe (one object per query, or used under
// the ingest lock).
class FleetHistory {
 public:
  // The meta record names (EventStore::WriteMeta): kRecordPrefix + the
  // through_batch in 20 decimal digits; kDeletedMeta says up to which
  // batch retention deleted the fleet events, and the cut that covers them.
  static constexpr char kRecordPrefix[] = "fleet/";
  static constexpr char kDeletedMeta[] = "fleet_deleted";
  // The restart record (LiveState::kFleetStateMeta).
  static constexpr char kRestartMeta[] = "fleet";
  // Spacing: the newest kKeepNewest records, then the oldest of each 10
  // minutes of cut time over the last kFineFor, of each hour over the last
  // kHourlyFor, then of each day.
  static constexpr int kKeepNewest = 4;
  static constexpr int64_t kFineFor = 6 * 3'600'000'000'000;
  static constexpr int64_t kHourlyFor = 48 * 3'600'000'000'000;

  struct Stats {
    int64_t records_skipped = 0;  // torn, of another version, or stale
    int64_t batches_read = 0;     // batches with fleet events read
    bool from_record = false;     // the capacity started from a record
  };

  FleetHistory(storage::EventStore* store, const core::Config* config);

  // Reads the records through `through_batch` (the ones that parse, oldest
  // first) and the retention mark.
  absl::Status Load(uint64_t through_batch);

  // Capacity chip-seconds as of `as_of_ns` under the config's window, from
  // the stored fleet events through the loaded batch: FullScanCapacity's
  // answer. FailedPrecondition naming as_of if retention deleted heartbeats
  // it needs.
  absl::StatusOr<std::map<std::string, double>> Capacity(int64_t as_of_ns);

  // Adds every HOSTS and FLEET exclusion stored through the loaded batch
  // to `out`: the newest record's and those stored after it.
  absl::Status LoadShared(SharedExclusions* out);

  // Writes `live` (LiveState::FleetState, through the loaded batch) as a
  // spaced record with its cut as of its newest heartbeat less
  // storage::kFleetLateNanos, and deletes the records the spacing drops.
  absl::Status Record(internal::v1::StoredFleetState live);

  // Retention: deletes the fleet events of the batches that the newest
  // record whose cut is at or before `horizon_ns` covers (the retention
  // mark first), and the records older than it. `done_through` is the
  // batch through which the caller saw a deletion succeed: if the mark is
  // past it (a deletion that failed or was cut short after the mark), the
  // fleet events through the mark are deleted again even when no newer
  // record is due. Returns the batch through which the fleet events are
  // deleted now (`done_through` if there was nothing to do).
  absl::StatusOr<uint64_t> DeleteBefore(int64_t horizon_ns,
                                        uint64_t done_through);

  // The loaded records, oldest first (LiveState's capacity rebuild).
  const std::vector<internal::v1::StoredFleetState>& records() const {
    return records_;
  }
  // Batches up to this one have no fleet events left (0: none deleted).
  uint64_t deleted_through() const { return deleted_.through_batch(); }
  const Stats& stats() const { return stats_; }

  // The reference: capacity as of `as_of_ns` from every stored batch
  // through `through_batch` (what Capacity equals, to the last bit).
  static absl::StatusOr<std::map<std::string, double>> FullScanCapacity(
      storage::EventStore* store, const core::Config& config,
      uint64_t through_batch, int64_t as_of_ns);

 private:
  // A capacity tracker as of a cut, and the first batch that holds a fleet
  // event after the cut (0 if none through the loaded batch).
  struct Cut {
    core::CapacityTracker tracker;
    uint64_t first_later = 0;
  };
  // The tracker as of `as_of_ns` (heartbeats at or before it) under
  // `config`, from `record` (null: from nothing) plus the stored fleet
  // events after it; nullopt if the record is stale (a heartbeat at or
  // before its cut, or an exclusion starting before it, stored after it).
  absl::StatusOr<std::optional<Cut>> CutFrom(
      const internal::v1::StoredFleetState* record, const core::Config& config,
      int64_t as_of_ns);
  // The newest cut that fits `as_of_ns` and `start_ns` (the window's start
  // or the as-of), falling back to older records; FailedPrecondition if
  // none fits once heartbeats were deleted.
  absl::StatusOr<Cut> BestCut(const core::Config& config, int64_t as_of_ns,
                              int64_t start_ns);
  // Adds `excluded` (those at or before `as_of_ns`) to `tracker`, then
  // applies `beats` sorted in apply order (core::SortForApply).
  static void ApplyInOrder(const std::vector<v1::Event>& excluded,
                           const std::vector<v1::Event>& beats,
                           int64_t as_of_ns, core::CapacityTracker* tracker);
  // Sets `live`'s cut (Record); without one if it has no heartbeat or
  // retention deleted what the cut would start from.
  absl::Status AddCut(internal::v1::StoredFleetState* live);
  // Aborted if retention deleted (or is deleting) batches after
  // `after_batch` since Load: a scan of them may have missed some.
  absl::Status StillStored(uint64_t after_batch);
  // The newest record whose cut is at or before `horizon_ns` (end() if
  // none).
  std::vector<internal::v1::StoredFleetState>::iterator NewestCutAtOrBefore(
      int64_t horizon_ns);
  // Writes the retention mark of `record` (DeleteBefore) and keeps it.
  absl::Status WriteMark(const internal::v1::StoredFleetState& record);
  // Deletes the records before `keep`, from records_ and the store.
  absl::Status DeleteOlderThan(
      std::vector<internal::v1::StoredFleetState>::iterator keep);
  // The names of the records the spacing drops (records_ oldest first).
  std::vector<std::string> Dropped() const;
  static std::string Name(uint64_t through_batch);

  storage::EventStore* store_;
  const core::Config* config_;
  uint64_t through_batch_ = 0;
  std::vector<internal::v1::StoredFleetState> records_;  // with a cut
  internal::v1::StoredFleetState deleted_;               // the retention mark
  Stats stats_;
};

}  // namespace goodput::server

#endif  // GOODPUT_SERVER_FLEET_HISTORY_H_
