// PartitionSnapshots: publishes and reads partition snapshots (cluster
// mode's "newest snapshot + tail" takeover; docs/scaling.md) on an EventLog
// of their own (the JetStream stream GOODPUT_SNAPSHOTS in production,
// cluster/nats_event_log.h; FakeEventLog in tests), one subject per
// partition, `subject_prefix` + partition. A snapshot's body is published
// as chunks (cluster/snapshot_codec.h) in index order, each under the
// message id "<snapshot id>/<index>", so a resend is stored once; a
// snapshot is usable only once its last chunk (the commit marker) is
// stored. Borrows the log, which must outlive it. Thread-safe as the log
// is (no state of its own beyond the options).
#ifndef GOODPUT_CLUSTER_PARTITION_SNAPSHOTS_H_
#define GOODPUT_CLUSTER_PARTITION_SNAPSHOTS_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "cluster/event_log.h"
#include "cluster/snapshot_codec.h"

namespace goodput::cluster {

struct SnapshotLogOptions {
  std::string subject_prefix = "goodput.snap.";
  // Bytes of body per chunk: below NATS' max_payload (1 MiB) with room for
  // the chunk's header and the message's headers.
  size_t max_chunk_data = 960 * 1024;
  // Refuse a snapshot of more chunks than this (the stream keeps
  // 2 * max_chunks per subject, so the newest and the one before it fit).
  uint32_t max_chunks = 256;
};

// What a read of a partition's snapshots found.
struct SnapshotRead {
  std::optional<Snapshot> newest;  // the newest complete one
  int64_t messages = 0;            // chunks read
  int64_t incomplete = 0;          // snapshots skipped: torn or partial
};

class PartitionSnapshots {
 public:
  PartitionSnapshots(EventLog* log, SnapshotLogOptions options = {})
      : log_(log), options_(std::move(options)) {}

  std::string Subject(int32_t partition) const;
  // Publishes `body` as snapshot `header.id` (the header's partition and
  // sequence set by the caller; size, hash and count here); returns once
  // the log stored every chunk. ResourceExhausted for a body above
  // max_chunks chunks; the log's error otherwise (the snapshot stays
  // unusable: its marker is not stored).
  absl::Status Publish(SnapshotHeader header, absl::string_view body);
  // Reads every chunk the log keeps for `partition` and returns the newest
  // complete snapshot among them.
  absl::StatusOr<SnapshotRead> Newest(int32_t partition);

 private:
  EventLog* const log_;
  const SnapshotLogOptions options_;
};

}  // namespace goodput::cluster

#endif  // GOODPUT_CLUSTER_PARTITION_SNAPSHOTS_H_
