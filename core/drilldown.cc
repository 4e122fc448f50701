#include "core/drilldown.h"

#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "core/fleet_report.h"

namespace goodput::core {
namespace {

constexpr char kLabelPrefix[] = "label:";

bool Matches(const Config& config, const JobReport& job,
             const JobFilter& filter) {
  if (filter.state && job.state != *filter.state) return false;
  for (const auto& [dimension, value] : filter.segments) {
    if (SegmentValue(config, job, dimension) != value) return false;
  }
  return true;
}

// Whether `a` goes before `b` in `sort`'s order, before the job_id tie.
std::optional<bool> Before(JobSort sort, const JobReport& a,
                           const JobReport& b) {
  switch (sort) {
    case JobSort::kLost: {
      const double la = LostChipSeconds(a), lb = LostChipSeconds(b);
      if (la != lb) return la > lb;
      return std::nullopt;
    }
    case JobSort::kChips:
      if (a.chips != b.chips) return a.chips > b.chips;
      return std::nullopt;
    case JobSort::kAtRisk:
      if (a.at_risk_ns != b.at_risk_ns) return a.at_risk_ns > b.at_risk_ns;
      return std::nullopt;
    case JobSort::kMpg: {
      const std::optional<double> ma = JobRatios(a).mpg, mb = JobRatios(b).mpg;
      if (ma.has_value() != mb.has_value()) return ma.has_value();
      if (ma && *ma != *mb) return *ma < *mb;
      return std::nullopt;
    }
    case JobSort::kJobId:
      return std::nullopt;
  }
  return std::nullopt;
}

template <typename Amounts>
std::vector<std::pair<Category, double>> Badput(const Amounts& amounts) {
  std::vector<std::pair<Category, double>> out;
  for (int i = 0; i < kNumCategories; ++i) {
    const auto c = static_cast<Category>(i);
    // Excluded time is no badput (docs/semantics.md, "Exclusions").
    if (c == Category::kProductive || c == Category::kExcluded ||
        amounts[i] <= 0) {
      continue;
    }
    out.emplace_back(c, static_cast<double>(amounts[i]));
  }
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    return a.second > b.second;
  });
  return out;
}

}  // namespace

absl::Status CheckDimension(const std::string& dimension) {
  if (dimension == "accelerator" || dimension == "workload" ||
      dimension == "framework" || dimension == "size") {
    return absl::OkStatus();
  }
  if (absl::StartsWith(dimension, kLabelPrefix) &&
      dimension.size() > sizeof(kLabelPrefix) - 1) {
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown segment dimension '", dimension,
                   "' (want accelerator, workload, framework, size or "
                   "label:KEY)"));
}

absl::StatusOr<JobStateKind> ParseJobState(const std::string& name) {
  for (JobStateKind s : {JobStateKind::kQueued, JobStateKind::kRunning,
                         JobStateKind::kRecovering, JobStateKind::kEnded}) {
    if (name == JobStateName(s)) return s;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown job state '", name,
                   "' (want QUEUED, RUNNING, RECOVERING or ENDED)"));
}

std::optional<std::string> SegmentValue(const Config& config,
                                        const JobReport& job,
                                        const std::string& dimension) {
  if (dimension == "accelerator") return OrUnknown(job.accelerator);
  if (dimension == "workload") {
    return v1::JobSubmitted::Workload_Name(job.workload);
  }
  if (dimension == "framework") return OrUnknown(job.framework);
  if (dimension == "size") return SizeBucket(config, job.chips);
  if (!absl::StartsWith(dimension, kLabelPrefix)) return std::nullopt;
  auto it = job.labels.find(dimension.substr(sizeof(kLabelPrefix) - 1));
  if (it == job.labels.end()) return std::nullopt;
  return it->second;
}

absl::StatusOr<JobSort> ParseJobSort(const std::string& name) {
  if (name.empty() || name == "lost") return JobSort::kLost;
  if (name == "job_id") return JobSort::kJobId;
  if (name == "chips") return JobSort::kChips;
  if (name == "mpg") return JobSort::kMpg;
  if (name == "at_risk") return JobSort::kAtRisk;
  return absl::InvalidArgumentError(
      absl::StrCat("sort: unknown order '", name,
                   "'; want lost, job_id, chips, mpg or at_risk"));
}

void SortJobs(JobSort sort, std::vector<JobReport>* jobs) {
  std::stable_sort(jobs->begin(), jobs->end(),
                   [sort](const JobReport& a, const JobReport& b) {
                     std::optional<bool> before = Before(sort, a, b);
                     return before ? *before : a.job_id < b.job_id;
                   });
}

double LostChipSeconds(const JobReport& job) {
  if (job.chips <= 0) return 0;
  const int64_t badput = job.total_ns - job.nanos[Index(Category::kProductive)];
  return static_cast<double>(badput) * static_cast<double>(job.chips) /
         kNanosPerSecond;
}

JobsView RankJobs(const Config& config, const FleetReport& report,
                  const JobFilter& filter) {
  JobsView view;
  view.as_of_ns = report.as_of_ns;
  view.since_ns = report.since_ns;
  std::vector<const JobReport*> matched;
  for (const JobReport& job : report.jobs) {
    if (Matches(config, job, filter)) matched.push_back(&job);
  }
  view.matched = static_cast<int64_t>(matched.size());
  view.jobs = TopJobs(filter.sort, matched, filter.limit);
  return view;
}

std::optional<CheckpointAdvice> JobViewCheckpointAdvice(const JobView& view) {
  return AdviseJob(view.job, view.segment_interruptions_per_chip_second);
}

std::vector<JobReport> TopJobs(JobSort sort, std::vector<const JobReport*> jobs,
                               size_t limit) {
  const size_t n = limit == 0 ? jobs.size() : std::min(limit, jobs.size());
  std::partial_sort(jobs.begin(), jobs.begin() + n, jobs.end(),
                    [sort](const JobReport* a, const JobReport* b) {
                      std::optional<bool> before = Before(sort, *a, *b);
                      return before ? *before : a->job_id < b->job_id;
                    });
  std::vector<JobReport> out;
  out.reserve(n);
  for (size_t i = 0; i < n; ++i) out.push_back(*jobs[i]);
  return out;
}

absl::StatusOr<FleetView> MakeFleetView(const FleetReport& report,
                                        const std::string& dimension,
                                        size_t worst) {
  if (absl::Status s = CheckDimension(dimension); !s.ok()) return s;
  FleetView view;
  view.as_of_ns = report.as_of_ns;
  view.since_ns = report.since_ns;
  view.fleet = report.fleet;
  view.by = dimension;
  auto it = report.segments.find(dimension);
  if (it != report.segments.end()) view.segments = it->second;
  std::vector<const JobReport*> all;
  all.reserve(report.jobs.size());
  for (const JobReport& job : report.jobs) all.push_back(&job);
  if (worst > 0)
    view.worst_jobs = TopJobs(JobSort::kLost, std::move(all), worst);
  return view;
}

std::vector<std::pair<Category, double>> BadputByCategory(
    const CategoryNanos& nanos) {
  return Badput(nanos);
}

std::vector<std::pair<Category, double>> BadputByCategory(
    const CategoryChipSeconds& chip_seconds) {
  return Badput(chip_seconds);
}

}  // namespace goodput::core
