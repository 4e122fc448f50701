// PartitionIngestSink: goodputd's PartitionSink in cluster mode. A
// partition's message (or heartbeat message) goes through the Ingestor as
// a batch of the pseudo agent "cluster.p<partition>" whose sequence is the
// message's log sequence. The Ingestor stores a batch's events, its dead
// letters and its agent's high-water mark in one RocksDB write, so the
// partition's last applied sequence is recorded atomically with its events, and
// a message applied again (after a crash, or a reader reopened behind it)
// stores nothing. ApplyAll (and Apply, a run of one) merges a run of a
// partition's messages into batches of up to kMaxEventsPerWrite events, each
// one Ingestor write under its last message's sequence (a new owner's catch-up
// writes once per run, not once per message); messages at or below the
// partition's last applied sequence are left out first.
// ExportPartition and ImportPartition carry a partition's jobs in a
// snapshot (proto PartitionSnapshot: state records and final snapshots,
// LiveState::ExportJobs) for the partitions of `partitions` (P). Borrows the
// Ingestor, which must outlive it. Thread-safe (the Ingestor serializes;
// one thread applies a partition).
#ifndef GOODPUT_SERVER_PARTITION_INGEST_SINK_H_
#define GOODPUT_SERVER_PARTITION_INGEST_SINK_H_

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "cluster/partition_sink.h"
#include "server/ingestor.h"

namespace goodput::server {

// The pseudo agent id under which partition `partition`'s messages are
// ingested: "cluster.p<partition>", and "cluster.hb" for the heartbeats.
std::string PartitionAgentId(int32_t partition);

class PartitionIngestSink : public cluster::PartitionSink {
 public:
  // `partitions`: P, which ExportPartition needs to tell a partition's jobs
  // (0: snapshots unsupported).
  explicit PartitionIngestSink(Ingestor* ingestor, int32_t partitions = 0)
      : ingestor_(ingestor), partitions_(partitions) {}

  absl::StatusOr<uint64_t> LastApplied(int32_t partition) override;
  // Bounds one merged write of ApplyAll (a single larger message is
  // written alone).
  static constexpr int kMaxEventsPerWrite = 8192;

  absl::Status Apply(int32_t partition, uint64_t sequence,
                     const v1::Batch& batch) override;
  absl::Status ApplyAll(
      int32_t partition,
      std::vector<cluster::SequencedBatch>* messages) override;
  absl::StatusOr<cluster::PartitionState> ExportPartition(
      int32_t partition) override;
  absl::Status ImportPartition(int32_t partition,
                               const cluster::PartitionState& state) override;

  // Events of applied messages that the Ingestor refused (validation or
  // admission: kept as dead letters; no agent is waiting for the answer).
  int64_t rejected_events() const { return rejected_events_.load(); }

 private:
  // Ingests `batch` (agent and sequence set) and counts its refusals.
  absl::Status Ingest(int32_t partition, v1::Batch* batch);

  Ingestor* const ingestor_;
  const int32_t partitions_;
  std::atomic<int64_t> rejected_events_{0};
};

}  // namespace goodput::server

#endif  // GOODPUT_SERVER_PARTITION_INGEST_SINK_H_
