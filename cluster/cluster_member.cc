#include "cluster/cluster_member.h"

#include "absl/strings/str_cat.h"

namespace goodput::cluster {

absl::Status ClusterMember::TickLeases() {
  LeaseChanges changes = leases_->Tick();
  for (int32_t p : changes.released) readers_.erase(p);
  absl::Status status = changes.status;
  for (int32_t p : changes.acquired) {
    absl::Status s = Open(p);
    if (status.ok() && !s.ok()) status = s;
  }
  return status;
}

absl::StatusOr<int64_t> ClusterMember::Pump(int max_per_partition,
                                            int64_t timeout_ms) {
  absl::StatusOr<int64_t> heartbeats =
      PumpHeartbeats(max_per_partition, timeout_ms);
  if (!heartbeats.ok()) return heartbeats.status();
  int64_t applied = *heartbeats;
  for (int32_t p : leases_->Held()) {
    if (readers_.count(p) == 0) {
      if (absl::Status s = Open(p); !s.ok()) return s;  // e.g. after an error
    }
  }
  for (auto it = readers_.begin(); it != readers_.end();) {
    if (!leases_->Holds(it->first)) {  // lapsed: stop before anyone else
      it = readers_.erase(it);
      continue;
    }
    absl::StatusOr<int64_t> n =
        PumpOne(it->first, it->second.get(), max_per_partition, timeout_ms);
    if (!n.ok()) {
      it = readers_.erase(it);  // reopened from the last applied next time
      continue;
    }
    applied += *n;
    ++it;
  }
  return applied;
}

std::vector<int32_t> ClusterMember::Applying() const {
  std::vector<int32_t> out;
  for (const auto& [p, reader] : readers_) out.push_back(p);
  return out;
}

absl::StatusOr<std::unique_ptr<LogReader>> ClusterMember::ReaderFor(
    int32_t partition) {
  absl::StatusOr<uint64_t> last = sink_->LastApplied(partition);
  if (!last.ok()) return last.status();
  return log_->Read(partition == kHeartbeatPartition
                        ? subjects_->HeartbeatSubject()
                        : subjects_->PartitionSubject(partition),
                    *last + 1);
}

absl::Status ClusterMember::Open(int32_t partition) {
  absl::StatusOr<std::unique_ptr<LogReader>> reader = ReaderFor(partition);
  if (!reader.ok()) return reader.status();
  readers_[partition] = *std::move(reader);
  return absl::OkStatus();
}

absl::StatusOr<int64_t> ClusterMember::PumpHeartbeats(int max,
                                                      int64_t timeout_ms) {
  if (heartbeats_ == nullptr) {
    absl::StatusOr<std::unique_ptr<LogReader>> reader =
        ReaderFor(kHeartbeatPartition);
    if (!reader.ok()) return reader.status();
    heartbeats_ = *std::move(reader);
  }
  absl::StatusOr<int64_t> n =
      PumpOne(kHeartbeatPartition, heartbeats_.get(), max, timeout_ms);
  if (!n.ok()) heartbeats_.reset();  // reopened from the last applied
  return n;
}

absl::StatusOr<int64_t> ClusterMember::PumpOne(int32_t partition,
                                               LogReader* reader, int max,
                                               int64_t timeout_ms) {
  absl::StatusOr<std::vector<LogMessage>> messages =
      reader->Next(max, timeout_ms);
  if (!messages.ok()) return messages.status();
  int64_t applied = 0;
  for (const LogMessage& m : *messages) {
    v1::Batch batch;
    if (!batch.ParseFromString(m.data)) {
      ++unparsable_;
      batch.Clear();  // recorded as applied with no events: skipped once
    }
    absl::Status s = sink_->Apply(partition, m.sequence, batch);
    if (!s.ok()) return s;
    ++applied;
  }
  return applied;
}

}  // namespace goodput::cluster
