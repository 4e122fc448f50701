#include "server/partition_ingest_sink.h"

#include "absl/strings/str_cat.h"

namespace goodput::server {

std::string PartitionAgentId(int32_t partition) {
  if (partition == cluster::kHeartbeatPartition) return "cluster.hb";
  return absl::StrCat("cluster.p", partition);
}

absl::StatusOr<uint64_t> PartitionIngestSink::LastApplied(int32_t partition) {
  return ingestor_->AckedSequence(PartitionAgentId(partition));
}

absl::Status PartitionIngestSink::Apply(int32_t partition, uint64_t sequence,
                                        const v1::Batch& batch) {
  v1::Batch as_partition;
  as_partition.set_agent_id(PartitionAgentId(partition));
  as_partition.set_sequence(sequence);
  *as_partition.mutable_events() = batch.events();
  absl::StatusOr<v1::Ack> ack = ingestor_->IngestTaking(&as_partition);
  if (!ack.ok()) {
    return absl::Status(ack.status().code(),
                        absl::StrCat("partition ", partition, " message ",
                                     sequence, ": ", ack.status().message()));
  }
  rejected_events_ += ack->rejections_size();
  return absl::OkStatus();
}

}  // namespace goodput::server
