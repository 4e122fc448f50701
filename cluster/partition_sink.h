// PartitionSink: where a cluster member's partitions' batches go (goodputd's
// ingest in production; a recording map in tests). The sink keeps, per
// partition, the log sequence of the last batch it applied, written in the
// same atomic write as that batch's events, so a member that restarts or
// takes a partition over goes on from exactly there: every message applied
// once. Implementations are thread-safe.
#ifndef GOODPUT_CLUSTER_PARTITION_SINK_H_
#define GOODPUT_CLUSTER_PARTITION_SINK_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "proto/service.pb.h"

namespace goodput::cluster {

// The pseudo partition of events without a job_id (host heartbeats): every
// member applies all of them, whatever partitions it holds.
inline constexpr int32_t kHeartbeatPartition = -1;

// A partition's state for a snapshot (cluster/partition_snapshots.h): the
// sink's encoding of the partition's jobs (opaque to the cluster code) and
// the last applied sequence it covers.
struct PartitionState {
  uint64_t sequence = 0;
  std::string body;
};

// One message of a partition's subject, parsed.
struct SequencedBatch {
  uint64_t sequence = 0;  // in the whole log
  v1::Batch batch;
};

class PartitionSink {
 public:
  virtual ~PartitionSink() = default;
  // The sequence of the last message applied for `partition` (or
  // kHeartbeatPartition); 0 if none.
  virtual absl::StatusOr<uint64_t> LastApplied(int32_t partition) = 0;
  // Applies `batch` (message `sequence` of `partition`'s subject) and
  // records `sequence` as the partition's last applied, atomically.
  virtual absl::Status Apply(int32_t partition, uint64_t sequence,
                             const v1::Batch& batch) = 0;
  // Applies `messages`, consecutive messages of `partition`'s subject in log
  // order, with the effect of one Apply each: a message at or below the
  // partition's last applied stores nothing, and the last one's sequence is
  // recorded. An implementation may store several in one atomic write (with
  // the last of them as the last applied) and may move their events out.
  // This default calls Apply for each.
  virtual absl::Status ApplyAll(int32_t partition,
                                std::vector<SequencedBatch>* messages) {
    for (const SequencedBatch& m : *messages) {
      if (absl::Status s = Apply(partition, m.sequence, m.batch); !s.ok()) {
        return s;
      }
    }
    return absl::OkStatus();
  }

  // The state of `partition` now (every message through its last applied
  // sequence, and nothing after it). The default: Unimplemented (no
  // snapshots).
  virtual absl::StatusOr<PartitionState> ExportPartition(int32_t partition) {
    (void)partition;
    return absl::UnimplementedError("this sink takes no snapshots");
  }
  // Replaces what the sink holds of `partition` by `state` (from
  // ExportPartition, possibly of another member) in one atomic write,
  // `state.sequence` becoming the partition's last applied. The default:
  // Unimplemented.
  virtual absl::Status ImportPartition(int32_t partition,
                                       const PartitionState& state) {
    (void)partition;
    (void)state;
    return absl::UnimplementedError("this sink takes no snapshots");
  }
};

}  // namespace goodput::cluster

#endif  // GOODPUT_CLUSTER_PARTITION_SINK_H_
