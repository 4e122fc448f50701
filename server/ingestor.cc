#include "server/ingestor.h"

#include <unordered_map>

#include "absl/strings/str_cat.h"
#include "core/event_order.h"
#include "core/replay_events.h"

namespace goodput::server {

Ingestor::Ingestor(storage::EventStore* store, LiveState* live, Clock* clock,
                   codec::ValidationLimits limits)
    : store_(store), clock_(clock), live_(live), limits_(limits) {}

absl::Status Ingestor::Recover() {
  absl::MutexLock lock(&mu_);
  auto sequences = store_->AgentSequences();
  if (!sequences.ok()) return sequences.status();
  agent_sequence_ = *std::move(sequences);
  // Recovery is the live path, batch by batch, over what was stored.
  return store_->ScanBatches(
      [this](uint64_t batch_id, const std::vector<v1::Event>& events) {
        mu_.AssertHeld();
        live_->ApplyBatch(batch_id, events);
        return absl::OkStatus();
      });
}

absl::StatusOr<v1::Ack> Ingestor::Ingest(const v1::Batch& batch) {
  if (batch.agent_id().empty() || batch.sequence() == 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "batch: agent_id and a sequence from 1 are required, got agent_id \"",
        batch.agent_id(), "\" sequence ", batch.sequence()));
  }
  absl::MutexLock lock(&mu_);
  ++stats_.batches;
  stats_.agent_last_seen_ns[batch.agent_id()] = clock_->NowNanos();
  v1::Ack ack;
  ack.set_sequence(batch.sequence());
  uint64_t& acked = agent_sequence_[batch.agent_id()];
  if (batch.sequence() <= acked) {
    ++stats_.duplicate_batches;
    ack.set_duplicate(true);
    return ack;
  }
  storage::BatchWrite write;
  Judge(batch, &write, &ack);
  if (fault_hook_) fault_hook_("before_store");
  auto batch_id = store_->Write(write);
  if (!batch_id.ok()) {
    ++stats_.failed_batches;
    return batch_id.status();
  }
  acked = batch.sequence();
  if (fault_hook_) fault_hook_("after_store");
  live_->ApplyBatch(*batch_id, write.accepted);
  stats_.accepted_events += ack.accepted();
  stats_.rejected_events += ack.rejections_size();
  return ack;
}

void Ingestor::Judge(const v1::Batch& batch, storage::BatchWrite* write,
                     v1::Ack* ack) {
  write->agent_id = batch.agent_id();
  write->sequence = batch.sequence();
  write->received_ns = clock_->NowNanos();
  limits_.now_ns = write->received_ns;
  std::unordered_map<std::string, int64_t> ended_in_batch;
  for (int i = 0; i < batch.events_size(); ++i) {
    const v1::Event& e = batch.events(i);
    absl::Status s = codec::ValidateEvent(e, limits_);
    if (s.ok()) s = live_->Admit(e, &ended_in_batch);
    if (s.ok()) {
      write->accepted.push_back(e);
      continue;
    }
    v1::Rejection* r = ack->add_rejections();
    r->set_index(i);
    r->set_reason(std::string(s.message()));
    v1::DeadLetter& dead = write->dead_letters.emplace_back();
    dead.set_agent_id(batch.agent_id());
    dead.set_sequence(batch.sequence());
    dead.set_index(i);
    dead.set_reason(r->reason());
    *dead.mutable_event() = e;
    dead.mutable_received()->set_seconds(write->received_ns /
                                         core::kNanosPerSecond);
  }
  ack->set_accepted(static_cast<uint32_t>(write->accepted.size()));
}

absl::StatusOr<core::FleetReport> Ingestor::Report(
    int64_t as_of_ns, std::optional<int64_t> since_ns) {
  absl::MutexLock lock(&mu_);
  core::Config config = live_->config();
  if (!since_ns && as_of_ns >= live_->applied_through_ns()) {
    return live_->Report(as_of_ns);
  }
  if (since_ns) config.since_ns = *since_ns;
  return ReplayStore(config, as_of_ns);
}

absl::StatusOr<core::FleetReport> Ingestor::ReplayStore(
    const core::Config& config, int64_t as_of_ns) {
  std::vector<v1::Event> events;
  absl::Status s =
      store_->ScanBatches([&](uint64_t, const std::vector<v1::Event>& batch) {
        for (const v1::Event& e : batch) {
          if (core::EventTimeNanos(e) <= as_of_ns) events.push_back(e);
        }
        return absl::OkStatus();
      });
  if (!s.ok()) return s;
  return core::ReplayEvents(events, config, as_of_ns);
}

void Ingestor::VisitLive(const std::function<void(const LiveState&)>& fn) {
  absl::MutexLock lock(&mu_);
  fn(*live_);
}

core::Config Ingestor::config() {
  absl::MutexLock lock(&mu_);
  return live_->config();
}

void Ingestor::set_fault_hook(FaultHook hook) {
  absl::MutexLock lock(&mu_);
  fault_hook_ = std::move(hook);
}

IngestStats Ingestor::stats() {
  absl::MutexLock lock(&mu_);
  return stats_;
}

LiveState::Stats Ingestor::live_stats() {
  absl::MutexLock lock(&mu_);
  return live_->stats();
}

}  // namespace goodput::server
