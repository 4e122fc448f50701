#ifndef GOODPUT_STORAGE_ROCKSDB_EVENT_STORE_H_
#define GOODPUT_STORAGE_ROCKSDB_EVENT_STORE_H_

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "absl/status/statusor.h"
#include "proto/storage.pb.h"
#include "storage/ack_marker.h"
#include "storage/event_store.h"

namespace rocksdb {
class DB;
class ColumnFamilyHandle;
struct ColumnFamilyOptions;
class Slice;
class WriteBatch;
}  // namespace rocksdb

namespace goodput::storage {

// EventStore on an embedded RocksDB in a local directory, with the layout
// of storage/KEY_LAYOUT.md. RocksDB's errors are translated to
// absl::Status here and nowhere else. Owns the database. Thread-safe
// (Write calls are serialized by the caller's order of batch ids; RocksDB
// handles concurrent reads).
class RocksDbEventStore : public EventStore {
 public:
  struct Options {
    bool fsync = false;  // sync the WAL (and the ack marker) on every batch
    // Open a store that lost acknowledged batches (its WAL was damaged)
    // instead of refusing it; lost_batches() then says how many.
    bool accept_loss = false;
  };

  // The file beside RocksDB's that records the newest acknowledged batch
  // (storage/ack_marker.h).
  static constexpr char kAckMarkerFile[] = "GOODPUT_ACKED";

  // Opens (creating if missing) the store in `dir`.
  static absl::StatusOr<std::unique_ptr<RocksDbEventStore>> Open(
      const std::string& dir, Options options);
  ~RocksDbEventStore() override;

  // Batches of a layout-1 store rewritten to layout 2 by Open.
  int64_t migrated_batches() const { return migrated_batches_; }
  // job_events values looked at by job reads (ReadJob*, ScanJobsForRestore
  // readers) since Open: what a past as-of costs (tests and benchmarks).
  int64_t job_values_visited() const { return job_values_visited_; }
  // With Options::accept_loss: what Open found missing. lost_batches() is
  // how many acknowledged batches the store no longer has (0 if none, or if
  // the marker itself was unreadable); damage() is the error Open would
  // have returned without accept_loss ("" if none).
  uint64_t lost_batches() const { return lost_batches_; }
  const std::string& damage() const { return damage_; }

  absl::StatusOr<uint64_t> Write(const BatchWrite& batch) override;
  absl::StatusOr<std::map<std::string, uint64_t>> AgentSequences() override;
  uint64_t LastBatchId() override;
  absl::Status ReadJob(const std::string& job_id, uint64_t after_batch,
                       uint64_t through_batch,
                       std::vector<v1::Event>* out) override;
  absl::Status ReadJobUntil(const std::string& job_id, uint64_t after_batch,
                            uint64_t through_batch, int64_t until_ns,
                            std::vector<v1::Event>* out) override;
  absl::Status ListJobs(const JobVisitor& visit) override;
  absl::Status ScanHeartbeatsAfter(uint64_t after_batch,
                                   const BatchVisitor& visit) override;
  absl::Status ScanFleetUntil(uint64_t after_batch, uint64_t through_batch,
                              int64_t until_ns,
                              const BatchVisitor& visit) override;
  absl::Status DeleteFleetEvents(uint64_t through_batch) override;
  absl::Status ScanJobsForRestore(const RestoreVisitor& visit) override;
  absl::Status ScanAllJobs(const RestoreVisitor& visit) override;
  absl::Status WriteJobStates(
      const std::vector<internal::v1::StoredJobState>& states,
      const std::vector<std::pair<std::string, uint64_t>>& remove) override;
  absl::Status ReadJobStates(const std::string& job_id,
                             std::vector<internal::v1::StoredJobState>* out,
                             int* unreadable) override;
  absl::Status WriteSnapshots(
      const std::vector<JobSnapshot>& snapshots) override;
  absl::Status ReadSnapshots(std::vector<JobSnapshot>* out) override;
  absl::Status ReadHeldSnapshots(std::vector<JobSnapshot>* out) override;
  absl::Status ReadSnapshot(const std::string& job_id,
                            std::optional<JobSnapshot>* out) override;
  absl::Status ReadEvictedSnapshot(const std::string& job_id,
                                   std::optional<JobSnapshot>* out) override;
  absl::Status ReadEvictedEndedBefore(int64_t before_ns,
                                      std::vector<JobSnapshot>* out) override;
  absl::Status EvictJobs(const std::vector<JobSnapshot>& snapshots,
                         const std::optional<std::string>& totals) override;
  absl::Status DeleteJobEvents(
      const std::vector<JobSnapshot>& retired) override;
  absl::Status ImportJobs(const JobImport& import) override;
  absl::Status WriteMeta(const std::string& name,
                         const std::string& value) override;
  absl::Status WriteMetas(
      const std::vector<std::pair<std::string, std::string>>& records) override;
  absl::Status ReadMeta(const std::string& name,
                        std::optional<std::string>* value) override;
  absl::Status ScanMeta(const std::string& prefix,
                        const MetaVisitor& visit) override;
  absl::Status DeleteMeta(const std::vector<std::string>& names) override;
  absl::Status DeadLetters(size_t limit, std::vector<v1::DeadLetter>* out,
                           uint64_t* total) override;

 private:
  enum Family {
    kDefault,
    kBatches,
    kJobEvents,
    kAgents,
    kDeadLetters,
    kSnapshots,
    kJobStates,
    kJobHeads,
    kJobLate,
    kEvicted,
    kCount
  };

  // ScanJobsForRestore's pass over the heads, with the jobs of `evicted`
  // (prefixes, sorted) merged in.
  absl::Status ScanJobs(const std::vector<std::string>& evicted,
                        const RestoreVisitor& visit);
  // Every snapshot of `family` (snapshots or evicted), in job id order.
  absl::Status ReadFamily(Family family, std::vector<JobSnapshot>* out);
  // The snapshot of `job_id` in `family`, or nullopt.
  absl::Status ReadOne(Family family, const std::string& job_id,
                       std::optional<JobSnapshot>* out);
  // The memtable options of `family` (insert hints for the per-job ones).
  static rocksdb::ColumnFamilyOptions FamilyOptions(Family family);
  RocksDbEventStore(rocksdb::DB* db,
                    std::vector<rocksdb::ColumnFamilyHandle*> handles,
                    Options options);
  absl::Status LoadNextBatchId();
  // Puts `agent`'s high-water `sequence` in `wb` (Write).
  void PutAgentSequence(const std::string& agent, uint64_t sequence,
                        rocksdb::WriteBatch* wb);
  // Write's part for the batch's fleet events: puts its fleet_late key in
  // `wb` if one is late, and returns the newest heartbeat time through it.
  // Requires marks_mu_.
  std::optional<int64_t> NoteFleetEvents(const BatchWrite& batch,
                                         const std::string& key,
                                         rocksdb::WriteBatch* wb);
  // Parses batch `id`'s `value` into `*stored` and calls `visit` with its
  // fleet events, if any.
  static absl::Status VisitBatch(uint64_t id, const rocksdb::Slice& value,
                                 internal::v1::StoredBatch* stored,
                                 std::vector<v1::Event>* events,
                                 const BatchVisitor& visit);
  // Visits the batches with a fleet_late key after `after_batch`, through
  // `through_batch`, in order.
  absl::Status VisitLateAfter(uint64_t after_batch, uint64_t through_batch,
                              const BatchVisitor& visit);
  // Adds the deletion of every key of `job_ids` in the per-job families
  // (events, late marks, states, heads) to `wb` and forgets their cached
  // heads and high-water marks.
  void DeleteJobKeys(const std::vector<std::string>& job_ids,
                     rocksdb::WriteBatch* wb);
  // Compares the ack marker in `dir` with the newest stored batch: a store
  // behind its marker lost acknowledged batches (DataLoss, or recorded in
  // lost_batches_/damage_ with accept_loss). Then marks the store's newest.
  absl::Status CheckAcknowledged(const std::string& dir);
  // Layout 2 (storage/KEY_LAYOUT.md): checks it, or migrates a store of
  // layout 1 batch by batch (each batch atomically; an interrupted
  // migration goes on at the next open) and marks the store layout 2.
  absl::Status CheckLayout();
  absl::Status MigrateFromLayout1();
  // Fills job_heads from job_events once (a store written before it
  // existed), then marks it complete.
  absl::Status EnsureJobHeads();
  absl::Status MigrateBatch(const std::string& key,
                            internal::v1::StoredBatch* stored);
  // The cached high-water mark of the job of `prefix` (len + job_id), or
  // null; a cached job has its job_heads key, so that a batch need not
  // write it again. Requires marks_mu_; the slot is valid while it is held.
  int64_t* CachedMark(const std::string& prefix);
  // The job's high_event_ns through its newest stored batch, read from that
  // batch's value (a seek); nullopt when the job has no stored value that
  // says (none, or one written before the field).
  std::optional<int64_t> StoredHigh(const std::string& prefix);
  // After a write (marks_mu_ held since the slots were looked up): sets the
  // cached jobs' new marks and caches the others' (the cache is emptied
  // when it would exceed kMarkCacheJobs; a job it forgot gets its mark read
  // and its head written again, which changes nothing).
  void NoteMarks(const std::vector<std::pair<int64_t*, int64_t>>& updated,
                 std::vector<std::pair<std::string, int64_t>> fresh);

  // Jobs whose job_heads key this process knows exists, with their
  // high-water marks (storage/KEY_LAYOUT.md, "One write per batch"): about
  // 100 bytes each.
  static constexpr size_t kMarkCacheJobs = 1 << 17;

  std::unique_ptr<rocksdb::DB> db_;
  std::vector<rocksdb::ColumnFamilyHandle*> handles_;  // by Family
  Options options_;
  std::atomic<uint64_t> next_batch_id_{1};
  int64_t migrated_batches_ = 0;
  std::unique_ptr<AckMarker> marker_;
  uint64_t lost_batches_ = 0;
  std::string damage_;
  // Held through a whole Write (its looked-up slots stay valid).
  std::mutex marks_mu_;
  std::unordered_map<std::string, int64_t> marks_;  // guarded by marks_mu_
  // The newest stored heartbeat time (guarded by marks_mu_).
  std::optional<int64_t> fleet_high_;
  // Write's WriteBatch, reused (guarded by marks_mu_).
  std::unique_ptr<rocksdb::WriteBatch> write_batch_;
  std::atomic<int64_t> job_values_visited_{0};
};

}  // namespace goodput::storage

#endif  // GOODPUT_STORAGE_ROCKSDB_EVENT_STORE_H_
