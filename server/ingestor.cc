#include "server/ingestor.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "core/capacity_tracker.h"
#include "core/event_order.h"
#include "core/fleet_report.h"
#include "server/fleet_history.h"
#include "server/store_replay.h"

namespace goodput::server {
Ingestor::Ingestor(storage::EventStore* store, LiveState* live, Clock* clock,
                   codec::ValidationLimits limits)
    : store_(store), clock_(clock), live_(live), limits_(limits) {}

absl::Status Ingestor::Recover() {
  absl::MutexLock lock(&mu_);
  auto sequences = store_->AgentSequences();
  if (!sequences.ok()) return sequences.status();
  agent_sequence_ = *std::move(sequences);
  // The evicted jobs as their totals: a restart reads none of them.
  if (absl::Status s = live_->RestoreEvictedTotals(); !s.ok()) return s;
  std::vector<storage::JobSnapshot> snapshots;
  if (absl::Status s = store_->ReadHeldSnapshots(&snapshots); !s.ok()) {
    return s;
  }
  live_->LoadSnapshots(std::move(snapshots));
  last_batch_id_ = store_->LastBatchId();
  absl::Status s = live_->Recover(last_batch_id_);
  if (!s.ok()) return s;
  SaveSnapshots();
  SaveJobStates(/*all=*/false);
  // Store maintenance: a failure is counted and logged (MaintenanceFailed)
  // and done again later (the next check, or restart); it does not stop
  // the start.
  leftover_deletions_ = live_->TakeLeftoverDeletions();
  // Each tried once (a failure counts once): the eviction would try the
  // failed leftovers again first, so it waits for the next check.
  const bool leftovers_done = DeleteLeftovers().ok();
  (void)RetireLocked();
  if (leftovers_done) (void)EvictLocked();
  return absl::OkStatus();
}

absl::Status Ingestor::DeleteLeftovers() {
  // Those still retired in memory (an import may have replaced one since).
  std::vector<storage::JobSnapshot> due;
  for (storage::JobSnapshot& d : std::exchange(leftover_deletions_, {})) {
    absl::StatusOr<std::optional<storage::JobSnapshot>> held =
        live_->DeletedJob(d.report.job_id);
    if (!held.ok() || *held) due.push_back(std::move(d));
  }
  if (due.empty()) return absl::OkStatus();
  absl::Status s = store_->DeleteJobEvents(due);
  if (s.ok()) return s;
  MaintenanceFailed(&stats_.retirement_errors, "retire", s);
  leftover_deletions_ = std::move(due);
  next_leftovers_ns_ = clock_->NowNanos() + kLeftoverRetryNs;
  return s;
}

void Ingestor::set_retention(std::optional<int64_t> retention_ns) {
  absl::MutexLock lock(&mu_);
  retention_ns_ = retention_ns;
}

absl::Status Ingestor::EnforceRetention() {
  {
    absl::MutexLock lock(&mu_);
    if (absl::Status s = RetireLocked(); !s.ok()) return s;
  }
  return RetireEvicted(/*force=*/true);
}

void Ingestor::set_ended_job_grace(std::optional<int64_t> grace_ns) {
  absl::MutexLock lock(&mu_);
  grace_ns_ = grace_ns;
}

absl::Status Ingestor::EvictEndedJobs() {
  absl::MutexLock lock(&mu_);
  return EvictLocked();
}

int64_t Ingestor::DrainRebuilds(int64_t budget) {
  absl::MutexLock lock(&mu_);
  return live_->DrainRebuilds(budget);
}

absl::Status Ingestor::EvictLocked() {
  if (!grace_ns_) return absl::OkStatus();
  next_eviction_ns_ =
      clock_->NowNanos() + std::clamp<int64_t>(*grace_ns_ / 10,
                                               core::kNanosPerSecond,
                                               60 * core::kNanosPerSecond);
  // Not before the leftover deletions: the next check.
  if (absl::Status s = DeleteLeftovers(); !s.ok()) return s;
  // Stored first, in one write with the new totals: an evicted job's
  // final report is read from the store.
  absl::StatusOr<LiveState::Eviction> due =
      live_->PlanEviction(*grace_ns_, last_batch_id_);
  absl::Status s = due.status();
  if (s.ok() && due->snapshots.empty()) return absl::OkStatus();
  if (s.ok()) s = store_->EvictJobs(due->snapshots, due->record);
  if (!s.ok()) {  // nothing changed: the next check plans again
    MaintenanceFailed(&stats_.eviction_errors, "evict", s);
    return s;
  }
  stats_.evicted_jobs += live_->Evict(*std::move(due));
  return absl::OkStatus();
}

int64_t Ingestor::RetentionEvery() const {
  return std::clamp<int64_t>(*retention_ns_ / 10, core::kNanosPerSecond,
                             60 * core::kNanosPerSecond);
}

absl::Status Ingestor::RetireLocked() {
  if (!retention_ns_) return absl::OkStatus();
  const int64_t now = clock_->NowNanos();
  next_retention_ns_ = now + RetentionEvery();
  const int64_t horizon_ns = now - *retention_ns_;
  // Best effort, as the deletion is retried at the next check.
  if (absl::Status s = DeleteFleetEvents(horizon_ns); !s.ok()) {
    MaintenanceFailed(&stats_.heartbeat_retention_errors, "retire_heartbeats",
                      s);
  }
  absl::Status s =
      RetireJobs(live_->RetirementsDue(horizon_ns), /*evicted=*/false);
  if (!s.ok()) MaintenanceFailed(&stats_.retirement_errors, "retire", s);
  return s;
}

absl::Status Ingestor::RetireJobs(const std::vector<storage::JobSnapshot>& due,
                                  bool evicted) {
  if (due.empty()) return absl::OkStatus();
  // Snapshot first. A deletion that fails or is cut short by a crash is
  // done again: a held job's at the next check (it is not retired in
  // memory yet) or by the next recovery (its snapshot says so but it still
  // has a head); an evicted job's by the next RetireEvicted (it stays in
  // the end-time index until its events are deleted). An evicted job's
  // snapshot stays evicted (the totals are unchanged).
  absl::Status s = evicted ? store_->EvictJobs(due, std::nullopt)
                           : store_->WriteSnapshots(due);
  if (!s.ok()) return s;
  return DeleteRetired(due);
}

absl::Status Ingestor::DeleteRetired(
    const std::vector<storage::JobSnapshot>& retired) {
  if (retired.empty()) return absl::OkStatus();
  if (absl::Status s = store_->DeleteJobEvents(retired); !s.ok()) return s;
  for (const storage::JobSnapshot& d : retired) live_->Retire(d);
  stats_.retired_jobs += static_cast<int64_t>(retired.size());
  return absl::OkStatus();
}

absl::Status Ingestor::RetireEvicted(bool force) {
  int64_t horizon_ns = 0;
  FaultHook hook;
  {
    absl::MutexLock lock(&mu_);
    const int64_t now = clock_->NowNanos();
    if (!retention_ns_ || live_->evicted_totals().jobs() == 0 ||
        (!force && now < next_evicted_retention_ns_)) {
      return absl::OkStatus();
    }
    next_evicted_retention_ns_ = now + RetentionEvery();
    horizon_ns = now - *retention_ns_;
    hook = fault_hook_;
  }
  // Outside the ingest lock: the due ones, by the end-time index.
  std::vector<storage::JobSnapshot> stored;
  absl::Status s = store_->ReadEvictedEndedBefore(horizon_ns, &stored);
  if (s.ok() && hook) hook("retire_read");
  if (s.ok() && stored.empty()) return absl::OkStatus();
  absl::MutexLock lock(&mu_);
  if (s.ok()) s = RetireStillEvicted(std::move(stored));
  if (!s.ok()) {
    MaintenanceFailed(&stats_.evicted_retirement_errors, "retire_evicted", s);
  }
  return s;
}

absl::Status Ingestor::RetireStillEvicted(
    std::vector<storage::JobSnapshot> stored) {
  absl::StatusOr<EvictedDue> due = StillEvicted(std::move(stored));
  if (!due.ok()) return due.status();
  if (absl::Status s = DeleteRetired(due->unfinished); !s.ok()) return s;
  return RetireJobs(due->fresh, /*evicted=*/true);
}

void Ingestor::MaintenanceFailed(int64_t* counter, const char* op,
                                 const absl::Status& status) {
  ++*counter;
  if (!log_) return;
  log_->Warning(
      absl::StrCat("store maintenance failed (op ", op,
                   "; nothing accepted is lost): ", status.ToString()));
}

absl::StatusOr<Ingestor::EvictedDue> Ingestor::StillEvicted(
    std::vector<storage::JobSnapshot> read) {
  EvictedDue due;
  for (storage::JobSnapshot& s : read) {
    // Back in memory since the read: RetireLocked's, once it ends again.
    if (live_->has_job(s.report.job_id)) continue;
    std::optional<storage::JobSnapshot> now;
    if (absl::Status st = store_->ReadSnapshot(s.report.job_id, &now);
        !st.ok()) {
      return st;
    }
    if (now && now->events_deleted) {  // its deletion failed or was cut short
      due.unfinished.push_back(*std::move(now));
      continue;
    }
    // Stored again since (brought back and evicted again): the next check.
    if (!now || now->through_batch != s.through_batch) continue;
    s.through_batch = std::numeric_limits<uint64_t>::max();
    s.events_deleted = true;
    due.fresh.push_back(std::move(s));
  }
  return due;
}

absl::Status Ingestor::DeleteFleetEvents(int64_t horizon_ns) {
  FleetHistory history(store_, &live_->config());
  if (absl::Status s = history.Load(last_batch_id_); !s.ok()) return s;
  // The mark found at the first check: counted by the process that wrote it.
  if (!fleet_counted_through_) {
    fleet_counted_through_ = history.deleted_through();
  }
  absl::StatusOr<uint64_t> through =
      history.DeleteBefore(horizon_ns, *fleet_counted_through_);
  if (!through.ok()) return through.status();
  if (*through > *fleet_counted_through_) {
    stats_.fleet_batches_deleted +=
        static_cast<int64_t>(*through - *fleet_counted_through_);
    fleet_counted_through_ = *through;
  }
  return absl::OkStatus();
}

void Ingestor::SaveJobStates(bool all) {
  std::vector<internal::v1::StoredJobState> put;
  std::vector<std::pair<std::string, uint64_t>> remove;
  live_->TakeJobStates(last_batch_id_, all, &put, &remove);
  if (put.empty() && remove.empty()) return;
  if (fault_hook_) fault_hook_("before_states");
  // Best effort: without a state a restore reads more of the job's events.
  if (!store_->WriteJobStates(put, remove).ok()) ++stats_.state_errors;
  stats_.states_written += static_cast<int64_t>(put.size());
  if (fault_hook_) fault_hook_("after_states");
}

absl::Status Ingestor::SaveAllStates() {
  absl::MutexLock lock(&mu_);
  std::vector<internal::v1::StoredJobState> put;
  std::vector<std::pair<std::string, uint64_t>> remove;
  live_->TakeJobStates(last_batch_id_, /*all=*/true, &put, &remove);
  stats_.states_written += static_cast<int64_t>(put.size());
  if (absl::Status s = store_->WriteJobStates(put, remove); !s.ok()) return s;
  return SaveFleetState(clock_->NowNanos(), /*force=*/true);
}

void Ingestor::set_fleet_state_policy(int64_t every_batches, int64_t every_ns) {
  absl::MutexLock lock(&mu_);
  fleet_state_every_batches_ = every_batches;
  fleet_state_every_ns_ = every_ns;
}

absl::Status Ingestor::SaveFleetState(int64_t now_ns, bool force) {
  const bool due = last_batch_id_ - fleet_state_batch_ >=
                       static_cast<uint64_t>(fleet_state_every_batches_) ||
                   now_ns >= next_fleet_state_ns_;
  if (last_batch_id_ == fleet_state_batch_ || (!force && !due)) {
    return absl::OkStatus();
  }
  std::optional<internal::v1::StoredFleetState> state = live_->FleetState();
  if (!state) return absl::OkStatus();  // capacity waits for its rebuild
  absl::Status s =
      store_->WriteMeta(LiveState::kFleetStateMeta, state->SerializeAsString());
  if (s.ok()) {  // and a spaced record, with the capacity as of a cut
    FleetHistory history(store_, &live_->config());
    s = history.Load(last_batch_id_);
    if (s.ok()) s = history.Record(*std::move(state));
  }
  ++(s.ok() ? stats_.fleet_states_written : stats_.fleet_state_errors);
  if (!s.ok()) return s;
  fleet_state_batch_ = last_batch_id_;
  next_fleet_state_ns_ = now_ns + fleet_state_every_ns_;
  return absl::OkStatus();
}

void Ingestor::set_state_policy(LiveState::StatePolicy policy) {
  absl::MutexLock lock(&mu_);
  live_->set_state_policy(policy);
}

void Ingestor::SaveSnapshots() {
  std::vector<storage::JobSnapshot> due = live_->TakeSnapshots(last_batch_id_);
  if (due.empty()) return;
  // Best effort: without a snapshot a restart replays the job's events.
  if (absl::Status s = store_->WriteSnapshots(due); !s.ok()) {
    MaintenanceFailed(&stats_.snapshot_errors, "snapshot", s);
  }
}

void Ingestor::CheckMaintenance(int64_t now_ns) {
  // The batch is durable: a failure is counted and tried at the next check.
  if (retention_ns_ && now_ns >= next_retention_ns_) (void)RetireLocked();
  if (grace_ns_ && now_ns >= next_eviction_ns_) (void)EvictLocked();
  // With a grace the eviction check tries the leftovers first.
  if (!grace_ns_ && !leftover_deletions_.empty() &&
      now_ns >= next_leftovers_ns_) {
    (void)DeleteLeftovers();
  }
}

absl::StatusOr<v1::Ack> Ingestor::Duplicate(const v1::Batch& batch,
                                            uint64_t print) {
  if (fingerprints_.Compare(batch.agent_id(), batch.sequence(), print) ==
      BatchFingerprints::Match::kDiffers) {
    ++stats_.diverging_sequences;
    return absl::AlreadyExistsError(absl::StrCat(
        "batch.sequence: batch ", batch.sequence(), " of agent_id \"",
        batch.agent_id(),
        "\" has other events than the batch acknowledged under that "
        "sequence: two agents send under this id (a cloned spool "
        "directory?); nothing stored. Give the clone a new identity: "
        "docs/delivery.md, \"Agent identity\""));
  }
  ++stats_.duplicate_batches;
  v1::Ack ack;
  ack.set_sequence(batch.sequence());
  ack.set_duplicate(true);
  return ack;
}

IngestHealth Ingestor::health() const {
  absl::MutexLock lock(&health_mu_);
  return health_;
}

void Ingestor::NoteStoreWrite(const absl::Status& status) {
  absl::MutexLock lock(&health_mu_);
  if (status.ok()) {
    health_.store_failures_in_a_row = 0;
    return;
  }
  ++health_.store_failures_in_a_row;
  health_.last_store_error = std::string(status.message());
}

void Ingestor::SetBusySince(std::optional<int64_t> ns) {
  absl::MutexLock lock(&health_mu_);
  health_.busy_since_ns = ns;
}

absl::Status Ingestor::CheckJump(const v1::Batch& batch, uint64_t acked) {
  if (max_sequence_jump_ == 0 ||
      batch.sequence() - acked <= max_sequence_jump_) {
    return absl::OkStatus();
  }
  ++stats_.sequence_jumps;
  return absl::OutOfRangeError(absl::StrCat(
      "batch.sequence: ", batch.sequence(), " of agent ", batch.agent_id(),
      " is more than --max_sequence_jump=", max_sequence_jump_,
      " above its stored high-water mark ", acked,
      "; nothing stored (a forged or corrupt sequence, or a server that lost "
      "its store: docs/security.md, \"Agent identities\")"));
}

void Ingestor::SeeAgent(const std::string& agent, int64_t now_ns) {
  stats_.agent_last_seen_ns[agent] = now_ns;
  if (!agent_series_ttl_ns_ || now_ns < next_series_expiry_ns_) return;
  next_series_expiry_ns_ =
      now_ns + std::clamp<int64_t>(*agent_series_ttl_ns_ / 10,
                                   core::kNanosPerSecond,
                                   60 * core::kNanosPerSecond);
  ExpireAgents(now_ns);
}

void Ingestor::ExpireAgents(int64_t now_ns) {
  if (!agent_series_ttl_ns_) return;
  std::map<std::string, int64_t>& seen = stats_.agent_last_seen_ns;
  for (auto it = seen.begin(); it != seen.end();) {
    const bool silent = now_ns - it->second > *agent_series_ttl_ns_;
    stats_.expired_agent_series += silent ? 1 : 0;
    if (silent) fingerprints_.Forget(it->first);
    if (silent) stats_.agent_last_heartbeat_ns.erase(it->first);
    it = silent ? seen.erase(it) : std::next(it);
  }
}

absl::StatusOr<core::FleetReport> Ingestor::Report(
    int64_t as_of_ns, std::optional<int64_t> since_ns,
    const std::function<bool()>& cancelled, core::FleetSegments segments,
    bool exact_since) {
  absl::StatusOr<core::FleetReport> r = ReportAt(
      as_of_ns, since_ns, cancelled, segments, exact_since, /*locked=*/false);
  if (!absl::IsAborted(r.status())) return r;
  // A job left memory, or a new one ended, between the cut and the read
  // of the evicted jobs' snapshots (EvictedAtCut::Read): rare, so this
  // once they are read under the lock.
  return ReportAt(as_of_ns, since_ns, cancelled, segments, exact_since,
                  /*locked=*/true);
}

absl::StatusOr<core::FleetReport> Ingestor::ReportAt(
    int64_t as_of_ns, std::optional<int64_t> since_ns,
    const std::function<bool()>& cancelled, core::FleetSegments segments,
    bool exact_since, bool locked) {
  core::Config config;
  uint64_t through_batch = 0;
  std::unique_ptr<LiveState::Walk> walk;
  FaultHook hook;
  absl::StatusOr<Walked> walked = absl::UnavailableError("no live answer");
  {
    absl::MutexLock lock(&mu_);
    config = live_->config();
    through_batch = last_batch_id_;
    hook = fault_hook_;
    walk = BeginWalk(as_of_ns, &since_ns, exact_since);
    if (walk && locked) {  // a retake: all of it under the lock
      walked = WalkLocked(walk.get(), since_ns);
    }
  }
  // Outside the ingest lock: the store up to this batch is a fixed cut.
  if (walk && !locked) {
    if (hook) hook("report_cut");
    walked = Walk(walk.get(), since_ns, hook, cancelled);
  }
  if (since_ns) config.since_ns = *since_ns;
  if (walked.ok() && walked->held) {
    return core::BuildFleetReport(config, as_of_ns,
                                  std::move(walked->held->jobs),
                                  walked->held->capacity, segments);
  }
  if (walked.ok()) {
    return WindowFromParts(std::move(config), through_batch, as_of_ns,
                           *std::move(walked->parts), cancelled, segments);
  }
  // No live answer (a past as-of, an exact or off-grid window) or a window
  // whose job waits for its rebuild: replay the store.
  if (walk && !absl::IsFailedPrecondition(walked.status())) {
    return walked.status();
  }
  StoreReplay replay(store_, std::move(config), through_batch, cancelled);
  return replay.Report(as_of_ns);
}

std::unique_ptr<LiveState::Walk> Ingestor::BeginWalk(
    int64_t as_of_ns, std::optional<int64_t>* since_ns, bool exact_since) {
  if (as_of_ns < live_->applied_through_ns()) return nullptr;  // a past one
  std::optional<int64_t> edge;
  if (*since_ns) {
    if (exact_since) return nullptr;
    edge = live_->window_grid().Snap(**since_ns, as_of_ns);
    if (!edge) return nullptr;  // off the grid
    *since_ns = edge;
  }
  live_->FinishRebuilds();
  return live_->BeginWalk(as_of_ns, edge);
}

absl::StatusOr<Ingestor::Walked> Ingestor::WalkLocked(
    LiveState::Walk* walk, std::optional<int64_t> edge_ns) {
  absl::StatusOr<bool> done =
      live_->WalkSome(walk, std::numeric_limits<size_t>::max());
  EndWalk(walk, edge_ns.has_value(), done.status());
  if (!done.ok()) return done.status();
  return Take(walk, edge_ns);
}

// A report's walk takes the ingest lock again once no batch waits for it
// or one batch had it since: a walk that released the lock would otherwise
// often take it back before the woken ingest thread runs, and a steady
// queue of batches does not starve the report. (The batch's count drops
// under the lock, so the condition is checked again when it releases it.)
bool Ingestor::WalkMayGo(WalkTurn* turn) {
  return turn->waiting->load(std::memory_order_relaxed) == 0 ||
         *turn->turns != turn->seen;
}

absl::StatusOr<Ingestor::Walked> Ingestor::Walk(
    LiveState::Walk* walk, std::optional<int64_t> edge_ns,
    const FaultHook& hook, const std::function<bool()>& cancelled) {
  mu_.Lock();
  LiveState* live = live_;
  const size_t n = walk_jobs_;
  absl::Status s = StepLocked([&] { return live->WalkSome(walk, n); },
                              "report_walk", hook, cancelled);
  EndWalk(walk, edge_ns.has_value(), s);
  mu_.Unlock();
  if (!s.ok()) return s;
  return Take(walk, edge_ns);
}

absl::Status Ingestor::StepLocked(
    const std::function<absl::StatusOr<bool>()>& step, const char* point,
    const FaultHook& hook, const std::function<bool()>& cancelled) {
  for (;;) {
    absl::StatusOr<bool> done = step();
    if (!done.ok() || *done) return done.status();
    if (cancelled && cancelled()) {
      return absl::CancelledError("report: the request was cancelled");
    }
    WalkTurn turn{&ingest_waiting_, &ingest_turns_, ingest_turns_};
    mu_.Unlock();  // a batch goes in between two steps
    if (hook) hook(point);
    mu_.LockWhen(absl::Condition(&WalkMayGo, &turn));
  }
}

void Ingestor::Scrape(const std::function<void(const LiveState&)>& cut,
                      const LiveState::ScrapeFns& fns) {
  absl::MutexLock lock(&mu_);
  cut(*live_);
  std::unique_ptr<LiveState::Walk> walk = live_->BeginScrape();
  LiveState* live = live_;
  const size_t n = walk_jobs_;
  const FaultHook hook = fault_hook_;
  (void)StepLocked(
      [&]() -> absl::StatusOr<bool> {
        return live->ScrapeSome(walk.get(), n, fns);
      },
      "scrape_walk", hook, nullptr);
  live_->EndWalk(walk.get());
}

void Ingestor::EndWalk(LiveState::Walk* walk, bool window,
                       const absl::Status& walked) {
  live_->EndWalk(walk);
  if (window && !absl::IsCancelled(walked)) {
    ++(walked.ok() ? window_stats_.live : window_stats_.replayed);
  }
}

absl::StatusOr<Ingestor::Walked> Ingestor::Take(
    LiveState::Walk* walk, std::optional<int64_t> edge_ns) {
  Walked out;
  if (!edge_ns) {
    out.held = LiveState::TakeHeld(walk);
    absl::Status s = AddEvicted(&*out.held);
    if (!s.ok()) return s;
    return out;
  }
  out.parts = LiveState::TakeParts(walk);
  if (absl::Status s = AddEvicted(*edge_ns, &*out.parts); !s.ok()) return s;
  return out;
}

absl::Status Ingestor::AddEvicted(LiveState::HeldReport* held) {
  held->evicted.AddHeld(held->jobs);
  absl::StatusOr<std::vector<storage::JobSnapshot>> evicted =
      held->evicted.Read(store_);
  if (!evicted.ok()) return evicted.status();
  for (storage::JobSnapshot& s : *evicted) {
    held->jobs.push_back(std::move(s.report));
  }
  return absl::OkStatus();
}

absl::Status Ingestor::AddEvicted(int64_t edge_ns,
                                  LiveState::WindowParts* parts) {
  parts->evicted.AddHeld(parts->jobs);
  for (const std::string& id : parts->from_store) parts->evicted.AddHeld(id);
  absl::StatusOr<std::vector<storage::JobSnapshot>> evicted =
      parts->evicted.Read(store_);
  if (!evicted.ok()) return evicted.status();
  for (const storage::JobSnapshot& s : *evicted) {
    absl::Status st = LiveState::TakeWindow(
        s.report.job_id, LiveState::FinalInWindow(s, edge_ns), parts);
    if (!st.ok()) return st;
  }
  return absl::OkStatus();
}

absl::StatusOr<core::FleetReport> Ingestor::WindowFromParts(
    core::Config windowed, uint64_t through_batch, int64_t as_of_ns,
    LiveState::WindowParts parts, const std::function<bool()>& cancelled,
    core::FleetSegments segments) {
  StoreReplay replay(store_, windowed, through_batch, cancelled);
  for (const std::string& job_id : parts.from_store) {
    if (cancelled && cancelled()) {
      return absl::CancelledError("report: the request was cancelled");
    }
    absl::StatusOr<std::optional<core::JobReport>> r =
        replay.Job(job_id, as_of_ns);
    if (!r.ok()) return r.status();
    if (*r) parts.jobs.push_back(**std::move(r));
  }
  if (!parts.from_store.empty()) {
    absl::MutexLock lock(&mu_);
    window_stats_.store_jobs += static_cast<int64_t>(parts.from_store.size());
  }
  // BuildFleetReport puts the jobs in id order. Capacity is not kept per
  // window: left out (docs/semantics.md).
  return core::BuildFleetReport(windowed, as_of_ns, std::move(parts.jobs), {},
                                segments);
}

absl::StatusOr<std::optional<core::JobReport>> Ingestor::JobReport(
    const std::string& job_id, int64_t as_of_ns,
    std::optional<int64_t> since_ns, const std::function<bool()>& cancelled) {
  core::Config config;
  uint64_t through_batch = 0;
  {
    absl::MutexLock lock(&mu_);
    config = live_->config();
    if (!since_ns && as_of_ns >= live_->applied_through_ns()) {
      return live_->ReportOne(job_id, as_of_ns);
    }
    through_batch = last_batch_id_;
  }
  if (since_ns) config.since_ns = *since_ns;
  StoreReplay replay(store_, std::move(config), through_batch, cancelled);
  return replay.Job(job_id, as_of_ns);
}

absl::StatusOr<std::optional<storage::JobSnapshot>> Ingestor::DeletedJob(
    const std::string& job_id) {
  absl::MutexLock lock(&mu_);
  return live_->DeletedJob(job_id);
}

std::optional<int64_t> Ingestor::retention_ns() {
  absl::MutexLock lock(&mu_);
  return retention_ns_;
}

void Ingestor::VisitLive(const std::function<void(const LiveState&)>& fn) {
  absl::MutexLock lock(&mu_);
  fn(*live_);
}

Ingestor::WindowStats Ingestor::window_stats() {
  absl::MutexLock lock(&mu_);
  return window_stats_;
}

core::Config Ingestor::config() {
  absl::MutexLock lock(&mu_);
  return live_->config();
}

void Ingestor::set_max_sequence_jump(uint64_t jump) {
  absl::MutexLock lock(&mu_);
  max_sequence_jump_ = jump;
}

void Ingestor::set_agent_series_ttl(std::optional<int64_t> ttl_ns) {
  absl::MutexLock lock(&mu_);
  agent_series_ttl_ns_ = ttl_ns;
}

void Ingestor::set_fault_hook(FaultHook hook) {
  absl::MutexLock lock(&mu_);
  fault_hook_ = std::move(hook);
}

void Ingestor::set_log(Logger log) {
  absl::MutexLock lock(&mu_);
  log_ = std::move(log);
}

void Ingestor::set_report_walk_jobs(size_t jobs) {
  absl::MutexLock lock(&mu_);
  walk_jobs_ = std::max<size_t>(jobs, 1);
}

void Ingestor::set_limits(IngestLimits* limits) {
  absl::MutexLock lock(&mu_);
  job_limits_ = limits;
}

bool Ingestor::OtherShardsHeartbeat(const v1::Event& e) const {
  return shard_ && e.has_heartbeat() &&
         CapacityShardOf(e.host(), shard_->count) != shard_->index;
}

void Ingestor::set_shard(ShardPosition shard) {
  absl::MutexLock lock(&mu_);
  shard_ = shard;
}

void Ingestor::set_check_event_times(bool check) {
  check_event_times_.store(check, std::memory_order_relaxed);
}

absl::StatusOr<storage::JobImport> Ingestor::ExportJobs(
    const std::string& agent_id,
    const std::function<bool(const std::string&)>& in) {
  absl::MutexLock lock(&mu_);
  storage::JobImport out;
  out.agent_id = agent_id;
  auto it = agent_sequence_.find(agent_id);
  out.sequence = it == agent_sequence_.end() ? 0 : it->second;
  if (absl::Status s = live_->ExportJobs(in, &out.states, &out.finals);
      !s.ok()) {
    return s;
  }
  return out;
}

absl::Status Ingestor::ImportJobs(storage::JobImport import) {
  absl::MutexLock lock(&mu_);
  const uint64_t acked = agent_sequence_[import.agent_id];
  if (import.sequence <= acked) {
    return absl::FailedPreconditionError(
        absl::StrCat("import of ", import.agent_id, " through ",
                     import.sequence, ": already applied through ", acked));
  }
  if (absl::Status s = live_->CheckImport(import); !s.ok()) {
    return absl::Status(s.code(),
                        absl::StrCat("import of ", import.agent_id, " through ",
                                     import.sequence, ": ", s.message()));
  }
  for (internal::v1::StoredJobState& s : import.states) {
    s.set_through_batch(last_batch_id_);
    s.set_imported(true);
  }
  for (storage::JobSnapshot& f : import.finals) {
    f.through_batch = last_batch_id_;
    f.imported = true;
  }
  absl::Status s = store_->ImportJobs(import);
  NoteStoreWrite(s);
  if (!s.ok()) return s;
  live_->ImportJobs(import);
  agent_sequence_[import.agent_id] = import.sequence;
  return absl::OkStatus();
}

uint64_t Ingestor::AckedSequence(const std::string& agent_id) {
  absl::MutexLock lock(&mu_);
  auto it = agent_sequence_.find(agent_id);
  return it == agent_sequence_.end() ? 0 : it->second;
}

IngestStats Ingestor::stats() {
  absl::MutexLock lock(&mu_);
  ExpireAgents(clock_->NowNanos());
  return stats_;
}

LiveState::Stats Ingestor::live_stats() {
  absl::MutexLock lock(&mu_);
  return live_->stats();
}

}  // namespace goodput::server
