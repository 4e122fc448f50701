#ifndef GOODPUT_CORE_DRILLDOWN_H_
#define GOODPUT_CORE_DRILLDOWN_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/category.h"
#include "core/checkpoint_advice.h"
#include "core/config.h"
#include "core/job_timeline.h"
#include "core/report.h"

namespace goodput::core {

// The drill-down views behind `goodputctl jobs | job ID | fleet` (plain
// data) and the pure functions that cut them out of a FleetReport.
// "Badput" is every category but `productive`; a job's lost chip-hours,
// by which jobs are ranked, are its badput times its chips.

// The order of `jobs`: lost chip-seconds (most first), job_id, chips (most
// first), MPG (lowest first, undefined last) or at-risk time (most first);
// ties by job_id.
enum class JobSort { kLost, kJobId, kChips, kMpg, kAtRisk };

// Which jobs `jobs` lists, in which order. Plain data.
struct JobFilter {
  // (dimension, value) pairs that must all match, e.g. ("accelerator",
  // "tpu-v5p") or ("label:team", "search"); see SegmentValue.
  std::vector<std::pair<std::string, std::string>> segments;
  std::optional<JobStateKind> state;
  size_t limit = 0;  // 0 = no limit
  JobSort sort = JobSort::kLost;
};

// Jobs ranked by lost chip-hours. Plain data.
struct JobsView {
  int64_t as_of_ns = 0;
  std::optional<int64_t> since_ns;
  std::vector<JobReport> jobs;  // at most the filter's limit
  int64_t matched = 0;          // jobs that matched, before the limit
};

// One job over one window [as_of - window, as_of]. Plain data.
struct JobWindow {
  std::string name;                 // e.g. "5m", "1h", "all"
  std::optional<int64_t> since_ns;  // nullopt: all time
  JobReport report;
};

// One job: its all-time report, windows and timeline. Plain data.
struct JobView {
  int64_t as_of_ns = 0;
  JobReport job;  // all time
  std::vector<JobWindow> windows;
  std::vector<TimelineEntry> timeline;
  int64_t timeline_omitted = 0;  // earliest entries left out (a limit)
  // Set when windows and timeline are unavailable, saying why (the job's
  // raw events were deleted by --retention; `job` is its final snapshot).
  std::string note;
  // Issue 18: the interruptions per running chip-second of the job's
  // accelerator segment (TRAINING jobs; 0 when unknown), which M comes
  // from below kMinOwnInterruptions of the job's own.
  double segment_interruptions_per_chip_second = 0;
};

// Issue 18 part 2: checkpoint advice for a TRAINING job's view, from its
// report, the saves its tracker counted and, below kMinOwnInterruptions
// of its own, its segment's rate (nullopt when AdviseCheckpoint has
// nothing to say). The timeline's count is not used: a cut timeline
// (--timeline, --retention) undercounts, the tracker's count does not.
std::optional<CheckpointAdvice> JobViewCheckpointAdvice(const JobView& view);

// Fleet totals and one dimension's segments. Plain data.
struct FleetView {
  int64_t as_of_ns = 0;
  std::optional<int64_t> since_ns;
  Totals fleet;
  std::string by;                          // the dimension
  std::map<std::string, Totals> segments;  // value -> totals
  std::vector<JobReport> worst_jobs;       // by lost chip-hours
};

// OK if `dimension` is "accelerator", "workload", "framework", "size" or
// "label:KEY"; else InvalidArgument naming it and the choices.
absl::Status CheckDimension(const std::string& dimension);

// The state named `name` ("QUEUED", "RUNNING", "RECOVERING", "ENDED");
// InvalidArgument naming it otherwise.
absl::StatusOr<JobStateKind> ParseJobState(const std::string& name);

// `job`'s value in `dimension` as BuildFleetReport keys its segments
// ("unknown" for an unset accelerator or framework); nullopt for a label
// the job does not have.
std::optional<std::string> SegmentValue(const Config& config,
                                        const JobReport& job,
                                        const std::string& dimension);

// The sort named `name`: "lost" (also ""), "job_id", "chips", "mpg" or
// "at_risk"; InvalidArgument naming it and the choices otherwise.
absl::StatusOr<JobSort> ParseJobSort(const std::string& name);

// Sorts `jobs` by `sort` (stable; ties by job_id).
void SortJobs(JobSort sort, std::vector<JobReport>* jobs);

// The first `limit` (0 = all) of `jobs` in `sort`'s order, copied.
std::vector<JobReport> TopJobs(JobSort sort, std::vector<const JobReport*> jobs,
                               size_t limit);

// Chip-seconds of `job`'s badput; 0 when its chips are unknown.
double LostChipSeconds(const JobReport& job);

// The jobs of `report` matching `filter`, in the filter's order, at most
// its limit.
JobsView RankJobs(const Config& config, const FleetReport& report,
                  const JobFilter& filter);

// The fleet and the segments of `dimension` (checked by CheckDimension),
// plus the `worst` jobs with the most lost chip-seconds.
absl::StatusOr<FleetView> MakeFleetView(const FleetReport& report,
                                        const std::string& dimension,
                                        size_t worst);

// The badput categories with a positive amount, largest first (ties in
// report order): where the time went, for on-call.
std::vector<std::pair<Category, double>> BadputByCategory(
    const CategoryNanos& nanos);
std::vector<std::pair<Category, double>> BadputByCategory(
    const CategoryChipSeconds& chip_seconds);

}  // namespace goodput::core

#endif  // GOODPUT_CORE_DRILLDOWN_H_
