// LiveState's restart recovery, snapshots and retention (see live_state.h).
#include <algorithm>
#include <limits>
#include <tuple>
#include <utility>

#include "absl/strings/str_cat.h"
#include "core/event_order.h"
#include "proto/tracker_state.pb.h"
#include "server/fleet_history.h"
#include "server/job_state_fit.h"
#include "server/live_state.h"
#include "storage/read_job_reader.h"

namespace goodput::server {
namespace {

using internal::v1::StoredJobState;

// The newest of `applied` and `e`'s time if that is at or before `through`.
int64_t AppliedMax(const v1::Event& e, int64_t through, int64_t applied) {
  const int64_t t = core::EventTimeNanos(e);
  return t <= through ? std::max(applied, t) : applied;
}

}  // namespace

void LiveState::NoteStored(const v1::Event& e, LiveJob* job) {
  const int64_t t = core::EventTimeNanos(e);
  job->newest_ns = std::max(job->newest_ns, t);
  job->first_ns = std::min(job->first_ns, t);
  if (e.has_job_ended()) job->ended_ns = t;
}

void LiveState::LoadSnapshots(std::vector<storage::JobSnapshot> snapshots) {
  for (storage::JobSnapshot& s : snapshots) {
    LiveJob& job = JobFor(s.report.job_id);
    job.newest_ns = s.ended_ns;
    job.first_ns = s.first_event_ns;
    job.ended_ns = s.ended_ns;
    // Live reports after this job's end only: earlier ones replay.
    applied_through_ns_ = std::max(applied_through_ns_, s.ended_ns);
    job.final = std::make_unique<storage::JobSnapshot>(std::move(s));
  }
}

absl::Status LiveState::RestoreEvictedTotals() {
  std::optional<std::string> raw;
  if (absl::Status s = store_->ReadMeta(storage::kEvictedTotalsMeta, &raw);
      !s.ok()) {
    return s;
  }
  // No record: nothing was evicted yet (a layout-5 store's snapshots are
  // all held: the restart loads them and evicts those past the grace).
  if (!raw) return absl::OkStatus();
  internal::v1::StoredEvictedTotals record;
  if (record.ParseFromString(*raw)) {
    absl::StatusOr<EndedJobTotals> totals = EndedJobTotals::FromRecord(record);
    if (totals.ok()) {
      evicted_ = *std::move(totals);
      applied_through_ns_ =
          std::max(applied_through_ns_, record.applied_through_ns());
      return absl::OkStatus();
    }
  }
  // A record that does not load (torn, another version): every evicted
  // snapshot, once.
  ++stats_.evicted_totals_rebuilt;
  std::vector<storage::JobSnapshot> all;
  if (absl::Status s = store_->ReadSnapshots(&all); !s.ok()) return s;
  std::vector<storage::JobSnapshot> held;
  if (absl::Status s = store_->ReadHeldSnapshots(&held); !s.ok()) return s;
  return SumEvicted(all, held);
}

absl::Status LiveState::SumEvicted(
    const std::vector<storage::JobSnapshot>& all,
    const std::vector<storage::JobSnapshot>& held) {
  std::set<std::string> held_ids;
  for (const storage::JobSnapshot& s : held) held_ids.insert(s.report.job_id);
  for (const storage::JobSnapshot& s : all) {
    std::optional<storage::JobSnapshot> evicted;
    if (!held_ids.count(s.report.job_id)) {
      evicted = s;
    } else if (absl::Status st =
                   store_->ReadEvictedSnapshot(s.report.job_id, &evicted);
               !st.ok()) {
      return st;
    }
    if (evicted) {
      evicted_.Add(evicted->report, evicted->ended_ns);
      applied_through_ns_ = std::max(applied_through_ns_, evicted->ended_ns);
    }
  }
  return absl::OkStatus();
}

absl::Status LiveState::Recover(uint64_t through_batch) {
  last_batch_id_ = through_batch;
  absl::Status s = store_->ScanHeartbeatsAfter(
      RestoreFleetState(),
      [this](uint64_t batch, std::vector<v1::Event>* events) {
        RecoverFleetEvents(batch, *events);
        return absl::OkStatus();
      });
  if (!s.ok()) return s;
  if (capacity_stale_) RebuildCapacity();
  s = store_->ScanJobsForRestore([&](const std::string& job_id,
                                     std::vector<StoredJobState>* states,
                                     storage::JobEventsReader* events) {
    RecoverJob(job_id, through_batch, states, events);
    return absl::OkStatus();
  });
  if (!s.ok()) return s;
  auto by_id = [](const storage::JobSnapshot& a,
                  const storage::JobSnapshot& b) {
    return a.report.job_id < b.report.job_id;
  };
  auto same_id = [](const storage::JobSnapshot& a,
                    const storage::JobSnapshot& b) {
    return a.report.job_id == b.report.job_id;
  };
  std::sort(leftover_deletions_.begin(), leftover_deletions_.end(), by_id);
  leftover_deletions_.erase(std::unique(leftover_deletions_.begin(),
                                        leftover_deletions_.end(), same_id),
                            leftover_deletions_.end());
  return absl::OkStatus();
}

void LiveState::RecoverFleetEvents(uint64_t batch,
                                   const std::vector<v1::Event>& events) {
  ++stats_.fleet_batches_scanned;
  for (const v1::Event& e : events) {
    if (SharedExclusions::IsShared(e)) {
      KeepShared(e, batch);
    } else {
      ApplyHeartbeat(e);
    }
  }
}

std::optional<internal::v1::StoredFleetState> LiveState::FleetState() const {
  if (capacity_stale_) return std::nullopt;
  internal::v1::StoredFleetState state;
  state.set_version(1);
  state.set_through_batch(last_batch_id_);
  internal::v1::CapacityTrackerState capacity;
  capacity_.SaveState(&capacity);
  state.set_capacity(capacity.SerializeAsString());
  state.set_newest_beat_ns(newest_beat_ns_);
  shared_.ForEach([&state](const v1::Event& e, uint64_t batch) {
    internal::v1::StoredFleetState::SharedExclusion* x = state.add_shared();
    x->set_batch(batch);
    *x->mutable_event() = e;
  });
  return state;
}

bool LiveState::LoadCapacity(const internal::v1::StoredFleetState& state) {
  internal::v1::CapacityTrackerState saved;
  core::CapacityTracker capacity(config_);
  // A record ahead of the store (its batches lost) does not fit either.
  if (state.version() != 1 || state.through_batch() > last_batch_id_ ||
      !saved.ParseFromString(state.capacity()) ||
      !capacity.RestoreState(saved).ok()) {
    return false;
  }
  capacity_ = std::move(capacity);
  host_last_ns_.clear();
  for (const auto& h : saved.hosts()) host_last_ns_[h.name()] = h.time_ns();
  return true;
}

uint64_t LiveState::RestoreFleetState() {
  std::optional<std::string> raw;
  internal::v1::StoredFleetState state;
  if (!store_->ReadMeta(kFleetStateMeta, &raw).ok()) return 0;
  bool loaded = raw && state.ParseFromString(*raw) && LoadCapacity(state);
  if (raw && !loaded) ++stats_.unreadable_fleet_states;
  FleetHistory history(store_, config_);
  if (!loaded && history.Load(last_batch_id_).ok()) {
    for (auto it = history.records().rbegin();
         !loaded && it != history.records().rend(); ++it) {
      loaded = LoadCapacity(*it);
      if (loaded) state = *it;
    }
    stats_.unreadable_fleet_states += history.stats().records_skipped;
  }
  if (!loaded) return 0;
  for (const auto& x : state.shared()) shared_.Add(x.event(), x.batch());
  shared_.ExcludeFrom(&capacity_);
  newest_beat_ns_ = state.newest_beat_ns();
  applied_through_ns_ = std::max(applied_through_ns_, newest_beat_ns_);
  stats_.fleet_state_restored = 1;
  return state.through_batch();
}

uint64_t LiveState::CapacityRebuildStart() {
  FleetHistory history(store_, config_);
  std::vector<internal::v1::StoredFleetState> records;
  if (history.Load(last_batch_id_).ok()) records = history.records();
  std::optional<std::string> raw;
  internal::v1::StoredFleetState restart;
  if (store_->ReadMeta(kFleetStateMeta, &raw).ok() && raw &&
      restart.ParseFromString(*raw)) {
    records.push_back(std::move(restart));  // the newest (or equal)
  }
  for (auto it = records.rbegin(); it != records.rend(); ++it) {
    if (!shared_.StaleAfter(it->through_batch(), it->newest_beat_ns(),
                            /*hosts=*/nullptr) &&
        LoadCapacity(*it)) {
      ++stats_.capacity_rebuilds_from_record;
      return it->through_batch();
    }
  }
  // Retention deleted the heartbeats before the oldest record: start from
  // it though the exclusion starts before it.
  if (history.deleted_through() > 0 && !history.records().empty() &&
      LoadCapacity(history.records().front())) {
    ++stats_.capacity_rebuilds_inexact;
    return history.records().front().through_batch();
  }
  capacity_ = core::CapacityTracker(config_);
  host_last_ns_.clear();
  return 0;
}

void LiveState::RecoverJob(const std::string& job_id, uint64_t through_batch,
                           std::vector<StoredJobState>* states,
                           storage::JobEventsReader* events) {
  auto it = JobEntry(job_id);
  LiveJob& job = it->second;
  if (job.final) {
    if (job.final->events_deleted) {
      leftover_deletions_.push_back(*job.final);
      return;
    }
    std::vector<v1::Event> tail;
    absl::Status s =
        events->Read(job.final->through_batch, through_batch, &tail);
    const bool excluded_since = shared_.StaleAfter(
        job.final->through_batch, job.final->ended_ns, /*hosts=*/nullptr);
    if (s.ok() && tail.empty() && !excluded_since) {
      return;  // the snapshot covers every event and exclusion
    }
    if (!s.ok()) ++stats_.apply_errors;
  }
  Restore(job_id, through_batch, states, events, &job, /*defer_stale=*/true);
  if (job.ended_ns && !job.final) MarkSnapshotDue(job_id, &job);
  NoteTaken(&it->first, &job);
}

void LiveState::Restore(const std::string& job_id, uint64_t through_batch,
                        LiveJob* job) {
  std::vector<StoredJobState> states;
  int unreadable = 0;
  if (!store_->ReadJobStates(job_id, &states, &unreadable).ok()) {
    ++stats_.apply_errors;  // restore from the events alone
  }
  stats_.unreadable_states += unreadable;
  storage::ReadJobReader events(store_, job_id);
  Restore(job_id, through_batch, &states, &events, job);
}

void LiveState::Restore(const std::string& job_id, uint64_t through_batch,
                        std::vector<StoredJobState>* stored,
                        storage::JobEventsReader* events, LiveJob* job,
                        bool defer_stale) {
  ++stats_.restores;
  ++job->generation;
  job->rebuild = false;
  job->final.reset();
  const std::vector<StoredJobState>& states = *stored;
  std::vector<v1::Event> tail;
  std::optional<uint64_t> used;  // an imported record may be through 0
  for (auto it = states.rbegin(); it != states.rend(); ++it) {
    if (it->through_batch() > through_batch) continue;
    tail.clear();
    absl::Status s = events->Read(it->through_batch(), through_batch, &tail);
    if (s.ok() && LoadState(*it, tail, job)) {
      used = it->through_batch();
      break;
    }
    if (s.ok() && defer_stale) return QueueRebuild(job_id, *it, tail, job);
  }
  if (!used) {
    ResetJob(job, core::JobTracker(job_id, config_));
    tail.clear();
    if (!events->Read(0, through_batch, &tail).ok()) ++stats_.apply_errors;
  } else {
    ++stats_.restores_from_state;
  }
  for (const StoredJobState& st : states) {  // the ones that may still fit
    if (used && st.through_batch() <= *used) {
      job->states.push_back(StateRef{st.through_batch(), st.newest_ns()});
    }
  }
  // The oldest record is the imported one of a job taken over from a
  // partition snapshot (ImportJobs deleted everything before it).
  if (!states.empty() && states.front().imported() &&
      states.front().has_last_applied_ns()) {
    job->import_floor = std::make_pair(states.front().last_applied_ns(),
                                       states.front().last_applied_rank());
  }
  stats_.restored_events += static_cast<int64_t>(tail.size());
  job->since_state = static_cast<int64_t>(tail.size());
  for (v1::Event& e : tail) {
    NoteStored(e, job);
    Buffer(job, &e);
  }
  Flush(job, job->newest_ns - lateness_ns_, /*spent=*/nullptr);
}

void LiveState::QueueRebuild(const std::string& job_id,
                             const StoredJobState& state,
                             const std::vector<v1::Event>& tail, LiveJob* job) {
  --stats_.restores;  // counted when the rebuild runs
  ResetJob(job, core::JobTracker(job_id, config_));
  job->newest_ns = state.newest_ns();
  job->first_ns = state.first_ns();
  if (state.has_ended_ns()) job->ended_ns = state.ended_ns();
  for (const v1::Event& e : tail) NoteStored(e, job);
  // What the rebuild will have applied: the record's applied events and
  // those of its buffer and tail up to the newest event minus the lateness.
  const int64_t through = job->newest_ns - lateness_ns_;
  int64_t applied = state.has_last_applied_ns()
                        ? state.last_applied_ns()
                        : std::numeric_limits<int64_t>::min();
  for (const v1::Event& e : state.buffer())
    applied = AppliedMax(e, through, applied);
  for (const v1::Event& e : tail) applied = AppliedMax(e, through, applied);
  applied_through_ns_ = std::max(applied_through_ns_, applied);
  job->rebuild = job->queued = true;
  ++stats_.rebuilds_pending;
  rebuild_queue_.push_back(job_id);
}

void LiveState::ResetJob(LiveJob* job, core::JobTracker tracker) {
  std::unique_ptr<storage::JobSnapshot> evicted = std::move(job->evicted);
  const uint64_t generation = job->generation;
  const bool state_due = job->state_due;
  const uint64_t born = job->born;
  *job = LiveJob(core::JobWindows(std::move(tracker), config_, grid_));
  job->evicted = std::move(evicted);
  job->generation = generation;
  job->state_due = state_due;
  job->born = born;
}

bool LiveState::LoadState(const StoredJobState& state,
                          const std::vector<v1::Event>& tail, LiveJob* job) {
  const std::set<std::string> hosts(state.hosts().begin(), state.hosts().end());
  // A record older than the hosts it keeps cannot take HOSTS exclusions:
  // stale too (after an upgrade, its job replays once).
  const bool excluded = state.has_last_applied_ns() &&
                        shared_.StaleAfter(state.through_batch(),
                                           state.last_applied_ns(), &hosts);
  // An imported record is all there is of the job before it: a late
  // exclusion that starts before it is not applied to that time (counted).
  if (excluded && state.imported()) ++stats_.imported_exclusions_missed;
  const bool fits = StateFits(state, tail) && (!excluded || state.imported());
  absl::StatusOr<core::JobTracker> tracker =
      fits ? TrackerOfState(state, config_)
           : absl::StatusOr<core::JobTracker>(
                 absl::FailedPreconditionError("stale"));
  if (!tracker.ok() || !state.hosts_kept()) {
    // Unreadable (torn or from another version) or stale for good (the
    // tail only grows): never used.
    ++(fits && !tracker.ok() ? stats_.unreadable_states : stats_.stale_states);
    stale_states_.emplace_back(state.job_id(), state.through_batch());
    return false;
  }
  ResetJob(job, *std::move(tracker));
  RestoreEdges(state, job);
  job->newest_ns = state.newest_ns();
  job->first_ns = state.first_ns();
  if (state.has_ended_ns()) job->ended_ns = state.ended_ns();
  if (state.has_last_applied_ns()) {
    job->last_applied = {state.last_applied_ns(), state.last_applied_rank()};
    applied_through_ns_ =
        std::max(applied_through_ns_, state.last_applied_ns());
  }
  job->applied_events = state.applied_events();
  job->all_hosts = hosts;
  job->state_newest_ns = state.newest_ns();
  for (const v1::Event& e : state.buffer()) {
    v1::Event copy = e;
    Buffer(job, &copy);
  }
  return true;
}

void LiveState::RestoreEdges(const StoredJobState& state, LiveJob* job) {
  if (state.windows().empty()) return;  // a record from before them
  internal::v1::JobWindowsState edges;
  const bool ok = edges.ParseFromString(state.windows()) &&
                  job->windows.RestoreEdges(edges).ok();
  // Without them the job keeps no edge before the record's cursor: such
  // windows replay the store, as they would without the record.
  if (!ok) ++stats_.unreadable_windows;
}

void LiveState::TakeJobStates(
    uint64_t through_batch, bool all, std::vector<StoredJobState>* put,
    std::vector<std::pair<std::string, uint64_t>>* remove) {
  remove->insert(remove->end(), stale_states_.begin(), stale_states_.end());
  stale_states_.clear();
  std::vector<std::pair<const std::string*, LiveJob*>> due;
  due.swap(state_due_);
  if (all) {
    due.clear();
    for (auto& [id, job] : jobs_) due.emplace_back(&id, &job);
  }
  for (auto& [job_id, job] : due) {
    job->state_due = false;
    if (job->final || job->rebuild || job->since_state == 0) continue;
    put->push_back(StateRecord(*job_id, *job, through_batch));
    job->since_state = 0;
    job->state_newest_ns = job->newest_ns;
    if (!job->states.empty() &&
        job->states.back().through_batch == through_batch) {
      job->states.pop_back();  // the same key: the record is replaced
    }
    job->states.push_back(StateRef{through_batch, job->newest_ns});
    PruneStates(*job_id, job, remove);
  }
  stats_.states_taken += static_cast<int64_t>(put->size());
}

StoredJobState LiveState::StateRecord(const std::string& job_id,
                                      const LiveJob& job,
                                      uint64_t through_batch) const {
  StoredJobState r;
  r.set_job_id(job_id);
  r.set_through_batch(through_batch);
  internal::v1::JobTrackerState tracker;
  job.tracker().SaveState(&tracker);
  r.set_tracker(tracker.SerializeAsString());
  internal::v1::JobWindowsState edges;
  job.windows.SaveEdges(&edges);
  r.set_windows(edges.SerializeAsString());
  r.set_newest_ns(job.newest_ns);
  r.set_first_ns(job.first_ns);
  if (job.ended_ns) r.set_ended_ns(*job.ended_ns);
  if (job.last_applied) {
    r.set_last_applied_ns(job.last_applied->first);
    r.set_last_applied_rank(job.last_applied->second);
  }
  for (const Pending& p : job.buffer) {
    if (!SharedExclusions::IsShared(p.event)) *r.add_buffer() = p.event;
  }
  r.set_applied_events(job.applied_events);
  for (const std::string& host : job.all_hosts) r.add_hosts(host);
  r.set_hosts_kept(true);
  return r;
}

void LiveState::PruneStates(
    const std::string& job_id, LiveJob* job,
    std::vector<std::pair<std::string, uint64_t>>* remove) {
  std::vector<StateRef>& refs = job->states;
  while (refs.size() > static_cast<size_t>(std::max(policy_.keep, 2))) {
    // Keep the oldest and the newest; drop the one whose neighbours are
    // closest relative to its age, so the records thin out with age
    // (roughly geometric: a late event finds one not far before it).
    const double newest = static_cast<double>(refs.back().newest_ns);
    auto score = [&](size_t i) {
      return static_cast<double>(refs[i + 1].newest_ns -
                                 refs[i - 1].newest_ns) /
             std::max(1.0, newest - static_cast<double>(refs[i].newest_ns));
    };
    size_t victim = 1;
    for (size_t i = 2; i + 1 < refs.size(); ++i) {
      if (score(i) < score(victim)) victim = i;
    }
    remove->emplace_back(job_id, refs[victim].through_batch);
    refs.erase(refs.begin() + static_cast<std::ptrdiff_t>(victim));
  }
}

absl::Status LiveState::ExportJobs(
    const std::function<bool(const std::string&)>& in,
    std::vector<StoredJobState>* states,
    std::vector<storage::JobSnapshot>* finals) {
  FinishRebuilds();
  for (const auto& [job_id, job] : jobs_) {
    if (!in(job_id)) continue;
    if (job.final) {
      finals->push_back(*job.final);
    } else {
      states->push_back(StateRecord(job_id, job, last_batch_id_));
    }
  }
  absl::StatusOr<std::vector<storage::JobSnapshot>> evicted =
      EvictedSnapshots();
  if (!evicted.ok()) return evicted.status();
  for (storage::JobSnapshot& s : *evicted) {
    if (in(s.report.job_id)) finals->push_back(std::move(s));
  }
  return absl::OkStatus();
}

void LiveState::ImportJobs(const storage::JobImport& import) {
  FinishRebuilds();  // none of the replaced jobs stays queued
  for (const StoredJobState& state : import.states) {
    auto it = JobEntry(state.job_id());
    LiveJob& job = it->second;
    KeepForWalks(it->first, job);
    job.evicted.reset();
    job.final.reset();
    if (!LoadState(state, {}, &job)) {
      ++stats_.apply_errors;  // a record its publisher could not have made
      continue;
    }
    job.states = {StateRef{state.through_batch(), state.newest_ns()}};
    if (state.has_last_applied_ns()) {
      job.import_floor =
          std::make_pair(state.last_applied_ns(), state.last_applied_rank());
    }
    ++job.generation;
    if (job.ended_ns) MarkSnapshotDue(it->first, &job);
    ++stats_.imported_jobs;
  }
  for (const storage::JobSnapshot& s : import.finals) {
    auto it = JobEntry(s.report.job_id);
    LiveJob& job = it->second;
    KeepForWalks(it->first, job);
    ResetJob(&job, core::JobTracker(s.report.job_id, config_));
    job.evicted.reset();
    ++job.generation;
    LoadSnapshots({s});
    ++stats_.imported_jobs;
  }
}

absl::Status LiveState::CheckImport(const storage::JobImport& import) const {
  for (const StoredJobState& state : import.states) {
    absl::Status s = TrackerOfState(state, config_).status();
    if (!s.ok()) {
      return absl::Status(s.code(),
                          absl::StrCat("job_id: job \"", state.job_id(),
                                       "\": its state record does not load "
                                       "here: ",
                                       s.message()));
    }
  }
  return absl::OkStatus();
}

std::vector<storage::JobSnapshot> LiveState::TakeLeftoverDeletions() {
  return std::move(leftover_deletions_);
}

storage::JobSnapshot LiveState::Snapshot(const std::string& job_id,
                                         const LiveJob& job,
                                         uint64_t through_batch) const {
  storage::JobSnapshot s;
  s.through_batch = through_batch;
  s.first_event_ns = job.first_ns;
  s.ended_ns = *job.ended_ns;
  s.report = ReportJob(job, *job.ended_ns);
  s.report.job_id = job_id;
  // Taken over from a partition snapshot: its raw events before that are
  // not here, so the snapshot must not be given up for a replay.
  s.imported = job.import_floor.has_value();
  return s;
}

std::vector<storage::JobSnapshot> LiveState::TakeSnapshots(
    uint64_t through_batch) {
  std::vector<storage::JobSnapshot> out;
  std::vector<std::string> due;
  due.swap(snapshot_due_);
  for (std::string& job_id : due) {
    auto it = jobs_.find(job_id);
    if (it == jobs_.end() || !it->second.snapshot_due) continue;
    if (it->second.rebuild) {  // due again once rebuilt
      snapshot_due_.push_back(std::move(job_id));
      continue;
    }
    it->second.snapshot_due = false;
    out.push_back(Snapshot(it->first, it->second, through_batch));
  }
  return out;
}

bool LiveState::EvictionDue(const LiveJob& job, int64_t grace_ns) const {
  return job.ended_ns && !job.rebuild &&
         applied_through_ns_ - *job.ended_ns > std::max(grace_ns, lateness_ns_);
}

absl::StatusOr<LiveState::Eviction> LiveState::PlanEviction(
    int64_t grace_ns, uint64_t through_batch) const {
  Eviction out{{}, evicted_, ""};
  for (const auto& [job_id, job] : jobs_) {
    if (!EvictionDue(job, grace_ns)) continue;
    out.snapshots.push_back(job.final ? *job.final
                                      : Snapshot(job_id, job, through_batch));
    // Evicted before and back since (maybe across a restart): the totals
    // count its evicted snapshot, which this one replaces.
    std::optional<storage::JobSnapshot> counted;
    if (job.evicted) {
      counted = *job.evicted;
    } else if (evicted_.jobs() > 0) {
      absl::Status s = store_->ReadEvictedSnapshot(job_id, &counted);
      if (!s.ok()) return s;
    }
    const storage::JobSnapshot& now = out.snapshots.back();
    if (counted) {
      out.totals.Revise(counted->report, now.report, now.ended_ns);
    } else {
      out.totals.Add(now.report, now.ended_ns);
    }
  }
  out.record = out.totals.ToRecord(applied_through_ns_).SerializeAsString();
  return out;
}

int64_t LiveState::Evict(Eviction eviction) {
  for (auto& [id, job] : state_due_) job->state_due = false;
  state_due_.clear();  // points into jobs_; due again at their next event
  int64_t n = 0;
  for (const storage::JobSnapshot& s : eviction.snapshots) {
    auto it = jobs_.find(s.report.job_id);
    if (it == jobs_.end()) continue;
    KeepForWalks(it->first, it->second);
    by_id_.erase(it->first);
    jobs_.erase(it);
    ++n;
  }
  evicted_ = std::move(eviction.totals);
  return n;
}

std::vector<storage::JobSnapshot> LiveState::RetirementsDue(
    int64_t horizon_ns) const {
  std::vector<storage::JobSnapshot> out;
  for (const auto& [job_id, job] : jobs_) {
    if (!job.ended_ns || *job.ended_ns >= horizon_ns) continue;
    if (job.final && job.final->events_deleted) continue;
    if (job.rebuild) continue;  // at a later check, once rebuilt
    storage::JobSnapshot& s = out.emplace_back(
        Snapshot(job_id, job, std::numeric_limits<uint64_t>::max()));
    s.events_deleted = true;
  }
  return out;
}

void LiveState::Retire(const storage::JobSnapshot& snapshot) {
  auto it = jobs_.find(snapshot.report.job_id);
  if (it == jobs_.end()) return;  // evicted: only in the store
  LiveJob& job = it->second;
  KeepForWalks(it->first, job);
  job.windows = core::JobWindows(snapshot.report.job_id, config_, grid_);
  std::vector<Pending>().swap(job.buffer);
  job.view.reset();
  job.snapshot_due = false;
  job.final = std::make_unique<storage::JobSnapshot>(snapshot);
  applied_through_ns_ = std::max(applied_through_ns_, snapshot.ended_ns);
}

absl::StatusOr<std::vector<storage::JobSnapshot>> LiveState::DeletedJobs()
    const {
  std::vector<storage::JobSnapshot> out;
  for (const auto& [job_id, job] : jobs_) {
    if (job.final && job.final->events_deleted) out.push_back(*job.final);
  }
  absl::StatusOr<std::vector<storage::JobSnapshot>> evicted =
      EvictedSnapshots();
  if (!evicted.ok()) return evicted.status();
  for (storage::JobSnapshot& s : *evicted) {
    if (s.events_deleted) out.push_back(std::move(s));
  }
  return out;
}

absl::StatusOr<std::optional<storage::JobSnapshot>> LiveState::DeletedJob(
    const std::string& job_id) const {
  std::optional<storage::JobSnapshot> out;
  if (auto it = jobs_.find(job_id); it != jobs_.end()) {
    if (it->second.final && it->second.final->events_deleted) {
      out = *it->second.final;
    }
    return out;
  }
  if (evicted_.jobs() == 0) return out;
  auto stored = EvictedSnapshot(job_id);
  if (!stored.ok()) return stored.status();
  if (*stored && (*stored)->events_deleted) out = **stored;
  return out;
}

}  // namespace goodput::server
