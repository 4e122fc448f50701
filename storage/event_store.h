#ifndef GOODPUT_STORAGE_EVENT_STORE_H_
#define GOODPUT_STORAGE_EVENT_STORE_H_

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "proto/event.pb.h"
#include "proto/service.pb.h"
#include "proto/storage.pb.h"
#include "storage/job_snapshot.h"

namespace goodput::storage {

// Whether `e` is stored with the batch rather than under a job: a
// heartbeat, or a HOSTS or FLEET exclusion (no job_id). ScanHeartbeats
// returns these, in batch order.
inline bool IsFleetEvent(const v1::Event& e) {
  return e.has_heartbeat() || (e.has_exclusion() && e.job_id().empty());
}

// The meta record of the evicted jobs' totals (EvictJobs).
inline constexpr char kEvictedTotalsMeta[] = "evicted";

// How far behind the newest stored heartbeat a fleet event may be before
// its batch is marked late (storage/KEY_LAYOUT.md, "Spaced fleet state
// records"): EventStore::ScanFleetUntil stops where the newest heartbeat
// is this far past its time, and reads only the late batches after that.
inline constexpr int64_t kFleetLateNanos = 300'000'000'000;  // 5 min

// Everything one acknowledged ingest batch writes, atomically: one
// agent's batch, or (the Ingestor's group commit) several agents' batches
// stored as one, under one batch id.
struct BatchWrite {
  std::string agent_id;
  uint64_t sequence = 0;
  int64_t received_ns = 0;
  std::vector<v1::Event> accepted;  // in batch order
  // Each of `accepted`'s serialization (its v1::Event wire bytes), if the
  // caller made them (the Ingestor does, before it takes its lock); they
  // must outlive Write. Empty (or not one per event): Write serializes.
  std::vector<absl::string_view> accepted_wire;
  std::vector<v1::DeadLetter> dead_letters;
  // Group commit: the other agents' batches in this write, each agent's
  // new high-water sequence; their accepted events follow the first's
  // (`agent_id`'s) in `accepted`, each batch's in order.
  std::vector<std::pair<std::string, uint64_t>> more_agents;
  // The key position of each of `dead_letters` (storage/KEY_LAYOUT.md,
  // `dead_letters`): its index plus the events of the write's batches
  // before its own. Empty: each one's index.
  std::vector<uint32_t> dead_letter_positions;
};

// What a cluster member takes over from a partition snapshot
// (EventStore::ImportJobs): the partition's jobs as state records (running
// or ended jobs held in memory) or final snapshots (jobs evicted or
// retired), and the partition's pseudo agent with its last applied
// sequence.
struct JobImport {
  std::string agent_id;
  uint64_t sequence = 0;
  std::vector<internal::v1::StoredJobState> states;  // through_batch set
  std::vector<JobSnapshot> finals;
};

// Reads one job's stored events by batch range (EventStore::ReadJob's
// contract, for the job it was made for). Not thread-safe.
class JobEventsReader {
 public:
  virtual ~JobEventsReader() = default;
  virtual absl::Status Read(uint64_t after_batch, uint64_t through_batch,
                            std::vector<v1::Event>* out) = 0;
  // Like Read, but may leave out a stored batch of the job whose events are
  // all later than `until_ns` (a question as of `until_ns` ignores them):
  // what it appends is a superset of Read's events at or before `until_ns`,
  // in the same order. The default reads everything.
  virtual absl::Status ReadUntil(uint64_t after_batch, uint64_t through_batch,
                                 int64_t until_ns,
                                 std::vector<v1::Event>* out) {
    (void)until_ns;
    return Read(after_batch, through_batch, out);
  }
};

// The durable store of acknowledged events behind goodputd (layout in
// storage/KEY_LAYOUT.md). Narrow on purpose: the server's only I/O
// boundary to disk; MemoryEventStore is its in-memory fake. Implementations
// are thread-safe.
class EventStore {
 public:
  virtual ~EventStore() = default;

  // Writes `batch` (accepted events, per-job index, the agent's new
  // high-water sequence, dead letters) in one atomic, durable write and
  // returns its batch id.
  virtual absl::StatusOr<uint64_t> Write(const BatchWrite& batch) = 0;

  // Every agent's highest acknowledged sequence.
  virtual absl::StatusOr<std::map<std::string, uint64_t>> AgentSequences() = 0;

  // The newest stored batch id (0 for an empty store).
  virtual uint64_t LastBatchId() = 0;

  // The stored events of `job_id` in batches after `after_batch` up to and
  // including `through_batch`, in storage order. Reads only that job's
  // events in that range (storage/KEY_LAYOUT.md).
  virtual absl::Status ReadJob(const std::string& job_id, uint64_t after_batch,
                               uint64_t through_batch,
                               std::vector<v1::Event>* out) = 0;
  // ReadJob, but may leave out batches whose events of the job are all
  // later than `until_ns` (JobEventsReader::ReadUntil's contract). The
  // default reads everything.
  virtual absl::Status ReadJobUntil(const std::string& job_id,
                                    uint64_t after_batch,
                                    uint64_t through_batch, int64_t until_ns,
                                    std::vector<v1::Event>* out) {
    (void)until_ns;
    return ReadJob(job_id, after_batch, through_batch, out);
  }

  // Calls `visit` with the id of every job that has stored events, in key
  // order, without reading them; stops at the first error and returns it.
  using JobVisitor = std::function<absl::Status(const std::string& job_id)>;
  virtual absl::Status ListJobs(const JobVisitor& visit) = 0;

  // Calls `visit` with the heartbeats and other fleet events (IsFleetEvent)
  // of every
  // stored batch that has any, in batch id order; stops at the first error
  // `visit` returns and returns it. The events are the visitor's to move.
  using BatchVisitor = std::function<absl::Status(
      uint64_t batch_id, std::vector<v1::Event>* events)>;
  absl::Status ScanHeartbeats(const BatchVisitor& visit) {
    return ScanHeartbeatsAfter(0, visit);
  }
  // The same for the batches after `after_batch` only (one seek: a restart
  // from the fleet state record reads no earlier batch).
  virtual absl::Status ScanHeartbeatsAfter(uint64_t after_batch,
                                           const BatchVisitor& visit) = 0;

  // Like ScanHeartbeatsAfter through `through_batch`, but may leave out
  // batches whose fleet events are all later than `until_ns`: what it
  // visits is, in batch order, a superset of the batches holding a fleet
  // event at or before `until_ns`. The default visits every batch.
  virtual absl::Status ScanFleetUntil(uint64_t after_batch,
                                      uint64_t through_batch, int64_t until_ns,
                                      const BatchVisitor& visit) {
    (void)until_ns;
    return ScanHeartbeatsAfter(
        after_batch, [&](uint64_t id, std::vector<v1::Event>* events) {
          return id > through_batch ? absl::OkStatus() : visit(id, events);
        });
  }
  // Retention of heartbeats: deletes the fleet events (heartbeats, HOSTS
  // and FLEET exclusions) of every batch up to `through_batch`, which must
  // be before the newest batch (InvalidArgument otherwise). Job events,
  // agent sequences and dead letters stay.
  virtual absl::Status DeleteFleetEvents(uint64_t through_batch) = 0;

  // Restart recovery in one ordered pass over the jobs: calls `visit` for
  // every job with stored events (ListJobs' order) with its stored states
  // (oldest first; those that do not parse left out) and a reader of its
  // events, both valid only during the call; stops at the first error.
  // Leaves out the evicted jobs (EvictJobs) that have no events stored
  // since their eviction: a restart takes them from their totals.
  using RestoreVisitor = std::function<absl::Status(
      const std::string& job_id,
      std::vector<internal::v1::StoredJobState>* states,
      JobEventsReader* events)>;
  virtual absl::Status ScanJobsForRestore(const RestoreVisitor& visit) = 0;
  // The same pass with the evicted jobs too (reports from the store).
  virtual absl::Status ScanAllJobs(const RestoreVisitor& visit) = 0;

  // Stores `states` (each under its job and through_batch) and deletes the
  // states of `remove` (job id, through_batch), in one atomic write.
  virtual absl::Status WriteJobStates(
      const std::vector<internal::v1::StoredJobState>& states,
      const std::vector<std::pair<std::string, uint64_t>>& remove) = 0;

  // The stored states of `job_id`, oldest through_batch first. A record that
  // does not parse is left out and counted in `*unreadable`.
  virtual absl::Status ReadJobStates(
      const std::string& job_id, std::vector<internal::v1::StoredJobState>* out,
      int* unreadable) = 0;

  // Stores `snapshots`, each replacing its job's earlier one, in one
  // atomic write.
  virtual absl::Status WriteSnapshots(
      const std::vector<JobSnapshot>& snapshots) = 0;

  // Every stored snapshot, in job id order: the held ones
  // (WriteSnapshots) and the evicted ones (EvictJobs); a job with both (an
  // evicted job that came back and ended again) gives its held one.
  virtual absl::Status ReadSnapshots(std::vector<JobSnapshot>* out) = 0;
  // The held snapshots only, in job id order (a restart).
  virtual absl::Status ReadHeldSnapshots(std::vector<JobSnapshot>* out) = 0;

  // The stored snapshot of `job_id` in `*out` (its held one, else its
  // evicted one), or nullopt if it has none.
  virtual absl::Status ReadSnapshot(const std::string& job_id,
                                    std::optional<JobSnapshot>* out) = 0;
  // The evicted snapshot of `job_id` only, or nullopt.
  virtual absl::Status ReadEvictedSnapshot(const std::string& job_id,
                                           std::optional<JobSnapshot>* out) = 0;

  // The evicted snapshots of the jobs that ended before `before_ns` and
  // whose events retention has not deleted, oldest end first: what the
  // retention of evicted jobs reads (an index by end time), not every
  // evicted job. A snapshot marked events_deleted is listed until
  // DeleteJobEvents deleted its job's events (a retirement that failed or
  // was cut short between its two writes).
  virtual absl::Status ReadEvictedEndedBefore(
      int64_t before_ns, std::vector<JobSnapshot>* out) = 0;

  // Jobs leaving memory (storage/KEY_LAYOUT.md, "Evicted jobs"), in one
  // atomic write: stores each of `snapshots` as its job's evicted snapshot
  // (replacing an earlier one), deletes its held snapshot and its job
  // head, indexes it by end time (unless events_deleted: then an index key
  // stays until DeleteJobEvents), and writes `totals`, if set, as the meta
  // record kEvictedTotalsMeta: the summed reports of every evicted snapshot.
  virtual absl::Status EvictJobs(const std::vector<JobSnapshot>& snapshots,
                                 const std::optional<std::string>& totals) = 0;

  // Retention, in one atomic write: deletes the stored events and states
  // of the jobs of `retired` (their final snapshots) and their end-time
  // index keys (EvictJobs). Dead letters, heartbeats, agent sequences and
  // snapshots stay.
  virtual absl::Status DeleteJobEvents(
      const std::vector<JobSnapshot>& retired) = 0;

  // Cluster takeover from a partition snapshot, in one atomic write: for
  // each job of `import`, deletes everything stored of it (events, late
  // marks, states, head, held snapshot; an evicted snapshot stays, as the
  // totals count it), then stores its imported state record
  // with a head (so a restart restores it) or its final snapshot; and sets
  // the agent's high-water sequence.
  virtual absl::Status ImportJobs(const JobImport& import) = 0;

  // Small named records of the server's own state (e.g. the metrics
  // windows), in the `default` column family under "meta/" + `name`.
  virtual absl::Status WriteMeta(const std::string& name,
                                 const std::string& value) = 0;
  // Writes the records `records` (name, value) in one write, synced like
  // WriteMeta.
  virtual absl::Status WriteMetas(
      const std::vector<std::pair<std::string, std::string>>& records) = 0;
  // The record `name` in `*value`, or nullopt if there is none.
  virtual absl::Status ReadMeta(const std::string& name,
                                std::optional<std::string>* value) = 0;
  // Calls `visit` with every record whose name starts with `prefix`, in
  // name order; stops at the first error and returns it.
  using MetaVisitor = std::function<absl::Status(const std::string& name,
                                                 const std::string& value)>;
  virtual absl::Status ScanMeta(const std::string& prefix,
                                const MetaVisitor& visit) = 0;
  // Deletes the records `names` in one write (absent ones are no error).
  virtual absl::Status DeleteMeta(const std::vector<std::string>& names) = 0;

  // Up to `limit` dead letters, oldest first, and how many there are.
  virtual absl::Status DeadLetters(size_t limit,
                                   std::vector<v1::DeadLetter>* out,
                                   uint64_t* total) = 0;
};

}  // namespace goodput::storage

#endif  // GOODPUT_STORAGE_EVENT_STORE_H_
