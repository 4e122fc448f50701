#include "cluster/partition_snapshots.h"

#include <vector>

#include "absl/strings/str_cat.h"

namespace goodput::cluster {

std::string PartitionSnapshots::Subject(int32_t partition) const {
  return absl::StrCat(options_.subject_prefix, partition);
}

absl::Status PartitionSnapshots::Publish(SnapshotHeader header,
                                         absl::string_view body) {
  const std::vector<std::string> chunks =
      EncodeSnapshot(header, body, options_.max_chunk_data);
  if (chunks.size() > options_.max_chunks) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "snapshot of partition ", header.partition, " is ", body.size(),
        " bytes: ", chunks.size(), " chunks, above the ", options_.max_chunks,
        " a subject keeps"));
  }
  const std::string subject = Subject(header.partition);
  for (size_t i = 0; i < chunks.size(); ++i) {
    absl::StatusOr<PublishAck> ack =
        log_->Publish(subject, absl::StrCat(header.id, "/", i), chunks[i]);
    if (!ack.ok()) return ack.status();
  }
  return absl::OkStatus();
}

absl::StatusOr<SnapshotRead> PartitionSnapshots::Newest(int32_t partition) {
  absl::StatusOr<std::unique_ptr<LogReader>> reader =
      log_->Read(Subject(partition), 1);
  if (!reader.ok()) return reader.status();
  SnapshotAssembler assembler;
  SnapshotRead out;
  for (;;) {
    absl::StatusOr<std::vector<LogMessage>> messages =
        (*reader)->Next(options_.max_chunks, /*timeout_ms=*/1);
    if (!messages.ok()) return messages.status();
    if (messages->empty()) break;
    out.messages += static_cast<int64_t>(messages->size());
    for (const LogMessage& m : *messages) assembler.Add(m.data);
  }
  out.newest = assembler.Newest();
  out.incomplete = assembler.incomplete();
  return out;
}

}  // namespace goodput::cluster
