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

absl::StatusOr<int64_t> ClusterMember::Pump(
    int max_per_partition, int64_t timeout_ms,
    const std::function<bool()>& out_of_time) {
  absl::StatusOr<int64_t> heartbeats =
      PumpHeartbeats(max_per_partition, timeout_ms);
  if (!heartbeats.ok()) return heartbeats.status();
  int64_t applied = *heartbeats;
  for (int32_t p : leases_->Held()) {
    if (readers_.count(p) == 0) {
      if (absl::Status s = Open(p); !s.ok()) return s;  // e.g. after an error
    }
  }
  const std::vector<int32_t> order = PumpOrder();
  for (size_t i = 0; i < order.size(); ++i) {
    if (i > 0 && out_of_time && out_of_time()) {
      next_partition_ = order[i];
      break;
    }
    applied += PumpPartition(order[i], max_per_partition, timeout_ms);
  }
  return applied;
}

std::vector<int32_t> ClusterMember::PumpOrder() const {
  std::vector<int32_t> order;
  const auto from = readers_.lower_bound(next_partition_);
  for (auto it = from; it != readers_.end(); ++it) order.push_back(it->first);
  for (auto it = readers_.begin(); it != from; ++it) order.push_back(it->first);
  return order;
}

int64_t ClusterMember::PumpPartition(int32_t partition, int max,
                                     int64_t timeout_ms) {
  auto it = readers_.find(partition);
  if (!leases_->Holds(partition)) {  // lapsed: stop before anyone else
    readers_.erase(it);
    return 0;
  }
  absl::StatusOr<int64_t> n =
      PumpOne(partition, it->second.get(), max, timeout_ms);
  if (!n.ok()) {
    readers_.erase(it);  // reopened from the last applied next time
    return 0;
  }
  return *n;
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
  if (messages->empty()) return 0;
  std::vector<SequencedBatch> run(messages->size());
  for (size_t i = 0; i < run.size(); ++i) {
    run[i].sequence = (*messages)[i].sequence;
    if (!run[i].batch.ParseFromString((*messages)[i].data)) {
      ++unparsable_;
      run[i].batch.Clear();  // recorded as applied with no events: skipped
    }
  }
  if (absl::Status s = sink_->ApplyAll(partition, &run); !s.ok()) return s;
  return static_cast<int64_t>(run.size());
}

}  // namespace goodput::cluster
