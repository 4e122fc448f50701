#include "core/fleet_tracker.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace goodput::core {
namespace {

// Adds one job's numbers, weighted by its chips, to `t`.
void AddJob(const JobReport& job, Totals* t) {
  ++t->jobs;
  if (job.chips <= 0) {
    ++t->jobs_without_chips;
    return;
  }
  const double w = static_cast<double>(job.chips) / kNanosPerSecond;
  for (int c = 0; c < kNumCategories; ++c) {
    t->chip_seconds[c] += static_cast<double>(job.nanos[c]) * w;
  }
  t->total_chip_seconds += static_cast<double>(job.total_ns) * w;
  t->ideal_chip_seconds += job.ideal_seconds * static_cast<double>(job.chips);
  t->costed_productive_chip_seconds +=
      static_cast<double>(job.costed_productive_ns) * w;
}

std::string OrUnknown(const std::string& s) {
  return s.empty() ? "unknown" : s;
}

}  // namespace

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

std::string FleetTracker::SizeBucket(int64_t chips) const {
  if (chips <= 0) return "unknown";
  for (int64_t bound : config_->size_buckets) {
    if (chips <= bound) return absl::StrCat("<=", bound);
  }
  if (config_->size_buckets.empty()) return "all";
  return absl::StrCat(">", config_->size_buckets.back());
}

void FleetTracker::AddToSegments(const JobReport& job,
                                 FleetReport* report) const {
  auto& seg = report->segments;
  AddJob(job, &seg["accelerator"][OrUnknown(job.accelerator)]);
  AddJob(job, &seg["workload"][v1::JobSubmitted::Workload_Name(job.workload)]);
  AddJob(job, &seg["framework"][OrUnknown(job.framework)]);
  AddJob(job, &seg["size"][SizeBucket(job.chips)]);
  for (const auto& [key, value] : job.labels) {
    AddJob(job, &seg[absl::StrCat("label:", key)][value]);
  }
}

void FleetTracker::AddCapacity(int64_t as_of_ns, FleetReport* report) const {
  if (capacity_.empty()) return;
  double all = 0;
  auto& by_accelerator = report->segments["accelerator"];
  for (const auto& [name, chip_seconds] : capacity_.ChipSeconds(as_of_ns)) {
    by_accelerator[OrUnknown(name)].capacity_chip_seconds = chip_seconds;
    all += chip_seconds;
  }
  for (auto& [name, totals] : by_accelerator) {
    if (!totals.capacity_chip_seconds) totals.capacity_chip_seconds = 0.0;
  }
  report->fleet.capacity_chip_seconds = all;
}

FleetReport FleetTracker::Report(int64_t as_of_ns) const {
  FleetReport report;
  report.as_of_ns = as_of_ns;
  if (config_->since_ns != Config().since_ns) {
    report.since_ns = config_->since_ns;
  }
  for (const auto& [id, job] : jobs_) {
    if (job->ended() && job->last_event_ns() < config_->since_ns) continue;
    report.jobs.push_back(job->Report(as_of_ns));
  }
  std::sort(report.jobs.begin(), report.jobs.end(),
            [](const JobReport& a, const JobReport& b) {
              return a.job_id < b.job_id;
            });
  for (const JobReport& job : report.jobs) {
    AddJob(job, &report.fleet);
    AddToSegments(job, &report);
  }
  AddCapacity(as_of_ns, &report);
  return report;
}

}  // namespace goodput::core
