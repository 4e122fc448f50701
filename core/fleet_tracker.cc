#include "core/fleet_tracker.h"

#include "core/fleet_report.h"

namespace goodput::core {

absl::StatusOr<ApplyResult> FleetTracker::Apply(const v1::Event& e) {
  if (e.has_heartbeat()) {
    capacity_.Apply(e);
    return ApplyResult::kApplied;
  }
  if (e.job_id().empty()) {
    return absl::InvalidArgumentError("job_id: missing");
  }
  auto [it, inserted] = jobs_.try_emplace(e.job_id());
  if (inserted) it->second = std::make_unique<JobTracker>(e.job_id(), config_);
  return it->second->Apply(e);
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
