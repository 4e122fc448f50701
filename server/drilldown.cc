#include "server/drilldown.h"

#include <algorithm>
#include <limits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "core/badput_cost.h"
#include "core/event_order.h"
#include "core/fleet_report.h"
#include "core/job_timeline.h"
#include "core/replay_events.h"

namespace goodput::server {
namespace {

constexpr size_t kWorstJobs = 5;
constexpr int64_t kMinute = 60 * core::kNanosPerSecond;

const core::JobReport* FindJob(const core::FleetReport& report,
                               const std::string& job_id) {
  for (const core::JobReport& job : report.jobs) {
    if (job.job_id == job_id) return &job;
  }
  return nullptr;
}

// The job's identity (id, chips, segments, state) with no time.
core::JobReport IdentityOnly(const core::JobReport& job) {
  core::JobReport out;
  out.job_id = job.job_id;
  out.chips = job.chips;
  out.accelerator = job.accelerator;
  out.workload = job.workload;
  out.framework = job.framework;
  out.labels = job.labels;
  out.state = job.state;
  return out;
}

// Keeps the last `limit` timeline entries (all if 0) and counts the rest.
void KeepLast(size_t limit, core::JobView* view) {
  std::vector<core::TimelineEntry>& t = view->timeline;
  if (limit == 0 || t.size() <= limit) return;
  view->timeline_omitted = static_cast<int64_t>(t.size() - limit);
  t.erase(t.begin(), t.begin() + view->timeline_omitted);
}

// Cancelled once `cancelled` (if set) says the query was.
absl::Status CheckCancelled(const std::function<bool()>& cancelled) {
  if (cancelled && cancelled()) {
    return absl::CancelledError("query: the call was cancelled");
  }
  return absl::OkStatus();
}

absl::Status NotFound(const std::string& job_id, int64_t as_of_ns) {
  return absl::NotFoundError(
      absl::StrCat("job '", job_id, "' not found (no events at or before ",
                   core::FormatTimeNanos(as_of_ns), ")"));
}

}  // namespace

core::FleetReport KeepAnswered(
    core::Config config, const std::function<bool(const std::string&)>& answers,
    core::FleetReport report, core::FleetSegments segments) {
  std::map<std::string, double> capacity;
  if (auto it = report.segments.find("accelerator");
      it != report.segments.end()) {
    for (const auto& [accelerator, totals] : it->second) {
      if (totals.capacity_chip_seconds) {
        capacity[accelerator] = *totals.capacity_chip_seconds;
      }
    }
  }
  std::vector<core::JobReport> jobs;
  for (core::JobReport& job : report.jobs) {
    if (answers(job.job_id)) jobs.push_back(std::move(job));
  }
  if (report.since_ns) config.since_ns = *report.since_ns;
  return core::BuildFleetReport(config, report.as_of_ns, std::move(jobs),
                                capacity, segments);
}

std::vector<NamedWindow> DefaultJobWindows() {
  return {
      {"5m", 5 * kMinute}, {"1h", 60 * kMinute}, {"24h", 24 * 60 * kMinute}};
}

absl::StatusOr<core::JobsView> Drilldown::Jobs(
    int64_t as_of_ns, std::optional<int64_t> since_ns,
    const core::JobFilter& filter, const std::function<bool()>& cancelled) {
  for (const auto& [dimension, value] : filter.segments) {
    if (absl::Status s = core::CheckDimension(dimension); !s.ok()) return s;
  }
  absl::StatusOr<core::FleetReport> report = ingestor_->Report(
      as_of_ns, since_ns, cancelled, core::FleetSegments::kCapacityOnly);
  if (!report.ok()) return report.status();
  if (make_answers_) {
    const Answers answers = make_answers_();
    std::vector<core::JobReport>& jobs = report->jobs;
    jobs.erase(std::remove_if(jobs.begin(), jobs.end(),
                              [&](const core::JobReport& j) {
                                return !answers(j.job_id);
                              }),
               jobs.end());
  }
  return core::RankJobs(ingestor_->config(), *report, filter);
}

absl::StatusOr<core::JobView> Drilldown::Job(
    const std::string& job_id, int64_t as_of_ns,
    const std::vector<NamedWindow>& windows, size_t timeline_limit,
    const std::function<bool()>& cancelled) {
  if (make_answers_ && !make_answers_()(job_id)) {
    return absl::NotFoundError(
        absl::StrCat("job '", job_id,
                     "' not found here: its cluster partition is held by "
                     "another instance"));
  }
  absl::StatusOr<std::optional<storage::JobSnapshot>> deleted =
      ingestor_->DeletedJob(job_id);
  if (!deleted.ok()) return deleted.status();
  if (*deleted) return DeletedJobView(**deleted, as_of_ns);
  absl::StatusOr<std::optional<core::JobReport>> one =
      ingestor_->JobReport(job_id, as_of_ns, std::nullopt, cancelled);
  if (!one.ok()) return one.status();
  if (!*one) return NotFound(job_id, as_of_ns);
  const core::JobReport* job = &**one;
  std::vector<v1::Event> events;
  absl::Status s =
      store_->ReadJob(job_id, 0, std::numeric_limits<uint64_t>::max(), &events);
  if (!s.ok()) return s;
  core::JobView view;
  view.as_of_ns = as_of_ns;
  view.job = *job;
  core::PriceJob(ingestor_->config().catalog, &view.job);  // issue 18
  if (segment_rate_) {
    view.segment_interruptions_per_chip_second =
        segment_rate_(view.job.accelerator);
  }
  if (s = AddWindows(windows, events, cancelled, &view); !s.ok()) return s;
  view.windows.push_back({"all", std::nullopt, *job});
  view.timeline = core::BuildJobTimeline(events, as_of_ns);
  KeepLast(timeline_limit, &view);
  return view;
}

absl::StatusOr<core::JobView> Drilldown::DeletedJobView(
    const storage::JobSnapshot& snapshot, int64_t as_of_ns) {
  const std::string& id = snapshot.report.job_id;
  if (as_of_ns < snapshot.first_event_ns) return NotFound(id, as_of_ns);
  const std::optional<int64_t> retention = ingestor_->retention_ns();
  const std::string flag = absl::StrCat(
      "--retention",
      retention ? "=" + absl::FormatDuration(absl::Nanoseconds(*retention))
                : "");
  if (as_of_ns < snapshot.ended_ns) {
    return absl::FailedPreconditionError(absl::StrCat(
        "as_of: job '", id, "' ended at ",
        core::FormatTimeNanos(snapshot.ended_ns), " and its raw events were ",
        "deleted by ", flag, "; only its final state (as_of at or after ",
        "its end) is known"));
  }
  core::JobView view;
  view.as_of_ns = as_of_ns;
  view.job = snapshot.report;
  core::PriceJob(ingestor_->config().catalog, &view.job);  // issue 18
  view.windows.push_back({"all", std::nullopt, snapshot.report});
  view.note = absl::StrCat("raw events deleted by ", flag,
                           "; timeline and windows unavailable");
  return view;
}

absl::Status Drilldown::AddWindows(const std::vector<NamedWindow>& windows,
                                   const std::vector<v1::Event>& events,
                                   const std::function<bool()>& cancelled,
                                   core::JobView* view) {
  for (const NamedWindow& w : windows) {
    if (absl::Status s = CheckCancelled(cancelled); !s.ok()) return s;
    const int64_t since = view->as_of_ns - w.length_ns;
    view->windows.push_back(
        {w.name, since,
         WindowReport(view->job, events, view->as_of_ns, since)});
  }
  return CheckCancelled(cancelled);
}

core::JobReport Drilldown::WindowReport(const core::JobReport& all_time,
                                        const std::vector<v1::Event>& events,
                                        int64_t as_of_ns, int64_t since_ns) {
  core::Config config = ingestor_->config();
  config.since_ns = since_ns;
  core::FleetReport report = core::ReplayEvents(events, config, as_of_ns);
  const core::JobReport* job = FindJob(report, all_time.job_id);
  return job != nullptr ? *job : IdentityOnly(all_time);
}

absl::StatusOr<core::FleetView> Drilldown::Fleet(
    int64_t as_of_ns, std::optional<int64_t> since_ns, const std::string& by,
    const std::function<bool()>& cancelled) {
  if (absl::Status s = core::CheckDimension(by); !s.ok()) return s;
  absl::StatusOr<core::FleetReport> report =
      ingestor_->Report(as_of_ns, since_ns, cancelled);
  if (!report.ok()) return report.status();
  if (make_answers_) {
    *report = KeepAnswered(ingestor_->config(), make_answers_(),
                           *std::move(report), core::FleetSegments::kAll);
  }
  return core::MakeFleetView(*report, by, kWorstJobs);
}

}  // namespace goodput::server
