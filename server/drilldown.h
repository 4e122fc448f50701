#ifndef GOODPUT_SERVER_DRILLDOWN_H_
#define GOODPUT_SERVER_DRILLDOWN_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/drilldown.h"
#include "core/fleet_report.h"
#include "server/ingestor.h"
#include "storage/event_store.h"

namespace goodput::server {

// A window of `goodputctl job`: its name ("5m") and length.
struct NamedWindow {
  std::string name;
  int64_t length_ns = 0;
};

// The default windows of one job's view: 5m, 1h and 24h.
std::vector<NamedWindow> DefaultJobWindows();

// `report` with only the jobs `answers` admits, its fleet and segment
// totals summed again from them (the capacity kept), as one server holding
// only those jobs would answer (cluster mode: the partitions held).
core::FleetReport KeepAnswered(
    core::Config config, const std::function<bool(const std::string&)>& answers,
    core::FleetReport report, core::FleetSegments segments);

// The drill-down queries of goodputd (jobs, job ID, fleet), independent of
// gRPC: cut out of the ingestor's report, and for one job's windows and
// timeline, of a replay of the job's stored events (exact, like --since).
// Every query stops with Cancelled once `cancelled` (if set; e.g. the RPC's
// ServerContext::IsCancelled) is true, checked per stored batch of a replay
// and between a job's windows.
// Does not own its collaborators, which must outlive it. Thread-safe.
class Drilldown {
 public:
  Drilldown(Ingestor* ingestor, storage::EventStore* store)
      : ingestor_(ingestor), store_(store) {}

  // Whether a job is answered for (cluster mode: its partition is held
  // now); a new one is made per query. With one set, Jobs and Fleet leave
  // the other jobs out and Job answers NotFound for them. Call before
  // querying.
  using Answers = std::function<bool(const std::string& job_id)>;
  void set_answers(std::function<Answers()> make) {
    make_answers_ = std::move(make);
  }

  // Issue 18: the interruption rate per running chip-second of an
  // accelerator's TRAINING jobs (e.g. MetricsSource::InterruptionRate),
  // which Job's checkpoint advice scales to a job with fewer than 3
  // interruptions of its own. Without one, such a job has no advice.
  using SegmentRate = std::function<double(const std::string& accelerator)>;
  void set_segment_rate(SegmentRate rate) { segment_rate_ = std::move(rate); }

  // Jobs ranked by lost chip-hours over [since, as_of].
  absl::StatusOr<core::JobsView> Jobs(
      int64_t as_of_ns, std::optional<int64_t> since_ns,
      const core::JobFilter& filter,
      const std::function<bool()>& cancelled = nullptr);

  // One job as of `as_of_ns`: all time, each of `windows`, and the last
  // `timeline_limit` entries of its timeline (0 = all). NotFound naming
  // the job if it has no events at or before `as_of_ns`. A job whose raw
  // events --retention deleted has all time only and a note
  // (FailedPrecondition for an as-of before its end).
  absl::StatusOr<core::JobView> Job(
      const std::string& job_id, int64_t as_of_ns,
      const std::vector<NamedWindow>& windows, size_t timeline_limit,
      const std::function<bool()>& cancelled = nullptr);

  // The fleet and the segments of dimension `by` (InvalidArgument naming
  // a bad one), with the 5 jobs that lost the most chip-hours.
  absl::StatusOr<core::FleetView> Fleet(
      int64_t as_of_ns, std::optional<int64_t> since_ns, const std::string& by,
      const std::function<bool()>& cancelled = nullptr);

 private:
  // The view of a job whose raw events retention deleted, from its final
  // snapshot: all time only, with a note instead of windows and timeline.
  absl::StatusOr<core::JobView> DeletedJobView(
      const storage::JobSnapshot& snapshot, int64_t as_of_ns);
  // Adds to `view` (as of its as_of, its job set) the report of each of
  // `windows` from a replay of `events`; Cancelled between windows.
  absl::Status AddWindows(const std::vector<NamedWindow>& windows,
                          const std::vector<v1::Event>& events,
                          const std::function<bool()>& cancelled,
                          core::JobView* view);
  // `job_id`'s report in a replay of `events` over [since, as_of]; a job
  // that ended before the window has only its identity.
  core::JobReport WindowReport(const core::JobReport& all_time,
                               const std::vector<v1::Event>& events,
                               int64_t as_of_ns, int64_t since_ns);

  std::function<Answers()> make_answers_;
  SegmentRate segment_rate_;
  Ingestor* ingestor_;
  storage::EventStore* store_;
};

}  // namespace goodput::server

#endif  // GOODPUT_SERVER_DRILLDOWN_H_
