#ifndef GOODPUT_STORAGE_ROCKSDB_EVENT_STORE_H_
#define GOODPUT_STORAGE_ROCKSDB_EVENT_STORE_H_

#include <atomic>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "proto/storage.pb.h"
#include "storage/event_store.h"

namespace rocksdb {
class DB;
class ColumnFamilyHandle;
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
    bool fsync = false;  // sync the WAL on every batch write
  };

  // Opens (creating if missing) the store in `dir`.
  static absl::StatusOr<std::unique_ptr<RocksDbEventStore>> Open(
      const std::string& dir, Options options);
  ~RocksDbEventStore() override;

  absl::StatusOr<uint64_t> Write(const BatchWrite& batch) override;
  absl::StatusOr<std::map<std::string, uint64_t>> AgentSequences() override;
  absl::Status ReadJob(const std::string& job_id, uint64_t through_batch,
                       std::vector<v1::Event>* out) override;
  absl::Status ScanBatches(const BatchVisitor& visit) override;
  absl::Status ScanBatchesOnArena(const ArenaFor& arena_for,
                                  const ArenaBatchVisitor& visit) override;
  absl::Status WriteSnapshots(
      const std::vector<JobSnapshot>& snapshots) override;
  absl::Status ReadSnapshots(std::vector<JobSnapshot>* out) override;
  absl::Status ReadSnapshot(const std::string& job_id,
                            std::optional<JobSnapshot>* out) override;
  absl::Status DeleteJobEvents(
      const std::vector<std::string>& job_ids) override;
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
    kCount
  };

  RocksDbEventStore(rocksdb::DB* db,
                    std::vector<rocksdb::ColumnFamilyHandle*> handles,
                    Options options);
  absl::Status LoadNextBatchId();
  absl::Status ReadBatch(uint64_t batch_id, std::vector<v1::Event>* out);
  absl::Status ParseBatch(uint64_t batch_id, const std::string& key,
                          internal::v1::StoredBatch* stored);
  // Adds to `by_batch` the indices of `job_id`'s events per batch, and to
  // `wb` the deletion of its index keys.
  absl::Status CollectJobIndex(
      const std::string& job_id,
      std::map<uint64_t, std::vector<uint32_t>>* by_batch,
      rocksdb::WriteBatch* wb);
  // Adds to `wb` the rewrite of batch `id` with its events at `indices`
  // cleared, or its deletion when none is left and it is not the newest.
  absl::Status ClearEvents(uint64_t id, const std::vector<uint32_t>& indices,
                           rocksdb::WriteBatch* wb);

  std::unique_ptr<rocksdb::DB> db_;
  std::vector<rocksdb::ColumnFamilyHandle*> handles_;  // by Family
  Options options_;
  std::atomic<uint64_t> next_batch_id_{1};
};

}  // namespace goodput::storage

#endif  // GOODPUT_STORAGE_ROCKSDB_EVENT_STORE_H_
