#include "cluster/cluster_member.h"

#include "absl/strings/str_cat.h"

namespace goodput::cluster {

absl::Status ClusterMember::TickLeases() {
  LeaseChanges changes = leases_->Tick();
  for (int32_t p : changes.released) {
    readers_.erase(p);
    due_.erase(p);
  }
  absl::Status status = changes.status;
  // With snapshots, the next Pump opens them: an import may take a while,
  // and a pump stops in time for the next round (the leases' renewal).
  if (snapshots_ != nullptr) return status;
  for (int32_t p : changes.acquired) {
    absl::Status s = Open(p);
    if (status.ok() && !s.ok()) status = s;
  }
  return status;
}

absl::Status ClusterMember::OpenHeld(const std::function<bool()>& out_of_time) {
  bool opened = false;
  for (int32_t p : leases_->Held()) {
    if (readers_.count(p) > 0) continue;
    if (opened && out_of_time && out_of_time()) break;  // the rest next time
    if (absl::Status s = Open(p); !s.ok()) return s;    // e.g. after an error
    opened = true;
  }
  return absl::OkStatus();
}

absl::StatusOr<int64_t> ClusterMember::Pump(
    int max_per_partition, int64_t timeout_ms,
    const std::function<bool()>& out_of_time) {
  absl::StatusOr<int64_t> heartbeats =
      PumpHeartbeats(max_per_partition, timeout_ms);
  if (!heartbeats.ok()) return heartbeats.status();
  int64_t applied = *heartbeats;
  if (absl::Status s = OpenHeld(out_of_time); !s.ok()) return s;
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
    due_.erase(partition);
    return 0;
  }
  int64_t events = 0;
  absl::StatusOr<int64_t> n =
      PumpOne(partition, it->second.get(), max, timeout_ms, &events);
  if (!n.ok()) {
    readers_.erase(it);  // reopened from the last applied next time
    return 0;
  }
  MaybePublish(partition, events);
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
  ImportNewest(partition);
  absl::StatusOr<std::unique_ptr<LogReader>> reader = ReaderFor(partition);
  if (!reader.ok()) return reader.status();
  readers_[partition] = *std::move(reader);
  if (clock_ != nullptr) due_[partition] = SnapshotDue{0, clock_->NowNanos()};
  return absl::OkStatus();
}

void ClusterMember::EnableSnapshots(PartitionSnapshots* snapshots, Clock* clock,
                                    SnapshotPolicy policy) {
  snapshots_ = snapshots;
  clock_ = clock;
  policy_ = std::move(policy);
}

void ClusterMember::ImportNewest(int32_t partition) {
  if (snapshots_ == nullptr) return;
  absl::StatusOr<uint64_t> last = sink_->LastApplied(partition);
  absl::StatusOr<SnapshotRead> read =
      last.ok() ? snapshots_->Newest(partition)
                : absl::StatusOr<SnapshotRead>(last.status());
  if (!read.ok()) {
    ++snapshot_stats_.import_errors;  // read from the log instead
    return;
  }
  snapshot_stats_.chunks_read += read->messages;
  snapshot_stats_.skipped_incomplete += read->incomplete;
  if (!read->newest || read->newest->header.partition != partition ||
      read->newest->header.sequence <= *last) {
    return;  // none, or not ahead of what this instance applied
  }
  const PartitionState state{read->newest->header.sequence,
                             std::move(read->newest->body)};
  if (sink_->ImportPartition(partition, state).ok()) {
    ++snapshot_stats_.imported;
  } else {
    ++snapshot_stats_.import_errors;
  }
}

void ClusterMember::MaybePublish(int32_t partition, int64_t events) {
  auto it = due_.find(partition);
  if (snapshots_ == nullptr || it == due_.end()) return;
  it->second.events += events;
  const int64_t now = clock_->NowNanos();
  const bool due =
      it->second.events >= policy_.every_events ||
      (it->second.events > 0 && now - it->second.since_ns >= policy_.every_ns);
  if (!due) return;
  it->second = SnapshotDue{0, now};  // a failure waits for the next turn
  Publish(partition);
}

void ClusterMember::Publish(int32_t partition) {
  absl::StatusOr<PartitionState> state = sink_->ExportPartition(partition);
  absl::Status s = state.status();
  if (s.ok()) {
    SnapshotHeader header;
    header.partition = partition;
    header.sequence = state->sequence;
    header.id = absl::StrCat(policy_.self, "-", partition, "-", state->sequence,
                             "-", clock_->NowNanos());
    s = snapshots_->Publish(std::move(header), state->body);
  }
  ++(s.ok() ? snapshot_stats_.published : snapshot_stats_.publish_errors);
}

absl::StatusOr<int64_t> ClusterMember::PumpHeartbeats(int max,
                                                      int64_t timeout_ms) {
  if (heartbeats_ == nullptr) {
    absl::StatusOr<std::unique_ptr<LogReader>> reader =
        ReaderFor(kHeartbeatPartition);
    if (!reader.ok()) return reader.status();
    heartbeats_ = *std::move(reader);
  }
  int64_t events = 0;
  absl::StatusOr<int64_t> n =
      PumpOne(kHeartbeatPartition, heartbeats_.get(), max, timeout_ms, &events);
  if (!n.ok()) heartbeats_.reset();  // reopened from the last applied
  return n;
}

absl::StatusOr<int64_t> ClusterMember::PumpOne(int32_t partition,
                                               LogReader* reader, int max,
                                               int64_t timeout_ms,
                                               int64_t* events) {
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
    *events += run[i].batch.events_size();
  }
  if (absl::Status s = sink_->ApplyAll(partition, &run); !s.ok()) return s;
  return static_cast<int64_t>(run.size());
}

}  // namespace goodput::cluster
