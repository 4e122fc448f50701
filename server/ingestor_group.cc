// The Ingestor's ingest path: each batch is fingerprinted, validated and
// serialized for the store on its caller's thread, queued (IngestQueue), and
// stored by whoever holds the ingest lock together with the other batches
// waiting then, in one store write (group commit, docs/delivery.md).
#include <utility>

#include "absl/strings/str_cat.h"
#include "server/ingestor.h"

namespace goodput::server {

absl::StatusOr<v1::Ack> Ingestor::Ingest(const v1::Batch& batch) {
  v1::Batch copy = batch;
  return IngestTaking(&copy);
}

absl::StatusOr<v1::Ack> Ingestor::IngestTaking(v1::Batch* batch) {
  if (batch->agent_id().empty() || batch->sequence() == 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "batch: agent_id and a sequence from 1 are required, got agent_id \"",
        batch->agent_id(), "\" sequence ", batch->sequence()));
  }
  IngestQueue::Pending pending;
  pending.batch = batch;
  Prepare(*batch, &pending);
  queue_.Push(&pending);
  ingest_waiting_.fetch_add(1, std::memory_order_relaxed);
  // Destroyed after the lock is released (declared before it).
  std::vector<std::vector<v1::Event>> spent;
  absl::MutexLock lock(&mu_);
  ingest_waiting_.fetch_sub(1, std::memory_order_relaxed);
  // An earlier holder of the lock may have stored it with its group.
  while (!pending.result) {
    ++ingest_turns_;
    const int64_t now_ns = clock_->NowNanos();
    SetBusySince(now_ns);
    CommitGroup(queue_.Take(kMaxGroupEvents), now_ns, &spent);
    stats_.busy_ns += clock_->NowNanos() - now_ns;
    SetBusySince(std::nullopt);
  }
  return *std::move(pending.result);
}

void Ingestor::Prepare(const v1::Batch& batch,
                       IngestQueue::Pending* pending) const {
  codec::ValidationLimits limits = limits_;
  if (check_event_times_.load(std::memory_order_relaxed)) {
    limits.now_ns = clock_->NowNanos();
  }
  const size_t n = static_cast<size_t>(batch.events_size());
  pending->validity.reserve(n);
  pending->wire_ends.reserve(n);
  size_t bytes = 0;
  for (const v1::Event& e : batch.events()) {
    pending->validity.push_back(codec::ValidateEvent(e, limits));
    bytes += e.ByteSizeLong();  // caches the sizes serialized below
    pending->wire_ends.push_back(static_cast<uint32_t>(bytes));
  }
  pending->wire.resize(bytes);
  uint8_t* p = reinterpret_cast<uint8_t*>(pending->wire.data());
  for (const v1::Event& e : batch.events()) {
    p = e.SerializeWithCachedSizesToArray(p);
  }
  const int last = batch.events_size() - 1;
  if (last >= 0) {
    pending->print = BatchFingerprints::Of(last + 1, Wire(*pending, 0),
                                           Wire(*pending, last));
  }
}

void Ingestor::CommitGroup(const std::vector<IngestQueue::Pending*>& group,
                           int64_t now_ns,
                           std::vector<std::vector<v1::Event>>* spent) {
  storage::BatchWrite write;
  write.received_ns = now_ns;
  size_t events = 0;
  for (const IngestQueue::Pending* p : group) events += p->validity.size();
  write.accepted.reserve(events);
  write.accepted_wire.reserve(events);
  GroupJudge judge;
  std::vector<Member> members;
  for (IngestQueue::Pending* p : group) {
    if (std::optional<absl::StatusOr<v1::Ack>> done = Screen(*p, now_ns)) {
      p->result = *std::move(done);
      continue;
    }
    Member& m = members.emplace_back();
    m.pending = p;
    m.ack.set_sequence(p->batch->sequence());
    Judge(p, &judge, &write, &m);
    if (members.size() == 1) {
      write.agent_id = p->batch->agent_id();
      write.sequence = p->batch->sequence();
    } else {
      write.more_agents.emplace_back(p->batch->agent_id(),
                                     p->batch->sequence());
    }
  }
  if (members.empty()) return;
  absl::StatusOr<uint64_t> batch_id = StoreGroup(write, &members);
  if (!batch_id.ok()) {
    for (Member& m : members) m.pending->result = batch_id.status();
    return;
  }
  for (Member& m : members) Count(m, now_ns);
  live_->ApplyBatch(*batch_id, &write.accepted);
  spent->push_back(std::move(write.accepted));
  last_batch_id_ = *batch_id;
  SaveSnapshots();
  SaveJobStates(/*all=*/false);
  // Best effort: a restart scans more.
  (void)SaveFleetState(write.received_ns, /*force=*/false);
  CheckMaintenance(write.received_ns);
  for (Member& m : members) m.pending->result = std::move(m.ack);
}

std::optional<absl::StatusOr<v1::Ack>> Ingestor::Screen(
    const IngestQueue::Pending& p, int64_t now_ns) {
  const v1::Batch& batch = *p.batch;
  ++stats_.batches;
  SeeAgent(batch.agent_id(), now_ns);
  const uint64_t acked = agent_sequence_[batch.agent_id()];
  if (batch.sequence() <= acked) return Duplicate(batch, p.print);
  if (absl::Status s = CheckJump(batch, acked); !s.ok()) return s;
  return std::nullopt;
}

absl::StatusOr<uint64_t> Ingestor::StoreGroup(const storage::BatchWrite& write,
                                              std::vector<Member>* members) {
  if (fault_hook_) fault_hook_("before_store");
  absl::StatusOr<uint64_t> batch_id = store_->Write(write);
  NoteStoreWrite(batch_id.status());
  if (!batch_id.ok()) {
    stats_.failed_batches += static_cast<int64_t>(members->size());
    return batch_id.status();
  }
  ++stats_.batch_writes;
  for (const Member& m : *members) {
    const v1::Batch& batch = *m.pending->batch;
    agent_sequence_[batch.agent_id()] = batch.sequence();
    fingerprints_.Record(batch.agent_id(), batch.sequence(), m.pending->print);
  }
  if (fault_hook_) fault_hook_("after_store");
  return batch_id;
}

void Ingestor::Count(const Member& m, int64_t now_ns) {
  const v1::Batch& batch = *m.pending->batch;
  if (m.heartbeat) stats_.agent_last_heartbeat_ns[batch.agent_id()] = now_ns;
  stats_.accepted_events += m.ack.accepted();
  stats_.rejected_events += m.ack.rejections_size();
  // The rest were left out (OtherShardsHeartbeat).
  stats_.other_shard_heartbeats += int64_t{batch.events_size()} -
                                   int64_t{m.ack.accepted()} -
                                   m.ack.rejections_size();
}

void Ingestor::Judge(IngestQueue::Pending* p, GroupJudge* judge,
                     storage::BatchWrite* write, Member* m) {
  v1::Batch& batch = *p->batch;
  uint32_t accepted = 0;
  for (int i = 0; i < batch.events_size(); ++i) {
    v1::Event& e = *batch.mutable_events(i);
    if (OtherShardsHeartbeat(e)) continue;
    absl::Status s = std::move(p->validity[static_cast<size_t>(i)]);
    if (!s.ok() && job_limits_ != nullptr) job_limits_->CountInvalidEvent(s);
    bool held = false;
    if (s.ok()) s = live_->Admit(e, &judge->ended_in_batch, &held);
    if (s.ok() && job_limits_ != nullptr) {
      s = job_limits_->AdmitJob(e, held, live_->job_count(), &judge->new_jobs);
    }
    if (s.ok()) {
      m->heartbeat = m->heartbeat || e.has_heartbeat();
      write->accepted.push_back(std::move(e));
      write->accepted_wire.push_back(Wire(*p, i));
      ++accepted;
      continue;
    }
    Reject(batch, i, s, judge->position, write, &m->ack);
  }
  m->ack.set_accepted(accepted);
  judge->position += static_cast<uint32_t>(batch.events_size());
}

absl::string_view Ingestor::Wire(const IngestQueue::Pending& p, int index) {
  const size_t i = static_cast<size_t>(index);
  const uint32_t begin = i == 0 ? 0 : p.wire_ends[i - 1];
  return absl::string_view(p.wire).substr(begin, p.wire_ends[i] - begin);
}

void Ingestor::Reject(const v1::Batch& batch, int index, const absl::Status& s,
                      uint32_t position, storage::BatchWrite* write,
                      v1::Ack* ack) {
  v1::Rejection* r = ack->add_rejections();
  r->set_index(index);
  r->set_reason(std::string(s.message()));
  v1::DeadLetter& dead = write->dead_letters.emplace_back();
  dead.set_agent_id(batch.agent_id());
  dead.set_sequence(batch.sequence());
  dead.set_index(index);
  dead.set_reason(r->reason());
  *dead.mutable_event() = batch.events(index);
  dead.mutable_received()->set_seconds(write->received_ns /
                                       core::kNanosPerSecond);
  write->dead_letter_positions.push_back(position +
                                         static_cast<uint32_t>(index));
}

}  // namespace goodput::server
