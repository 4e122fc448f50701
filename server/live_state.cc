#include "server/live_state.h"

#include <algorithm>
#include <limits>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "core/event_order.h"
#include "core/fleet_report.h"

namespace goodput::server {

LiveState::LiveState(const core::Config* config, int64_t lateness_ns,
                     storage::EventStore* store)
    : config_(config),
      lateness_ns_(lateness_ns),
      store_(store),
      capacity_(config) {}

absl::Status LiveState::Admit(
    const v1::Event& e,
    std::unordered_map<std::string, int64_t>* ended_in_batch) const {
  if (e.has_heartbeat()) return absl::OkStatus();
  std::optional<int64_t> ended;
  if (auto it = jobs_.find(e.job_id()); it != jobs_.end()) {
    ended = it->second.ended_ns;
    if (it->second.final && it->second.final->events_deleted) {
      return absl::FailedPreconditionError(absl::StrCat(
          "job_id: job \"", e.job_id(), "\" ended at ",
          core::FormatTimeNanos(*ended),
          " and its raw events were deleted by --retention; no more events "
          "are accepted for it"));
    }
  }
  if (auto it = ended_in_batch->find(e.job_id()); it != ended_in_batch->end()) {
    ended = it->second;
  }
  const int64_t t = core::EventTimeNanos(e);
  if (ended && (t > *ended || e.has_job_ended())) {
    return absl::FailedPreconditionError(absl::StrCat(
        "job_id: job \"", e.job_id(), "\" ended at ",
        core::FormatTimeNanos(*ended), "; later events are rejected"));
  }
  if (e.has_job_ended()) (*ended_in_batch)[e.job_id()] = t;
  return absl::OkStatus();
}

void LiveState::ApplyBatch(uint64_t batch_id, std::vector<v1::Event>* events) {
  std::vector<std::pair<const std::string*, LiveJob*>> touched;
  for (v1::Event& e : *events) {
    auto taken = Take(&e);
    if (taken.second != nullptr) touched.push_back(taken);
  }
  for (auto& [job_id, job] : touched) {
    if (job->rebuild) {
      Rebuild(*job_id, batch_id, job);
    } else {
      Flush(job, job->newest_ns - lateness_ns_);
    }
    job->snapshot_due = job->ended_ns.has_value();
  }
}

std::pair<const std::string*, LiveState::LiveJob*> LiveState::Take(
    v1::Event* e) {
  if (e->has_heartbeat()) {
    ApplyHeartbeat(*e);
    return {nullptr, nullptr};
  }
  auto it = JobEntry(e->job_id());
  LiveJob& job = it->second;
  ++job.generation;
  const int64_t t = core::EventTimeNanos(*e);
  job.newest_ns = std::max(job.newest_ns, t);
  job.first_ns = std::min(job.first_ns, t);
  if (e->has_job_ended()) job.ended_ns = t;
  if (job.final) {  // an event before the end: replay the job
    job.final.reset();
    job.rebuild = true;
  }
  if (!job.rebuild && IsLate(job, t, core::KindRank(*e))) job.rebuild = true;
  if (!job.rebuild) Buffer(&job, std::move(*e));  // else the store has it
  return {&it->first, &job};
}

LiveState::JobMap::iterator LiveState::JobEntry(const std::string& job_id) {
  auto it = jobs_.find(job_id);
  if (it == jobs_.end()) {
    it =
        jobs_.emplace(job_id, LiveJob(core::JobTracker(job_id, config_))).first;
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
  capacity_.Apply(e);
  applied_through_ns_ = std::max(applied_through_ns_, t);
}

bool LiveState::IsLate(const LiveJob& job, int64_t t, int rank) const {
  return job.last_applied && std::make_pair(t, rank) < *job.last_applied;
}

void LiveState::Buffer(LiveJob* job, v1::Event e) {
  Pending p{core::EventTimeNanos(e), core::KindRank(e), ++arrivals_,
            std::move(e)};
  auto key = [](const Pending& x) {
    return std::tie(x.time_ns, x.rank, x.arrival);
  };
  auto pos = std::upper_bound(
      job->buffer.begin(), job->buffer.end(), p,
      [&](const Pending& a, const Pending& b) { return key(a) < key(b); });
  job->buffer.insert(pos, std::move(p));
}

void LiveState::Flush(LiveJob* job, int64_t through_ns) {
  size_t n = 0;
  for (; n < job->buffer.size(); ++n) {
    const Pending& p = job->buffer[n];
    if (p.time_ns > through_ns) break;
    ApplyToTracker(job, p.event, p.time_ns, p.rank);
  }
  job->buffer.erase(job->buffer.begin(), job->buffer.begin() + n);
}

void LiveState::ApplyToTracker(LiveJob* job, const v1::Event& e, int64_t t,
                               int rank) {
  auto result = job->tracker.Apply(e);
  ++stats_.applied;
  if (!result.ok()) ++stats_.apply_errors;
  if (result.ok() && *result == core::ApplyResult::kDuplicate) {
    ++stats_.duplicates;
  }
  job->last_applied = std::make_pair(t, rank);
  applied_through_ns_ = std::max(applied_through_ns_, t);
}

void LiveState::Rebuild(const std::string& job_id, uint64_t through_batch,
                        LiveJob* job) {
  ++stats_.late_rebuilds;
  job->rebuild = false;
  std::vector<v1::Event> events;
  absl::Status s = store_->ReadJob(job_id, through_batch, &events);
  if (!s.ok()) ++stats_.apply_errors;
  job->tracker = core::JobTracker(job_id, config_);
  job->final.reset();
  job->buffer.clear();
  job->last_applied.reset();
  for (v1::Event& e : events) Buffer(job, std::move(e));
  Flush(job, job->newest_ns - lateness_ns_);
}

core::JobReport LiveState::ReportJob(const LiveJob& job,
                                     int64_t as_of_ns) const {
  if (job.final) return job.final->report;  // as_of_ns is after its end
  if (job.buffer.empty() || job.buffer.front().time_ns > as_of_ns) {
    return job.tracker.Report(as_of_ns);
  }
  core::JobTracker copy = job.tracker;
  for (const Pending& p : job.buffer) {
    if (p.time_ns > as_of_ns) break;
    (void)copy.Apply(p.event);
  }
  return copy.Report(as_of_ns);
}

void LiveState::ForEachJob(
    const std::function<bool(const std::string&, uint64_t)>& changed,
    const std::function<void(const core::JobTracker&)>& fn) const {
  for (const auto& [id, job] : jobs_) {
    if (job.final) continue;  // ended, held as its final report alone
    if (!changed(id, job.generation)) continue;
    if (!job.ended_ns || job.buffer.empty()) {
      fn(job.tracker);
      continue;
    }
    core::JobTracker copy = job.tracker;
    for (const Pending& p : job.buffer) (void)copy.Apply(p.event);
    fn(copy);
  }
}

void LiveState::ForEachFinalJob(
    const std::function<bool(const std::string&, uint64_t)>& changed,
    const std::function<void(const storage::JobSnapshot&)>& fn) const {
  for (const auto& [id, job] : jobs_) {
    if (job.final && changed(id, job.generation)) fn(*job.final);
  }
}

core::FleetReport LiveState::Report(int64_t as_of_ns) const {
  std::vector<core::JobReport> jobs;
  jobs.reserve(jobs_.size());
  for (const auto& [id, job] : jobs_) {
    if (!job.final && !job.last_applied &&
        (job.buffer.empty() || job.buffer.front().time_ns > as_of_ns)) {
      continue;  // nothing of this job at or before as_of
    }
    jobs.push_back(ReportJob(job, as_of_ns));
  }
  return core::BuildFleetReport(*config_, as_of_ns, std::move(jobs),
                                capacity_.ChipSeconds(as_of_ns));
}

}  // namespace goodput::server
