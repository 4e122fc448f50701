#ifndef GOODPUT_CORE_STEP_TIME_STATS_H_
#define GOODPUT_CORE_STEP_TIME_STATS_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/config.h"
#include "core/report.h"
#include "proto/tracker_state.pb.h"

namespace goodput::core {

// A job's per-step times in bounded memory: a histogram of every step's
// time (log-spaced buckets, kBucketsPerDoubling per doubling, so the
// baseline median is within 0.6% of the exact one) and a ring of the last
// kRecentReports step reports (exact). A k-step report counts as k steps
// of time / k. Pure and deterministic; a copyable value. Summary() is
// computed once per change and kept (every report of every job asks for
// it), so even const calls write: not thread-safe, one caller at a time.
class StepTimeStats {
 public:
  static constexpr int kBucketsPerDoubling = 64;
  static constexpr int64_t kRecentSteps = 100;
  static constexpr int64_t kRecentWindowNs = 15 * 60 * kNanosPerSecond;
  // Each report holds >= 1 step, so the last kRecentSteps steps are in it.
  static constexpr size_t kRecentReports = kRecentSteps;

  // Takes a report of `steps` (> 0; others are ignored) steps that took
  // `time_ns` in all and completed at `at_ns` (not before the previous).
  void Add(int64_t time_ns, int64_t steps, int64_t at_ns);

  // The baseline (every step taken) and the recent window: the newest
  // reports up to kRecentSteps steps, within kRecentWindowNs before the
  // newest one (which always counts). nullopt before the first step.
  std::optional<StepTimeSummary> Summary() const;

  // The histogram bucket of a per-step time (0 for <= 1 ns), and the
  // time (seconds) a bucket stands for: its geometric center.
  static int32_t BucketOf(int64_t per_step_ns);
  static double BucketSeconds(int32_t index);

  // Saves into `*out` (replacing it), and loads: an unsorted or empty
  // bucket, a report with steps <= 0 or more than kRecentReports reports
  // are DataLoss naming the field. Loading leaves `*this` as it was on
  // error.
  void SaveState(internal::v1::JobTrackerState::StepTimes* out) const;
  absl::Status LoadState(const internal::v1::JobTrackerState::StepTimes& in);

 private:
  struct Bucket {
    int32_t index;
    int64_t steps;
  };
  struct Report {
    int64_t per_step_ns, at_ns, steps;
  };

  // The recent reports of `in`, oldest first, from its columns (version 7)
  // or its messages; DataLoss naming the field if they do not fit.
  static absl::StatusOr<std::vector<Report>> RecentOf(
      const internal::v1::JobTrackerState::StepTimes& in);
  void AddToBaseline(int32_t index, int64_t steps);
  // The i-th newest report (0 = newest), i < recent_.size().
  const Report& Newest(size_t i) const;
  void Recent(StepTimeSummary* s) const;
  void Baseline(StepTimeSummary* s) const;

  std::vector<Bucket> baseline_;  // sorted by index
  std::vector<Report> recent_;    // a ring once full; next_ is the oldest
  size_t next_ = 0;
  // Summary() since the last change; a cache, not state.
  mutable std::optional<StepTimeSummary> summary_;
  mutable bool summary_current_ = false;
};

}  // namespace goodput::core

#endif  // GOODPUT_CORE_STEP_TIME_STATS_H_
