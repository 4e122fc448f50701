// LiveState's restart recovery, snapshots and retention (see live_state.h).
#include <algorithm>
#include <tuple>

#include "core/event_order.h"
#include "server/live_state.h"

namespace goodput::server {
namespace {

// Recovery applies a job's events once this many are held back: enough to
// apply them in runs on a warm tracker, few enough to bound memory.
constexpr size_t kRecoveryRun = 32;
// Events parsed into one recovery arena before the next one starts.
constexpr int64_t kGenerationEvents = 1 << 16;
// Arena memory reserved per generation (about 200 B per event), reused.
constexpr size_t kGenerationBytes = 16 << 20;
// Slots of the recovery job cache (a power of two).
constexpr size_t kJobCacheSlots = 1 << 14;

}  // namespace

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

google::protobuf::Arena* LiveState::RecoveryArena(uint64_t) {
  if (!generations_.empty() && generations_.back()->taken < kGenerationEvents) {
    return generations_.back()->arena.get();
  }
  if (!generations_.empty()) {
    generations_.back()->sealed = true;
    if (generations_.back()->held == 0) Release(generations_.back().get());
  }
  if (spare_generations_.empty()) {
    auto g = std::make_unique<Generation>();
    g->block.reset(new char[kGenerationBytes]);
    google::protobuf::ArenaOptions options;
    options.initial_block = g->block.get();
    options.initial_block_size = kGenerationBytes;
    g->arena = std::make_unique<google::protobuf::Arena>(options);
    spare_generations_.push_back(std::move(g));
  }
  generations_.push_back(std::move(spare_generations_.back()));
  spare_generations_.pop_back();
  return generations_.back()->arena.get();
}

LiveState::LiveJob& LiveState::RecoveryJobFor(const std::string& job_id) {
  if (job_cache_.empty()) job_cache_.resize(kJobCacheSlots);
  CachedJob& slot =
      job_cache_[std::hash<std::string>()(job_id) & (kJobCacheSlots - 1)];
  if (slot.job_id != nullptr && *slot.job_id == job_id) return *slot.job;
  auto it = JobEntry(job_id);
  slot = CachedJob{&it->first, &it->second};
  return it->second;
}

void LiveState::RecoverBatch(uint64_t batch_id,
                             const std::vector<const v1::Event*>& events) {
  recovered_through_batch_ = batch_id;
  Generation* generation = generations_.back().get();
  for (const v1::Event* e : events) {
    if (e->has_heartbeat()) {
      ApplyHeartbeat(*e);
      continue;
    }
    LiveJob& job = RecoveryJobFor(e->job_id());
    ++job.generation;
    if (job.final) {
      if (job.final->events_deleted) {
        leftover_deletions_.push_back(e->job_id());
        continue;
      }
      if (batch_id <= job.final->through_batch) continue;
      job.final.reset();  // stale: rebuild from all stored events
      job.rebuild = true;
    }
    const int64_t t = core::EventTimeNanos(*e);
    job.newest_ns = std::max(job.newest_ns, t);
    job.first_ns = std::min(job.first_ns, t);
    if (e->has_job_ended()) job.ended_ns = t;
    if (job.rebuild) continue;
    job.held.push_back(Held{t, core::KindRank(*e), ++arrivals_, e, generation});
    ++generation->held;
    ++generation->taken;
    if (job.held.size() >= kRecoveryRun) RecoverFlush(&job);
  }
}

void LiveState::Release(Generation* g) {
  if (g->held > 0 && --g->held > 0) return;
  if (!g->sealed) return;
  // Sealed and empty: reuse its memory (Reset keeps the initial block).
  auto it = std::find_if(
      generations_.begin(), generations_.end(),
      [g](const std::unique_ptr<Generation>& x) { return x.get() == g; });
  g->arena->Reset();
  g->taken = 0;
  g->sealed = false;
  spare_generations_.push_back(std::move(*it));
  generations_.erase(it);
}

void LiveState::RecoverFlush(LiveJob* job) {
  std::vector<Held>& held = job->held;
  std::sort(held.begin(), held.end(), [](const Held& a, const Held& b) {
    return std::tie(a.time_ns, a.rank, a.arrival) <
           std::tie(b.time_ns, b.rank, b.arrival);
  });
  const bool late = job->last_applied &&
                    std::make_pair(held.front().time_ns, held.front().rank) <
                        *job->last_applied;
  job->rebuild = job->rebuild || late;  // as live would have seen it
  const int64_t through = job->newest_ns - lateness_ns_;
  // The held events were parsed long ago: fetch them (event, time, body
  // lie together on the arena) before the tracker walks them one by one.
  for (const Held& h : held) {
    if (h.time_ns > through) break;
    const char* p = reinterpret_cast<const char*>(h.event);
    for (int line = 0; line < 4; ++line) __builtin_prefetch(p + 64 * line);
  }
  size_t n = 0;
  for (; n < held.size(); ++n) {
    if (!job->rebuild && held[n].time_ns > through) break;
    if (!job->rebuild) {
      ApplyToTracker(job, *held[n].event, held[n].time_ns, held[n].rank);
    }
    Release(held[n].generation);
  }
  held.erase(held.begin(), held.begin() + n);
}

void LiveState::FinishRecovery() {
  for (auto& [job_id, job] : jobs_) {
    if (!job.held.empty()) RecoverFlush(&job);
    for (const Held& h : job.held) {  // within the lateness: to the buffer
      job.buffer.push_back(Pending{h.time_ns, h.rank, h.arrival, *h.event});
    }
    std::vector<Held>().swap(job.held);
    if (job.rebuild) Rebuild(job_id, recovered_through_batch_, &job);
    job.snapshot_due = job.ended_ns && !job.final;
  }
  generations_.clear();
  spare_generations_.clear();
  std::vector<CachedJob>().swap(job_cache_);
  std::sort(leftover_deletions_.begin(), leftover_deletions_.end());
  leftover_deletions_.erase(
      std::unique(leftover_deletions_.begin(), leftover_deletions_.end()),
      leftover_deletions_.end());
}

std::vector<std::string> LiveState::TakeLeftoverDeletions() {
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
  return s;
}

std::vector<storage::JobSnapshot> LiveState::TakeSnapshots(
    uint64_t through_batch) {
  std::vector<storage::JobSnapshot> out;
  for (auto& [job_id, job] : jobs_) {
    if (!job.snapshot_due) continue;
    job.snapshot_due = false;
    out.push_back(Snapshot(job_id, job, through_batch));
  }
  return out;
}

bool LiveState::EvictionDue(const LiveJob& job, int64_t grace_ns) const {
  return job.ended_ns && !job.rebuild &&
         applied_through_ns_ - *job.ended_ns > std::max(grace_ns, lateness_ns_);
}

std::vector<storage::JobSnapshot> LiveState::EvictionSnapshots(
    int64_t grace_ns, uint64_t through_batch) const {
  std::vector<storage::JobSnapshot> out;
  for (const auto& [job_id, job] : jobs_) {
    if (!job.final && EvictionDue(job, grace_ns)) {
      out.push_back(Snapshot(job_id, job, through_batch));
    }
  }
  return out;
}

void LiveState::Fold(const LiveJob& job, const storage::JobSnapshot& stored) {
  if (job.evicted) {  // counted when it was first evicted
    evicted_.Revise(job.evicted->report, stored.report, stored.ended_ns);
  } else {
    evicted_.Add(stored.report, stored.ended_ns);
  }
}

int64_t LiveState::Evict(int64_t grace_ns,
                         const std::vector<storage::JobSnapshot>& stored) {
  int64_t n = 0;
  for (const storage::JobSnapshot& s : stored) {
    auto it = jobs_.find(s.report.job_id);
    if (it == jobs_.end()) continue;
    Fold(it->second, s);
    jobs_.erase(it);
    ++n;
  }
  for (auto it = jobs_.begin(); it != jobs_.end();) {
    if (!it->second.final || !EvictionDue(it->second, grace_ns)) {
      ++it;
      continue;
    }
    Fold(it->second, *it->second.final);
    it = jobs_.erase(it);
    ++n;
  }
  return n;
}

absl::StatusOr<std::vector<storage::JobSnapshot>> LiveState::RetirementsDue(
    int64_t horizon_ns) const {
  std::vector<storage::JobSnapshot> out;
  for (const auto& [job_id, job] : jobs_) {
    if (!job.ended_ns || *job.ended_ns >= horizon_ns) continue;
    if (job.final && job.final->events_deleted) continue;
    storage::JobSnapshot& s = out.emplace_back(
        Snapshot(job_id, job, std::numeric_limits<uint64_t>::max()));
    s.events_deleted = true;
  }
  absl::StatusOr<std::vector<storage::JobSnapshot>> evicted =
      EvictedSnapshots();
  if (!evicted.ok()) return evicted.status();
  for (storage::JobSnapshot& s : *evicted) {
    if (s.events_deleted || s.ended_ns >= horizon_ns) continue;
    s.through_batch = std::numeric_limits<uint64_t>::max();
    s.events_deleted = true;
    out.push_back(std::move(s));
  }
  return out;
}

void LiveState::Retire(const storage::JobSnapshot& snapshot) {
  auto it = jobs_.find(snapshot.report.job_id);
  if (it == jobs_.end()) return;  // evicted: only in the store
  LiveJob& job = it->second;
  job.tracker = core::JobTracker(snapshot.report.job_id, config_);
  std::vector<Pending>().swap(job.buffer);
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
