#ifndef GOODPUT_CORE_FLEET_TRACKER_H_
#define GOODPUT_CORE_FLEET_TRACKER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>

#include "absl/status/statusor.h"
#include "core/capacity_tracker.h"
#include "core/config.h"
#include "core/job_tracker.h"
#include "core/report.h"
#include "proto/event.pb.h"

namespace goodput::core {

// All jobs of a fleet plus host capacity: routes each event to its job's
// JobTracker (creating it at the job's first event) or, for heartbeats, to
// the capacity tracker, and builds the fleet report. Owns its trackers;
// `config` must outlive it. Not thread-safe: one caller at a time.
class FleetTracker {
 public:
  explicit FleetTracker(const Config* config)
      : config_(config), capacity_(config) {}

  // Applies one validated event. Each job's events must arrive in apply
  // order (see SortForApply); jobs may interleave freely. Errors name the
  // job and the reason (e.g. an event after job_ended) and change nothing.
  absl::StatusOr<ApplyResult> Apply(const v1::Event& e);

  // The report as of `as_of_ns`, which must not precede any applied event.
  FleetReport Report(int64_t as_of_ns) const;

  size_t job_count() const { return jobs_.size(); }
  const JobTracker* FindJob(const std::string& job_id) const;

 private:
  const Config* config_;
  std::unordered_map<std::string, std::unique_ptr<JobTracker>> jobs_;
  CapacityTracker capacity_;
};

}  // namespace goodput::core

#endif  // GOODPUT_CORE_FLEET_TRACKER_H_
