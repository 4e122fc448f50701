#ifndef GOODPUT_STORAGE_EVENT_STORE_H_
#define GOODPUT_STORAGE_EVENT_STORE_H_

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "google/protobuf/arena.h"
#include "proto/event.pb.h"
#include "proto/service.pb.h"
#include "storage/job_snapshot.h"

namespace goodput::storage {

// Everything one acknowledged ingest batch writes, atomically.
struct BatchWrite {
  std::string agent_id;
  uint64_t sequence = 0;
  int64_t received_ns = 0;
  std::vector<v1::Event> accepted;  // in batch order
  std::vector<v1::DeadLetter> dead_letters;
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

  // The stored events of `job_id` in batches up to and including
  // `through_batch`, in storage order.
  virtual absl::Status ReadJob(const std::string& job_id,
                               uint64_t through_batch,
                               std::vector<v1::Event>* out) = 0;

  // Calls `visit` with every stored batch (id and accepted events) in id
  // order; stops at the first error `visit` returns and returns it. The
  // events are the visitor's to move from.
  using BatchVisitor = std::function<absl::Status(
      uint64_t batch_id, std::vector<v1::Event>* events)>;
  virtual absl::Status ScanBatches(const BatchVisitor& visit) = 0;

  // ScanBatches for restart recovery, without a heap object per event:
  // parses batch `batch_id` on `arena_for(batch_id)` and hands `visit` its
  // (not deleted) events, which live as long as that arena.
  using ArenaFor = std::function<google::protobuf::Arena*(uint64_t batch_id)>;
  using ArenaBatchVisitor = std::function<absl::Status(
      uint64_t batch_id, const std::vector<const v1::Event*>& events)>;
  virtual absl::Status ScanBatchesOnArena(const ArenaFor& arena_for,
                                          const ArenaBatchVisitor& visit) = 0;

  // Stores `snapshots`, each replacing its job's earlier one, in one
  // atomic write.
  virtual absl::Status WriteSnapshots(
      const std::vector<JobSnapshot>& snapshots) = 0;

  // Every stored snapshot, in job id order.
  virtual absl::Status ReadSnapshots(std::vector<JobSnapshot>* out) = 0;

  // The stored snapshot of `job_id` in `*out`, or nullopt if it has none.
  virtual absl::Status ReadSnapshot(const std::string& job_id,
                                    std::optional<JobSnapshot>* out) = 0;

  // Retention: deletes the stored events of `job_ids` and their index.
  // Other events keep their place (ReadJob and ScanBatches skip the
  // deleted ones); a batch left with no event is removed unless it is the
  // newest. Dead letters and agent sequences stay.
  virtual absl::Status DeleteJobEvents(
      const std::vector<std::string>& job_ids) = 0;

  // Up to `limit` dead letters, oldest first, and how many there are.
  virtual absl::Status DeadLetters(size_t limit,
                                   std::vector<v1::DeadLetter>* out,
                                   uint64_t* total) = 0;
};

}  // namespace goodput::storage

#endif  // GOODPUT_STORAGE_EVENT_STORE_H_
