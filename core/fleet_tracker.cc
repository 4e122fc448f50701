#include "core/fleet_tracker.h"

#include "core/event_order.h"
#include "core/fleet_report.h"

namespace goodput::core {

absl::StatusOr<ApplyResult> FleetTracker::Apply(const v1::Event& e) {
  if (e.has_heartbeat()) {
    capacity_.Apply(e);
    return ApplyResult::kApplied;
  }
  if (e.has_exclusion()) return ApplyExclusion(e);
  if (e.job_id().empty()) {
    return absl::InvalidArgumentError("job_id: missing");
  }
  JobTracker* job = JobFor(e);
  if (!e.host().empty()) job_hosts_[e.job_id()].insert(e.host());
  return job->Apply(e);
}

JobTracker* FleetTracker::JobFor(const v1::Event& e) {
  if (last_job_ == nullptr || last_job_->job_id() != e.job_id()) {
    last_job_ = FindOrAddJob(e);
  }
  return last_job_;
}

// The event's job, created at its first event with the exclusions that
// cover it then.
JobTracker* FleetTracker::FindOrAddJob(const v1::Event& e) {
  auto [it, inserted] = jobs_.try_emplace(e.job_id());
  if (!inserted) return it->second.get();
  it->second = std::make_unique<JobTracker>(e.job_id(), config_);
  const int64_t t = EventTimeNanos(e);
  for (const Shared& x : shared_) {
    if (x.until_ns <= t) continue;
    if (x.hosts.empty() || x.hosts.count(e.host()) > 0) {
      it->second->Exclude(x.start_ns, x.until_ns).IgnoreError();  // not run
    }
  }
  if (auto early = early_.extract(e.job_id())) {
    for (const Shared& x : early.mapped()) {
      it->second->Exclude(x.start_ns, x.until_ns).IgnoreError();
    }
  }
  return it->second.get();
}

bool FleetTracker::Covers(const Shared& x, const std::string& job_id) const {
  if (x.hosts.empty()) return true;
  auto it = job_hosts_.find(job_id);
  if (it == job_hosts_.end()) return false;
  for (const std::string& host : it->second) {
    if (x.hosts.count(host) > 0) return true;
  }
  return false;
}

// A JOB exclusion goes to its job (or waits for its first event); a HOSTS
// or FLEET one to every job it covers that has not ended.
absl::StatusOr<ApplyResult> FleetTracker::ApplyExclusion(const v1::Event& e) {
  const v1::Exclusion& ex = e.exclusion();
  Shared x{EventTimeNanos(e),
           ex.until().seconds() * kNanosPerSecond + ex.until().nanos(),
           {ex.hosts().begin(), ex.hosts().end()}};
  if (ex.scope() == v1::Exclusion::JOB) {
    auto it = jobs_.find(e.job_id());
    if (it != jobs_.end()) return it->second->Apply(e);
    early_[e.job_id()].push_back(std::move(x));
    return ApplyResult::kApplied;
  }
  capacity_.Exclude(x.start_ns, x.until_ns, x.hosts);  // its hosts' capacity
  absl::Status first_error;
  for (auto& [id, job] : jobs_) {
    if (job->ended() || !Covers(x, id)) continue;
    absl::Status s = job->Exclude(x.start_ns, x.until_ns);
    if (first_error.ok()) first_error = s;
  }
  shared_.push_back(std::move(x));
  if (!first_error.ok()) return first_error;
  return ApplyResult::kApplied;
}

const JobTracker* FleetTracker::FindJob(const std::string& job_id) const {
  auto it = jobs_.find(job_id);
  return it == jobs_.end() ? nullptr : it->second.get();
}

FleetReport FleetTracker::Report(int64_t as_of_ns) const {
  std::vector<JobReport> jobs;
  jobs.reserve(jobs_.size());
  for (const auto& [id, job] : jobs_) jobs.push_back(job->Report(as_of_ns));
  return BuildFleetReport(*config_, as_of_ns, std::move(jobs),
                          capacity_.ChipSeconds(as_of_ns));
}

}  // namespace goodput::core
