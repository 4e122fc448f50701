// PartitionIngestSink: goodputd's PartitionSink in cluster mode. A
// partition's message (or heartbeat message) goes through the Ingestor as
// a batch of the pseudo agent "cluster.p<partition>" whose sequence is the
// message's log sequence. The Ingestor stores a batch's events, its dead
// letters and its agent's high-water mark in one RocksDB write, so the
// partition's last applied sequence is recorded atomically with its events, and
// a message applied again (after a crash, or a reader reopened behind it) is a
// duplicate that stores nothing. Borrows the Ingestor, which must outlive
// it. Thread-safe (the Ingestor serializes).
#ifndef GOODPUT_SERVER_PARTITION_INGEST_SINK_H_
#define GOODPUT_SERVER_PARTITION_INGEST_SINK_H_

#include <atomic>
#include <cstdint>
#include <string>

#include "cluster/partition_sink.h"
#include "server/ingestor.h"

namespace goodput::server {

// The pseudo agent id under which partition `partition`'s messages are
// ingested: "cluster.p<partition>", and "cluster.hb" for the heartbeats.
std::string PartitionAgentId(int32_t partition);

class PartitionIngestSink : public cluster::PartitionSink {
 public:
  explicit PartitionIngestSink(Ingestor* ingestor) : ingestor_(ingestor) {}

  absl::StatusOr<uint64_t> LastApplied(int32_t partition) override;
  absl::Status Apply(int32_t partition, uint64_t sequence,
                     const v1::Batch& batch) override;

  // Events of applied messages that the Ingestor refused (validation or
  // admission: kept as dead letters; no agent is waiting for the answer).
  int64_t rejected_events() const { return rejected_events_.load(); }

 private:
  Ingestor* const ingestor_;
  std::atomic<int64_t> rejected_events_{0};
};

}  // namespace goodput::server

#endif  // GOODPUT_SERVER_PARTITION_INGEST_SINK_H_
