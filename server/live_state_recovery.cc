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

}  // namespace

void LiveState::LoadSnapshots(std::vector<storage::JobSnapshot> snapshots) {
  for (storage::JobSnapshot& s : snapshots) {
    LiveJob& job = JobFor(s.report.job_id);
    job.newest_ns = s.ended_ns;
    job.first_ns = s.first_event_ns;
    job.ended_ns = s.ended_ns;
    // Live reports after this job's end only: earlier ones replay.
    applied_through_ns_ = std::max(applied_through_ns_, s.ended_ns);
    job.final = std::move(s);
  }
}

void LiveState::RecoverBatch(uint64_t batch_id,
                             std::vector<v1::Event>* events) {
  recovered_through_batch_ = batch_id;
  for (v1::Event& e : *events) {
    if (e.has_heartbeat()) {
      ApplyHeartbeat(e);
      continue;
    }
    LiveJob& job = JobFor(e.job_id());
    if (job.final) {
      if (job.final->events_deleted) {
        leftover_deletions_.push_back(e.job_id());
        continue;
      }
      if (batch_id <= job.final->through_batch) continue;
      job.final.reset();  // stale: rebuild from all stored events
      job.rebuild = true;
    }
    const int64_t t = core::EventTimeNanos(e);
    job.newest_ns = std::max(job.newest_ns, t);
    job.first_ns = std::min(job.first_ns, t);
    if (e.has_job_ended()) job.ended_ns = t;
    if (job.rebuild) continue;
    job.buffer.push_back(
        Pending{t, core::KindRank(e), ++arrivals_, std::move(e)});
    if (job.buffer.size() >= kRecoveryRun) RecoverFlush(&job);
  }
}

void LiveState::RecoverFlush(LiveJob* job) {
  std::sort(job->buffer.begin(), job->buffer.end(),
            [](const Pending& a, const Pending& b) {
              return std::tie(a.time_ns, a.rank, a.arrival) <
                     std::tie(b.time_ns, b.rank, b.arrival);
            });
  const Pending& first = job->buffer.front();
  if (job->last_applied &&
      std::make_pair(first.time_ns, first.rank) < *job->last_applied) {
    job->rebuild = true;  // later than the lateness, as live would see it
    job->buffer.clear();
    return;
  }
  Flush(job, job->newest_ns - lateness_ns_);
}

void LiveState::FinishRecovery() {
  for (auto& [job_id, job] : jobs_) {
    if (!job.rebuild && !job.buffer.empty()) RecoverFlush(&job);
    if (job.rebuild) Rebuild(job_id, recovered_through_batch_, &job);
    job.snapshot_due = job.ended_ns && !job.final;
  }
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

std::vector<storage::JobSnapshot> LiveState::RetirementsDue(
    int64_t horizon_ns) const {
  std::vector<storage::JobSnapshot> out;
  for (const auto& [job_id, job] : jobs_) {
    if (!job.ended_ns || *job.ended_ns >= horizon_ns) continue;
    if (job.final && job.final->events_deleted) continue;
    storage::JobSnapshot& s = out.emplace_back(
        Snapshot(job_id, job, std::numeric_limits<uint64_t>::max()));
    s.events_deleted = true;
  }
  return out;
}

void LiveState::Retire(const storage::JobSnapshot& snapshot) {
  LiveJob& job = JobFor(snapshot.report.job_id);
  job.tracker = core::JobTracker(snapshot.report.job_id, config_);
  std::vector<Pending>().swap(job.buffer);
  job.snapshot_due = false;
  job.final = snapshot;
  applied_through_ns_ = std::max(applied_through_ns_, snapshot.ended_ns);
}

std::vector<storage::JobSnapshot> LiveState::DeletedJobs() const {
  std::vector<storage::JobSnapshot> out;
  for (const auto& [job_id, job] : jobs_) {
    if (job.final && job.final->events_deleted) out.push_back(*job.final);
  }
  return out;
}

}  // namespace goodput::server
