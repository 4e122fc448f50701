#ifndef GOODPUT_CORE_FLEET_REPORT_H_
#define GOODPUT_CORE_FLEET_REPORT_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/config.h"
#include "core/report.h"

namespace goodput::core {

// Builds the fleet report from per-job reports and capacity chip-seconds
// per accelerator (empty if no heartbeats): sorts jobs by id, drops jobs
// that ended before the window, and sums chip-weighted fleet and segment
// totals (SPEC section 3 rules 10 and 12). The one aggregation used by
// replay and by the live server.
//
// With kCapacityOnly, the segment totals are left out: `segments` holds only
// the accelerator segment's capacity entries, every accelerator's (0 for
// one without heartbeats) when there is any capacity (ToShardReport's),
// for queries that need the jobs and fleet totals alone (Query.Summary,
// Query.Jobs); the jobs and fleet totals are the same.
// With kJobsOnly, the fleet totals are left out too (`fleet` holds only the
// capacity, `segments` as with kCapacityOnly): for Query.Report, which
// sends each job and the capacity alone; the jobs are the same.
enum class FleetSegments { kAll, kCapacityOnly, kJobsOnly };
FleetReport BuildFleetReport(const Config& config, int64_t as_of_ns,
                             std::vector<JobReport> jobs,
                             const std::map<std::string, double>& capacity,
                             FleetSegments segments = FleetSegments::kAll);

// The `size` segment value of a job with `chips` chips, e.g. "<=64".
std::string SizeBucket(const Config& config, int64_t chips);

}  // namespace goodput::core

#endif  // GOODPUT_CORE_FLEET_REPORT_H_
