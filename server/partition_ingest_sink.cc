#include "server/partition_ingest_sink.h"

#include <iterator>
#include <utility>

#include "absl/strings/str_cat.h"
#include "cluster/partition_assigner.h"
#include "proto/storage.pb.h"

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
  std::vector<cluster::SequencedBatch> one(1);
  one[0].sequence = sequence;
  *one[0].batch.mutable_events() = batch.events();
  return ApplyAll(partition, &one);
}

absl::Status PartitionIngestSink::ApplyAll(
    int32_t partition, std::vector<cluster::SequencedBatch>* messages) {
  const std::string agent = PartitionAgentId(partition);
  const uint64_t applied = ingestor_->AckedSequence(agent);
  v1::Batch merged;
  for (cluster::SequencedBatch& m : *messages) {
    if (m.sequence <= applied) continue;  // stored before: once only
    if (merged.sequence() != 0 &&
        merged.events_size() + m.batch.events_size() > kMaxEventsPerWrite) {
      if (absl::Status s = Ingest(partition, &merged); !s.ok()) return s;
      merged.Clear();
    }
    merged.set_sequence(m.sequence);
    for (v1::Event& e : *m.batch.mutable_events()) {
      merged.mutable_events()->Add(std::move(e));
    }
  }
  if (merged.sequence() == 0) return absl::OkStatus();
  return Ingest(partition, &merged);
}

absl::Status PartitionIngestSink::Ingest(int32_t partition, v1::Batch* batch) {
  batch->set_agent_id(PartitionAgentId(partition));
  absl::StatusOr<v1::Ack> ack = ingestor_->IngestTaking(batch);
  if (!ack.ok()) {
    return absl::Status(
        ack.status().code(),
        absl::StrCat("partition ", partition, " message ", batch->sequence(),
                     ": ", ack.status().message()));
  }
  rejected_events_ += ack->rejections_size();
  return absl::OkStatus();
}

absl::StatusOr<cluster::PartitionState> PartitionIngestSink::ExportPartition(
    int32_t partition) {
  if (partitions_ <= 0) return PartitionSink::ExportPartition(partition);
  absl::StatusOr<storage::JobImport> jobs = ingestor_->ExportJobs(
      PartitionAgentId(partition), [&](const std::string& job_id) {
        return cluster::PartitionOfJob(job_id, partitions_) == partition;
      });
  if (!jobs.ok()) return jobs.status();
  internal::v1::PartitionSnapshot body;
  body.set_partition(partition);
  for (internal::v1::StoredJobState& s : jobs->states) {
    *body.add_states() = std::move(s);
  }
  for (const storage::JobSnapshot& f : jobs->finals) {
    *body.add_finals() = storage::ToRecord(f);
  }
  return cluster::PartitionState{jobs->sequence, body.SerializeAsString()};
}

absl::Status PartitionIngestSink::ImportPartition(
    int32_t partition, const cluster::PartitionState& state) {
  internal::v1::PartitionSnapshot body;
  if (!body.ParseFromString(state.body) || body.partition() != partition) {
    return absl::DataLossError(absl::StrCat("snapshot of partition ", partition,
                                            " through ", state.sequence,
                                            ": does not parse as one"));
  }
  storage::JobImport import;
  import.agent_id = PartitionAgentId(partition);
  import.sequence = state.sequence;
  import.states.assign(std::make_move_iterator(body.mutable_states()->begin()),
                       std::make_move_iterator(body.mutable_states()->end()));
  for (const internal::v1::JobSnapshot& f : body.finals()) {
    if (absl::Status s = storage::FromRecord(f, &import.finals.emplace_back());
        !s.ok()) {
      return s;
    }
  }
  return ingestor_->ImportJobs(std::move(import));
}

}  // namespace goodput::server
