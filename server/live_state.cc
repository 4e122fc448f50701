#include "server/live_state.h"

#include <algorithm>
#include <limits>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "core/event_order.h"
#include "core/fleet_report.h"

namespace goodput::server {
namespace {

// In Admit's per-batch map: a job looked up in the store that has not ended.
constexpr int64_t kNotEnded = std::numeric_limits<int64_t>::min();

absl::Status DeletedError(const std::string& job_id, int64_t ended_ns) {
  return absl::FailedPreconditionError(absl::StrCat(
      "job_id: job \"", job_id, "\" ended at ", core::FormatTimeNanos(ended_ns),
      " and its raw events were deleted by --retention; no more events "
      "are accepted for it"));
}

// Whether `job` has an event other than an exclusion at or before
// `as_of_ns`, applied or buffered: an exclusion alone makes no job
// (docs/semantics.md, "Exclusions"), as in core::FleetTracker.
template <typename Job>
bool HasJobEvent(const Job& job, int64_t as_of_ns) {
  if (job.final || job.tracker().cursor_ns() != 0) return true;
  for (const auto& p : job.buffer) {
    if (p.time_ns > as_of_ns) break;
    if (!p.event.has_exclusion()) return true;
  }
  return false;
}

absl::Status ImportedFinalError(const std::string& job_id, int64_t ended_ns) {
  return absl::FailedPreconditionError(absl::StrCat(
      "job_id: job \"", job_id, "\" ended at ", core::FormatTimeNanos(ended_ns),
      " and this instance took it over from a partition snapshot as its "
      "final report, without its raw events; no more events are accepted "
      "for it"));
}

// The fleet report walks every job, whose state is spread over the heap in
// no order, and waits on memory more than it computes (BENCHMARKS.md
// section 13), so it asks ahead for what ReportJob reads first: a job's own
// lines (PrefetchJob), then, once those are in, its buffer and the view's
// tracker (PrefetchView). No effect on results.
void PrefetchLines(const void* p, int lines) {
  for (int k = 0; k < lines; ++k) {
    __builtin_prefetch(static_cast<const char*>(p) + 64 * k);
  }
}

template <typename Job>
void PrefetchJob(const Job& job) {
  PrefetchLines(&job, 1);
  PrefetchLines(&job.tracker(), 2);
  PrefetchLines(&job.buffer, 1);
  PrefetchLines(&job.view, 1);
}

template <typename Job>
void PrefetchView(const Job& job) {
  if (!job.buffer.empty()) PrefetchLines(job.buffer.data(), 1);
  if (job.view != nullptr) PrefetchLines(&job.view->live(), 8);
}

// Prefetches the two held jobs after `it` (an iterator of LiveState's
// by_id_) in id order.
template <typename It>
void PrefetchAhead(It it, It end) {
  if (++it == end) return;
  PrefetchView(it->entry->second);
  if (++it == end) return;
  PrefetchJob(it->entry->second);
}

}  // namespace

LiveState::LiveState(const core::Config* config, int64_t lateness_ns,
                     storage::EventStore* store)
    : config_(config),
      lateness_ns_(lateness_ns),
      store_(store),
      capacity_(config) {}

absl::Status LiveState::Admit(
    const v1::Event& e,
    std::unordered_map<std::string, int64_t>* ended_in_batch,
    bool* held) const {
  *held = false;
  if (e.has_heartbeat() || SharedExclusions::IsShared(e)) {
    return absl::OkStatus();  // not a job's
  }
  const auto jt = jobs_.find(e.job_id());
  *held = jt != jobs_.end();
  std::optional<int64_t> ended;
  if (auto it = ended_in_batch->find(e.job_id()); it != ended_in_batch->end()) {
    if (it->second != kNotEnded) ended = it->second;
  } else if (jt != jobs_.end()) {
    ended = jt->second.ended_ns;
    const auto& final = jt->second.final;
    if (final && final->events_deleted) return DeletedError(e.job_id(), *ended);
    if (final && final->imported) {
      return ImportedFinalError(e.job_id(), *ended);
    }
    if (absl::Status s = AdmitImported(e, jt->second); !s.ok()) return s;
  } else if (evicted_.jobs() > 0) {  // maybe evicted: ask the store
    auto snapshot = EvictedSnapshot(e.job_id());
    if (!snapshot.ok()) return snapshot.status();
    if (*snapshot && (*snapshot)->events_deleted) {
      return DeletedError(e.job_id(), (*snapshot)->ended_ns);
    }
    if (*snapshot && (*snapshot)->imported) {
      return ImportedFinalError(e.job_id(), (*snapshot)->ended_ns);
    }
    if (*snapshot) ended = (*snapshot)->ended_ns;
    (*ended_in_batch)[e.job_id()] = ended.value_or(kNotEnded);
  }
  absl::Status s = AdmitAfterEnd(e, ended);
  if (s.ok() && e.has_job_ended()) {
    (*ended_in_batch)[e.job_id()] = core::EventTimeNanos(e);
  }
  return s;
}

absl::Status LiveState::AdmitImported(const v1::Event& e, const LiveJob& job) {
  const int64_t t = core::EventTimeNanos(e);
  if (!job.import_floor ||
      std::make_pair(t, core::KindRank(e)) >= *job.import_floor) {
    return absl::OkStatus();
  }
  return absl::FailedPreconditionError(absl::StrCat(
      "job_id: job \"", e.job_id(), "\": the event at ",
      core::FormatTimeNanos(t),
      " is older than the state this instance took the job over with from a "
      "partition snapshot (",
      core::FormatTimeNanos(job.import_floor->first),
      "); the job's raw events before it are not here to rebuild it"));
}

absl::Status LiveState::AdmitAfterEnd(const v1::Event& e,
                                      std::optional<int64_t> ended) const {
  const int64_t t = core::EventTimeNanos(e);
  if (ended && (t > *ended || e.has_job_ended())) {
    return absl::FailedPreconditionError(absl::StrCat(
        "job_id: job \"", e.job_id(), "\" ended at ",
        core::FormatTimeNanos(*ended), "; later events are rejected"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::optional<storage::JobSnapshot>> LiveState::EvictedSnapshot(
    const std::string& job_id) const {
  std::optional<storage::JobSnapshot> snapshot;
  absl::Status s = store_->ReadSnapshot(job_id, &snapshot);
  if (!s.ok()) {
    return absl::Status(
        s.code(), absl::StrCat("job_id: job \"", job_id,
                               "\": reading its snapshot: ", s.message()));
  }
  return snapshot;
}

void LiveState::Revive(const std::string& job_id, LiveJob* job) {
  auto snapshot = EvictedSnapshot(job_id);
  if (!snapshot.ok()) {  // rebuild from what the store has
    ++stats_.apply_errors;
    job->rebuild = true;
    return;
  }
  if (!*snapshot) return;  // a new job
  const storage::JobSnapshot& s = **snapshot;
  job->newest_ns = s.ended_ns;
  job->first_ns = s.first_event_ns;
  job->ended_ns = s.ended_ns;
  job->rebuild = true;
  job->evicted = std::make_unique<storage::JobSnapshot>(s);
}

void LiveState::ApplyBatch(uint64_t batch_id, std::vector<v1::Event>* events) {
  last_batch_id_ = batch_id;
  ++apply_round_;
  std::vector<std::pair<const std::string*, LiveJob*>> touched;
  for (v1::Event& e : *events) {
    if (SharedExclusions::IsShared(e)) {
      TakeShared(e, &touched);
      continue;
    }
    auto taken = Take(&e);
    if (taken.second != nullptr) touched.push_back(taken);
  }
  Spent spent{events};
  for (auto& [job_id, job] : touched) {
    if (job->touched_round == apply_round_) continue;  // seen in this batch
    job->touched_round = apply_round_;
    if (job->rebuild && !job->queued) {
      job->queued = true;
      ++stats_.rebuilds_pending;
      rebuild_queue_.push_back(*job_id);
    } else if (!job->rebuild) {
      Flush(job, job->newest_ns - lateness_ns_, &spent);
    }
    if (job->ended_ns) MarkSnapshotDue(*job_id, job);
    NoteTaken(job_id, job);
  }
  // Credit for rebuilds: the events this batch carried. A rebuild's cost
  // is about kRebuildReadWeight ingested events per stored event it reads
  // (BENCHMARKS.md section 17, the late storm), so queued rebuilds take at
  // most about half of ingest's time.
  rebuild_credit_ =
      rebuild_queue_.empty()
          ? 0
          : rebuild_credit_ + static_cast<int64_t>(events->size());
  RunRebuilds(&rebuild_credit_, kRebuildReadWeight);
  if (capacity_stale_) RebuildCapacity();
}

void LiveState::RunRebuilds(int64_t* credit, int64_t weight) {
  while (!rebuild_queue_.empty() && *credit > 0) {
    const int64_t read_before = stats_.restored_events;
    const std::string job_id = std::move(rebuild_queue_.front());
    rebuild_queue_.pop_front();
    auto it = jobs_.find(job_id);
    if (it == jobs_.end() || !it->second.queued) continue;  // done already
    it->second.queued = false;
    --stats_.rebuilds_pending;
    Rebuild(it->first, last_batch_id_, &it->second);
    NoteTaken(&it->first, &it->second);
    *credit -=
        weight * std::max<int64_t>(1, stats_.restored_events - read_before);
  }
}

void LiveState::FinishRebuilds() {
  int64_t unlimited = std::numeric_limits<int64_t>::max();
  RunRebuilds(&unlimited, 1);
}

int64_t LiveState::DrainRebuilds(int64_t budget) {
  RunRebuilds(&budget, 1);
  return stats_.rebuilds_pending;
}

void LiveState::MarkSnapshotDue(const std::string& job_id, LiveJob* job) {
  if (job->snapshot_due) return;
  job->snapshot_due = true;
  snapshot_due_.push_back(job_id);
}

void LiveState::NoteTaken(const std::string* job_id, LiveJob* job) {
  if (job->state_due || job->final || !StateDue(*job)) return;
  job->state_due = true;
  state_due_.emplace_back(job_id, job);
}

bool LiveState::StateDue(const LiveJob& job) const {
  if (job.since_state == 0) return false;
  // Before its first record, a job's event time counts from its first event.
  const int64_t since_ns =
      job.state_newest_ns != 0 ? job.state_newest_ns : job.first_ns;
  return job.since_state >= policy_.every_events ||
         job.newest_ns - since_ns >= policy_.every_ns;
}

std::pair<const std::string*, LiveState::LiveJob*> LiveState::Take(
    v1::Event* e) {
  if (e->has_heartbeat()) {
    ApplyHeartbeat(*e);
    return {nullptr, nullptr};
  }
  auto it = jobs_.find(e->job_id());
  if (it == jobs_.end()) {
    it = JobEntry(e->job_id());
    if (evicted_.jobs() > 0) Revive(it->first, &it->second);
  }
  LiveJob& job = it->second;
  KeepForWalks(it->first, job);
  ++job.generation;
  ++job.since_state;
  const int64_t t = core::EventTimeNanos(*e);
  job.newest_ns = std::max(job.newest_ns, t);
  job.first_ns = std::min(job.first_ns, t);
  if (e->has_job_ended()) job.ended_ns = t;
  if (job.final) {  // an event before the end: replay the job
    job.final.reset();
    job.rebuild = true;
  }
  if (!job.rebuild && IsLate(job, t, core::KindRank(*e))) job.rebuild = true;
  if (!job.rebuild) Buffer(&job, e);  // else the store has it
  return {&it->first, &job};
}

LiveState::JobMap::iterator LiveState::JobEntry(const std::string& job_id) {
  auto it = jobs_.find(job_id);
  if (it == jobs_.end()) {
    it =
        jobs_.emplace(job_id, LiveJob(core::JobWindows(job_id, config_, grid_)))
            .first;
    it->second.born = next_born_++;
    by_id_.insert(JobRef{&*it, it->second.born});
  }
  return it;
}

LiveState::LiveJob& LiveState::JobFor(const std::string& job_id) {
  return JobEntry(job_id)->second;
}

void LiveState::ApplyHeartbeat(const v1::Event& e) {
  const int64_t t = core::EventTimeNanos(e);
  auto [it, inserted] = host_last_ns_.try_emplace(e.host(), t);
  if (!inserted && t < it->second) {
    ++stats_.heartbeats_dropped;
    return;
  }
  it->second = t;
  newest_beat_ns_ = std::max(newest_beat_ns_, t);
  capacity_.Apply(e);
  applied_through_ns_ = std::max(applied_through_ns_, t);
}

void LiveState::TakeShared(
    const v1::Event& e,
    std::vector<std::pair<const std::string*, LiveJob*>>* touched) {
  const int64_t t = core::EventTimeNanos(e);
  const int64_t until = SharedExclusions::UntilNanos(e);
  if (!walks_.empty()) {  // before `e` is pending for any job (rare)
    for (const auto& [id, job] : jobs_) KeepForWalksSlow(id, job);
  }
  KeepShared(e, last_batch_id_);
  for (auto& [id, job] : jobs_) {
    if (job.ended_ns && *job.ended_ns <= t) continue;  // ended before it
    if (job.final) {  // held as its final snapshot: replay the job
      if (job.final->events_deleted || job.first_ns >= until) continue;
      job.final.reset();
      job.rebuild = true;
    } else if (!job.rebuild && IsLate(job, t, core::KindRank(e))) {
      if (!SharedExclusions::MayCover(e, &job.all_hosts)) continue;
      job.rebuild = true;  // rewrites its history (rule 8)
    }
    job.view.reset();  // a shared exclusion is pending for it
    ++job.generation;
    touched->emplace_back(&id, &job);
  }
  if (evicted_.jobs() > 0) ReviveCovered(e, touched);
}

void LiveState::KeepShared(const v1::Event& e, uint64_t batch) {
  shared_.Add(e, batch);
  if (core::EventTimeNanos(e) < newest_beat_ns_) {
    capacity_stale_ = true;
  } else {
    SharedExclusions::ExcludeOne(e, &capacity_);
  }
}

void LiveState::RebuildCapacity() {
  capacity_stale_ = false;
  const uint64_t after = CapacityRebuildStart();
  shared_.ExcludeFrom(&capacity_);
  absl::Status s = store_->ScanHeartbeatsAfter(
      after, [this](uint64_t, std::vector<v1::Event>* beats) {
        for (const v1::Event& e : *beats) {
          if (e.has_heartbeat()) ApplyHeartbeat(e);
        }
        return absl::OkStatus();
      });
  if (!s.ok()) ++stats_.apply_errors;
}

void LiveState::ReviveCovered(
    const v1::Event& e,
    std::vector<std::pair<const std::string*, LiveJob*>>* touched) {
  const int64_t t = core::EventTimeNanos(e);
  const int64_t until = SharedExclusions::UntilNanos(e);
  absl::StatusOr<std::vector<storage::JobSnapshot>> evicted =
      EvictedSnapshots();
  if (!evicted.ok()) {
    ++stats_.apply_errors;
    return;
  }
  for (const storage::JobSnapshot& s : *evicted) {
    if (s.events_deleted || s.ended_ns <= t || s.first_event_ns >= until) {
      continue;  // it cannot cover the job
    }
    auto it = JobEntry(s.report.job_id);  // (TakeShared kept it for walks)
    Revive(it->first, &it->second);
    touched->emplace_back(&it->first, &it->second);
  }
}

bool LiveState::IsLate(const LiveJob& job, int64_t t, int rank) const {
  return job.last_applied && std::make_pair(t, rank) < *job.last_applied;
}

void LiveState::Buffer(LiveJob* job, v1::Event* e) {
  const int64_t t = core::EventTimeNanos(*e);
  const int rank = core::KindRank(*e);
  // After every buffered event of an equal (time, rank): arrivals grow.
  auto pos = std::upper_bound(
      job->buffer.begin(), job->buffer.end(), std::make_pair(t, rank),
      [](const std::pair<int64_t, int>& key, const Pending& x) {
        return key < std::make_pair(x.time_ns, x.rank);
      });
  Pending& p = *job->buffer.emplace(pos);
  p.time_ns = t;
  p.rank = rank;
  p.arrival = ++arrivals_;
  p.event.Swap(e);
  job->view.reset();
}

std::optional<int64_t> LiveState::SharedFrom(const LiveJob& job) const {
  if (job.last_applied) return job.last_applied->first;
  if (!job.buffer.empty()) return job.buffer.front().time_ns;
  return std::nullopt;
}

template <typename Fn>
void LiveState::ForEachPending(const LiveJob& job, int64_t through_ns,
                               Fn fn) const {
  const std::optional<int64_t> from = SharedFrom(job);
  const std::vector<const v1::Event*> shared =
      from ? shared_.Between(*from, through_ns)
           : std::vector<const v1::Event*>();
  size_t n = 0, k = 0;
  while (true) {
    const bool buffered =
        n < job.buffer.size() && job.buffer[n].time_ns <= through_ns;
    if (!buffered && k == shared.size()) return;
    if (k < shared.size()) {
      const v1::Event& x = *shared[k];
      const auto key =
          std::make_pair(core::EventTimeNanos(x), core::KindRank(x));
      if (!buffered ||
          key < std::make_pair(job.buffer[n].time_ns, job.buffer[n].rank)) {
        fn(x, key.first, key.second, false);
        ++k;
        continue;
      }
    }
    const Pending& p = job.buffer[n++];
    fn(p.event, p.time_ns, p.rank, true);
  }
}

bool LiveState::PendingBy(const LiveJob& job, int64_t as_of_ns,
                          bool all) const {
  const std::optional<int64_t> from = SharedFrom(job);
  if (all) {
    return (job.buffer.empty() || job.buffer.back().time_ns <= as_of_ns) &&
           (!from || shared_.LastStart() <= as_of_ns);
  }
  return (!job.buffer.empty() && job.buffer.front().time_ns <= as_of_ns) ||
         (from && shared_.AnyBetween(*from, as_of_ns));
}

template <typename Tracker>
Tracker LiveState::WithPending(const LiveJob& job, const Tracker& live,
                               int64_t as_of_ns) const {
  Tracker copy = live;
  std::set<std::string> hosts = job.all_hosts;
  ForEachPending(job, as_of_ns, [&](const v1::Event& e, int64_t, int, bool) {
    (void)shared_.Apply(e, &hosts, &copy);
  });
  return copy;
}

void LiveState::Flush(LiveJob* job, int64_t through_ns, Spent* spent) {
  std::vector<std::tuple<const v1::Event*, int64_t, int>>& due = flush_due_;
  due.clear();
  size_t n = 0;  // buffered events among them
  ForEachPending(*job, through_ns,
                 [&](const v1::Event& e, int64_t t, int rank, bool buffered) {
                   due.emplace_back(&e, t, rank);
                   n += buffered ? 1 : 0;
                 });
  for (const auto& [e, t, rank] : due) ApplyToTracker(job, *e, t, rank);
  if (spent != nullptr) {
    std::vector<v1::Event>& out = *spent->events;
    for (size_t i = 0; i < n; ++i) {
      if (spent->next == out.size()) out.emplace_back();
      out[spent->next++].Swap(&job->buffer[i].event);
    }
  }
  job->buffer.erase(job->buffer.begin(), job->buffer.begin() + n);
  if (!due.empty()) job->view.reset();
}

std::vector<std::string> LiveState::HostsOf(const std::string& job_id) const {
  auto it = jobs_.find(job_id);
  if (it == jobs_.end()) return {};
  return it->second.hosts.Current();
}

void LiveState::ApplyToTracker(LiveJob* job, const v1::Event& e, int64_t t,
                               int rank) {
  const bool shared = SharedExclusions::IsShared(e);
  if (!shared) job->hosts.Add(e.host(), t);
  auto result = shared_.Apply(e, &job->all_hosts, &job->windows);
  if (!shared) {
    ++stats_.applied;
    ++job->applied_events;
  }
  if (!result.ok()) ++stats_.apply_errors;
  if (result.ok() && *result == core::ApplyResult::kDuplicate) {
    ++stats_.duplicates;
  }
  job->last_applied = std::make_pair(t, rank);
  applied_through_ns_ = std::max(applied_through_ns_, t);
}

void LiveState::Rebuild(const std::string& job_id, uint64_t through_batch,
                        LiveJob* job) {
  KeepForWalks(job_id, *job);
  ++stats_.late_rebuilds;
  Restore(job_id, through_batch, job);
}

core::JobReport LiveState::ReportJob(const LiveJob& job,
                                     int64_t as_of_ns) const {
  if (job.final) return job.final->report;  // as_of_ns is after its end
  if (!PendingBy(job, as_of_ns, /*all=*/false)) {
    return job.tracker().Report(as_of_ns);
  }
  if (PendingBy(job, as_of_ns, /*all=*/true)) {
    return View(job).live().Report(as_of_ns);
  }
  return WithPending(job, job.tracker(), as_of_ns).Report(as_of_ns);
}

const core::JobWindows& LiveState::View(const LiveJob& job) const {
  if (job.view == nullptr) {
    job.view = std::make_unique<core::JobWindows>(
        WithPending(job, job.windows, std::numeric_limits<int64_t>::max()));
  }
  return *job.view;
}

absl::StatusOr<core::FleetReport> LiveState::Report(
    int64_t as_of_ns, core::FleetSegments segments) const {
  HeldReport held = Held(as_of_ns);
  absl::StatusOr<std::vector<storage::JobSnapshot>> evicted =
      EvictedSnapshots();
  if (!evicted.ok()) return evicted.status();
  for (storage::JobSnapshot& s : *evicted) {
    held.jobs.push_back(std::move(s.report));
  }
  return core::BuildFleetReport(*config_, as_of_ns, std::move(held.jobs),
                                held.capacity, segments);
}

LiveState::HeldReport LiveState::Held(int64_t as_of_ns) const {
  Walk walk;
  StartWalk(as_of_ns, std::nullopt, &walk);
  // Cannot fail without a window.
  (void)WalkSome(&walk, std::numeric_limits<size_t>::max());
  return TakeHeld(&walk);
}

absl::StatusOr<std::optional<core::JobReport>> LiveState::FinalInWindow(
    const storage::JobSnapshot& s, int64_t edge_ns) {
  if (edge_ns >= s.ended_ns) return std::nullopt;
  if (edge_ns <= s.first_event_ns) return s.report;
  return absl::FailedPreconditionError(
      absl::StrCat("job ", s.report.job_id, " is held as its final snapshot"));
}

absl::StatusOr<std::optional<core::JobReport>> LiveState::WindowJob(
    const LiveJob& job, int64_t as_of_ns, const core::Config& windowed) const {
  if (job.final) return FinalInWindow(*job.final, windowed.since_ns);
  absl::StatusOr<core::JobReport> r;
  if (!PendingBy(job, as_of_ns, /*all=*/false)) {
    r = job.windows.Report(as_of_ns, &windowed);
  } else if (PendingBy(job, as_of_ns, /*all=*/true)) {
    r = View(job).Report(as_of_ns, &windowed);
  } else {
    r = WithPending(job, job.windows, as_of_ns).Report(as_of_ns, &windowed);
  }
  if (!r.ok()) return r.status();
  return *std::move(r);
}

void LiveState::StartWalk(int64_t as_of_ns, std::optional<int64_t> edge_ns,
                          Walk* walk) const {
  walk->as_of_ns = as_of_ns;
  if (edge_ns) {
    walk->windowed = *config_;
    walk->windowed->since_ns = *edge_ns;
  } else {
    walk->capacity = capacity_.ChipSeconds(as_of_ns);
  }
  walk->born_limit = next_born_;
  if (evicted_.jobs() > 0) walk->parts.evicted = EvictedAtCut(last_batch_id_);
  walk->parts.jobs.reserve(by_id_.size());
}

std::unique_ptr<LiveState::Walk> LiveState::BeginWalk(
    int64_t as_of_ns, std::optional<int64_t> edge_ns) {
  auto walk = std::make_unique<Walk>();
  StartWalk(as_of_ns, edge_ns, walk.get());
  walks_.push_back(walk.get());
  return walk;
}

void LiveState::EndWalk(Walk* walk) {
  walks_.erase(std::remove(walks_.begin(), walks_.end(), walk), walks_.end());
}

absl::StatusOr<bool> LiveState::WalkSome(Walk* walk, size_t n) const {
  absl::Status s =
      Advance(walk, n,
              [&](const std::string& id, WalkAnswer* kept, const LiveJob* job) {
                return TakeAnswer(
                    id, kept ? std::move(*kept) : AnswerOf(*job, *walk), walk);
              });
  if (!s.ok()) return s;
  return walk->done;
}

absl::Status LiveState::Advance(
    Walk* walk, size_t n,
    const std::function<absl::Status(const std::string&, WalkAnswer*,
                                     const LiveJob*)>& take) const {
  auto job = walk->started ? by_id_.upper_bound(walk->last_id) : by_id_.begin();
  auto kept = walk->started ? walk->kept.upper_bound(walk->last_id)
                            : walk->kept.begin();
  auto in_cut = [&] {  // skips the jobs that came after the cut
    while (job != by_id_.end() && job->born >= walk->born_limit) ++job;
    return job != by_id_.end();
  };
  const std::string* id = nullptr;
  absl::Status s;
  for (size_t i = 0; i < n && s.ok(); ++i) {
    const bool held = in_cut();
    if (kept != walk->kept.end() &&
        (!held || kept->first <= job->entry->first)) {
      // Changed or dropped since the cut: ingest kept its answer.
      if (held && kept->first == job->entry->first) ++job;
      id = &kept->first;
      s = take(*id, &kept->second, nullptr);
      ++kept;
    } else if (held) {
      if (walk->kept.empty()) PrefetchAhead(job, by_id_.end());
      id = &job->entry->first;
      s = take(*id, nullptr, &job->entry->second);
      ++job;
    } else {
      break;
    }
  }
  if (id != nullptr) {
    walk->started = true;
    walk->last_id = *id;
  }
  walk->done = s.ok() && !in_cut() && kept == walk->kept.end();
  return s;
}

std::unique_ptr<LiveState::Walk> LiveState::BeginScrape() {
  auto walk = std::make_unique<Walk>();
  walk->scrape = true;
  walk->born_limit = next_born_;
  walks_.push_back(walk.get());
  return walk;
}

bool LiveState::ScrapeSome(Walk* walk, size_t n, const ScrapeFns& fns) const {
  (void)Advance(
      walk, n,
      [&](const std::string& id, WalkAnswer* kept, const LiveJob* job) {
        TellScrape(id, kept ? kept->scrape : ScrapeJobOf(*job), fns);
        return absl::OkStatus();
      });
  return walk->done;
}

LiveState::ScrapeJob LiveState::ScrapeJobOf(const LiveJob& job) const {
  ScrapeJob s;
  s.generation = job.generation;
  if (job.final) {
    s.kind = ScrapeJob::Kind::kFinal;
    s.final = job.final.get();
  } else if (job.evicted ||
             !HasJobEvent(job, std::numeric_limits<int64_t>::max())) {
    s.kind = ScrapeJob::Kind::kSkip;  // counted by other means, or not yet
  } else if (job.rebuild) {
    s.kind = ScrapeJob::Kind::kWaits;
  } else {
    s.kind = ScrapeJob::Kind::kTracker;
    s.tracker = !job.ended_ns || job.buffer.empty() ? &job.tracker()
                                                    : &View(job).live();
  }
  return s;
}

LiveState::WalkAnswer LiveState::KeptScrapeJob(const LiveJob& job) const {
  WalkAnswer a;
  a.scrape = ScrapeJobOf(job);
  if (a.scrape.tracker != nullptr) {
    a.tracker = std::make_unique<const core::JobTracker>(*a.scrape.tracker);
    a.scrape.tracker = a.tracker.get();
  }
  if (a.scrape.final != nullptr) {
    a.final = std::make_unique<const storage::JobSnapshot>(*a.scrape.final);
    a.scrape.final = a.final.get();
  }
  return a;
}

void LiveState::TellScrape(const std::string& job_id, const ScrapeJob& job,
                           const ScrapeFns& fns) {
  switch (job.kind) {
    case ScrapeJob::Kind::kSkip:
      return;
    case ScrapeJob::Kind::kWaits:
      return fns.waits(job_id);
    case ScrapeJob::Kind::kFinal:
      if (fns.changed(job_id, job.generation)) fns.final(*job.final);
      return;
    case ScrapeJob::Kind::kTracker:
      if (fns.changed(job_id, job.generation)) fns.job(*job.tracker);
      return;
  }
}

LiveState::WalkAnswer LiveState::AnswerOf(const LiveJob& job,
                                          const Walk& walk) const {
  if (walk.scrape) return KeptScrapeJob(job);
  WalkAnswer a;
  if (walk.windowed && job.rebuild) {
    a.waits_rebuild = true;
  } else if (!HasJobEvent(job, walk.as_of_ns)) {
    a.report = std::nullopt;
  } else if (walk.windowed) {
    a.report = WindowJob(job, walk.as_of_ns, *walk.windowed);
  } else {
    a.report = ReportJob(job, walk.as_of_ns);
  }
  return a;
}

absl::Status LiveState::TakeAnswer(const std::string& job_id, WalkAnswer answer,
                                   Walk* walk) {
  if (answer.waits_rebuild) {
    return absl::FailedPreconditionError(
        absl::StrCat("job ", job_id, " waits for its rebuild"));
  }
  return TakeWindow(job_id, std::move(answer.report), &walk->parts);
}

void LiveState::KeepForWalksSlow(const std::string& job_id,
                                 const LiveJob& job) {
  for (Walk* walk : walks_) {
    if (job.born >= walk->born_limit) continue;              // not in its cut
    if (walk->started && job_id <= walk->last_id) continue;  // reported
    if (walk->kept.count(job_id) > 0) continue;  // kept as of the cut
    walk->kept.emplace(job_id, AnswerOf(job, *walk));
  }
}

LiveState::HeldReport LiveState::TakeHeld(Walk* walk) {
  return HeldReport{std::move(walk->parts.jobs), std::move(walk->capacity),
                    std::move(walk->parts.evicted)};
}

LiveState::WindowParts LiveState::TakeParts(Walk* walk) {
  return std::move(walk->parts);
}

absl::Status LiveState::TakeWindow(
    const std::string& job_id,
    absl::StatusOr<std::optional<core::JobReport>> report, WindowParts* parts) {
  if (absl::IsFailedPrecondition(report.status())) {
    parts->from_store.push_back(job_id);  // the window cuts it: the store
  } else if (!report.ok()) {
    return report.status();
  } else if (*report) {
    parts->jobs.push_back(**std::move(report));
  } else {
    parts->evicted.AddHeld(job_id);  // held, and not in the window
  }
  return absl::OkStatus();
}

absl::StatusOr<std::optional<core::JobReport>> LiveState::ReportOne(
    const std::string& job_id, int64_t as_of_ns) {
  std::optional<core::JobReport> out;
  if (auto it = jobs_.find(job_id); it != jobs_.end()) {
    LiveJob& job = it->second;
    if (job.rebuild) {  // leaves the queue: RunRebuilds skips it
      if (job.queued) --stats_.rebuilds_pending;
      job.queued = false;
      Rebuild(it->first, last_batch_id_, &job);
    }
    if (HasJobEvent(job, as_of_ns)) out = ReportJob(job, as_of_ns);
    return out;
  }
  if (evicted_.jobs() == 0) return out;
  auto snapshot = EvictedSnapshot(job_id);
  if (!snapshot.ok()) return snapshot.status();
  if (*snapshot) out = std::move((*snapshot)->report);
  return out;
}

absl::StatusOr<std::vector<storage::JobSnapshot>> LiveState::EvictedSnapshots()
    const {
  std::vector<storage::JobSnapshot> stored;
  if (evicted_.jobs() == 0) return stored;
  if (absl::Status s = store_->ReadSnapshots(&stored); !s.ok()) return s;
  stored.erase(std::remove_if(stored.begin(), stored.end(),
                              [this](const storage::JobSnapshot& s) {
                                return jobs_.count(s.report.job_id) > 0;
                              }),
               stored.end());
  return stored;
}

}  // namespace goodput::server
