#ifndef GOODPUT_CORE_FLEET_TRACKER_H_
#define GOODPUT_CORE_FLEET_TRACKER_H_

#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "absl/status/statusor.h"
#include "core/capacity_tracker.h"
#include "core/config.h"
#include "core/job_tracker.h"
#include "core/report.h"
#include "proto/event.pb.h"

namespace goodput::core {

// All jobs of a fleet plus host capacity: routes each event to its job's
// JobTracker (creating it at the job's first event) or, for heartbeats, to
// the capacity tracker, and each HOSTS or FLEET exclusion to every job it
// covers (also jobs whose first event comes while it lasts), and builds the
// fleet report. Owns its trackers; `config` must outlive it. Not
// thread-safe: one caller at a time.
class FleetTracker {
 public:
  explicit FleetTracker(const Config* config)
      : config_(config), capacity_(config) {}

  // Applies one validated event. Each job's events must arrive in apply
  // order (see SortForApply); jobs may interleave freely, but a HOSTS or
  // FLEET exclusion must not start before an event already applied to a
  // job it covers (SortForApply's global order ensures it). Errors name the
  // job and the reason (e.g. an event after job_ended) and change nothing
  // (an exclusion still covers the other jobs).
  absl::StatusOr<ApplyResult> Apply(const v1::Event& e);

  // The report as of `as_of_ns`, which must not precede any applied event.
  FleetReport Report(int64_t as_of_ns) const;

  size_t job_count() const { return jobs_.size(); }
  const JobTracker* FindJob(const std::string& job_id) const;

 private:
  // An exclusion of several jobs: HOSTS (`hosts` set) or FLEET, or of one
  // job (JOB) that has had no other event yet.
  struct Shared {
    int64_t start_ns, until_ns;
    std::set<std::string> hosts;  // empty: every job
  };

  absl::StatusOr<ApplyResult> ApplyExclusion(const v1::Event& e);
  // The event's job: last_job_ if it is the same job, else FindOrAddJob.
  JobTracker* JobFor(const v1::Event& e);
  JobTracker* FindOrAddJob(const v1::Event& e);
  bool Covers(const Shared& x, const std::string& job_id) const;

  const Config* config_;
  std::unordered_map<std::string, std::unique_ptr<JobTracker>> jobs_;
  // JobFor's last result (trackers never leave jobs_): a replay applies
  // job by job, so most of its events skip the hash lookup.
  JobTracker* last_job_ = nullptr;
  CapacityTracker capacity_;
  std::vector<Shared> shared_;  // HOSTS and FLEET exclusions, in order
  std::unordered_map<std::string, std::vector<Shared>> early_;  // JOB ones
  // The hosts each job's events came from (HOSTS exclusions).
  std::unordered_map<std::string, std::set<std::string>> job_hosts_;
};

}  // namespace goodput::core

#endif  // GOODPUT_CORE_FLEET_TRACKER_H_
