#ifndef GOODPUT_CORE_REPORT_H_
#define GOODPUT_CORE_REPORT_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/category.h"
#include "proto/event.pb.h"

namespace goodput::core {

enum class JobStateKind { kQueued, kRunning, kRecovering, kEnded };

// "QUEUED", "RUNNING", "RECOVERING" or "ENDED".
const char* JobStateName(JobStateKind s);

// The time ratios of SPEC section 3 rule 10; nullopt where undefined.
struct Ratios {
  std::optional<double> goodput, sg, rg, pg, mpg;
};

// A job's per-step time (issue 18 part 1, docs/semantics.md "Slow
// steps"): core::StepTimeStats's baseline and recent window. Plain data.
struct StepTimeSummary {
  int64_t baseline_steps = 0;    // steps in the baseline
  double baseline_median_s = 0;  // median per-step time (bucket center)
  double baseline_mad_s = 0;     // median absolute deviation from it
  int64_t recent_steps = 0;      // steps in the recent window
  double recent_p50_s = 0;       // their median per-step time (exact)
  std::optional<double> ratio;   // recent / baseline; unset when that is 0

  // Sets `ratio` from the medians (also for a summary read back).
  void SetRatio() {
    ratio.reset();
    if (baseline_median_s > 0) ratio = recent_p50_s / baseline_median_s;
  }

  bool operator==(const StepTimeSummary& o) const {
    return baseline_steps == o.baseline_steps &&
           baseline_median_s == o.baseline_median_s &&
           baseline_mad_s == o.baseline_mad_s &&
           recent_steps == o.recent_steps && recent_p50_s == o.recent_p50_s &&
           ratio == o.ratio;
  }
};

// One job as of a report's as-of, within its window. Plain data.
struct JobReport {
  std::string job_id;
  int64_t chips = 0;  // chip weight; 0 = unknown (left out of fleet sums)
  std::string accelerator;
  v1::JobSubmitted::Workload workload = v1::JobSubmitted::TRAINING;
  std::string framework;
  std::map<std::string, std::string> labels;
  JobStateKind state = JobStateKind::kQueued;

  int64_t total_ns = 0;   // lifetime within the window; == sum of `nanos`
  CategoryNanos nanos{};  // per category
  std::map<std::string, int64_t> custom_nanos;  // CUSTOM activity by name
  int64_t at_risk_ns = 0;
  double ideal_seconds = 0;          // ideal time of productive costed steps
  int64_t costed_productive_ns = 0;  // productive time of costed steps

  std::optional<int64_t> last_step;        // highest completed, not lost
  std::optional<int64_t> last_checkpoint;  // highest durable step
  int64_t lost_steps = 0;                  // lost step completions
  int64_t interruptions = 0;  // attempts that ended without job_ended
  int64_t duplicates = 0;     // events ignored as duplicates (rule 3)
  int64_t notices = 0;        // interruption notices
  int64_t checkpoints = 0;    // checkpoint events applied (saves)

  // Rule 14, elastic jobs. `min_chips` is set only for an elastic job; the
  // chip-seconds below are then its time weighted by the chips each instant
  // counts with (held chips while all-allocated, else `chips`), and are 0
  // for a fixed-size job (whose sums weight `nanos` by `chips`).
  std::optional<int64_t> min_chips;
  CategoryChipSeconds chip_seconds{};
  double costed_productive_chip_seconds = 0;

  // Issue 18, badput in $ and kWh: the rates the job is priced at (its
  // accelerator's catalog entry, core/badput_cost.h); unset = unknown.
  std::optional<double> usd_per_chip_hour, watts_per_chip;

  // Issue 18, slow steps: the job's step times as of its last applied
  // event (not windowed); unset before its first non-first step.
  std::optional<StepTimeSummary> step_time;
};

// Issue 18, checkpoint advice: a set's TRAINING jobs with chips, summed
// (core::AddCheckpointSums); run_chip_seconds weights each job's running
// time by its chips (the interruption rate's denominator). Plain data.
struct CheckpointSums {
  double run_seconds = 0, run_chip_seconds = 0;
  double checkpoint_seconds = 0, restart_seconds = 0;
  int64_t interruptions = 0, checkpoints = 0;
};

// Chip-time-weighted sums over a set of jobs (fleet or one segment value).
struct Totals {
  CategoryChipSeconds chip_seconds{};
  double total_chip_seconds = 0;
  double ideal_chip_seconds = 0;
  double costed_productive_chip_seconds = 0;
  // Capacity from host heartbeats, where known for this set (fleet, or an
  // accelerator segment); nullopt elsewhere.
  std::optional<double> capacity_chip_seconds;
  // Rule 14: elastic jobs' all-allocated time in chip-seconds, at the held
  // chips and at the requested chips (degraded = requested - held).
  double held_chip_seconds = 0, requested_chip_seconds = 0;
  int64_t jobs = 0;
  int64_t jobs_without_chips = 0;  // left out of the sums above
  // Issue 18: $ and kWh per category of the jobs with a price (power), and
  // the chip-seconds of the jobs without one (left out of those sums).
  CategoryChipSeconds cost_usd{}, energy_kwh{};
  double unpriced_chip_seconds = 0, unpowered_chip_seconds = 0;
  CheckpointSums checkpoint;  // issue 18, checkpoint advice
};

// Ratios of one job from its nanoseconds (rule 14: an elastic job's PG is
// ideal over productive chip-seconds).
Ratios JobRatios(const JobReport& job);

// Rule 14's measures of one elastic job, or of a set's elastic jobs.
struct ElasticMeasures {
  double held_chip_seconds = 0, requested_chip_seconds = 0;
  double degraded_chip_seconds = 0;        // requested - held, >= 0
  std::optional<double> slice_efficiency;  // held / requested, <= 1
};
// nullopt for a fixed-size job.
std::optional<ElasticMeasures> JobElastic(const JobReport& job);
ElasticMeasures TotalsElastic(const Totals& totals);

// Ratios of a chip-weighted set; `sg_capacity` and `mpg_capacity` are set
// only when the set's capacity is known and non-zero.
struct TotalsRatios {
  Ratios ratios;
  std::optional<double> sg_capacity, mpg_capacity;
};
TotalsRatios ComputeRatios(const Totals& totals);

// The whole report of SPEC section 4.
struct FleetReport {
  int64_t as_of_ns = 0;
  std::optional<int64_t> since_ns;
  std::vector<JobReport> jobs;  // sorted by job_id
  Totals fleet;
  // dimension -> value -> totals. Dimensions: "accelerator", "workload",
  // "framework", "size", and "label:KEY" for every label key seen.
  std::map<std::string, std::map<std::string, Totals>> segments;
};

// The segment value of a job's spec field (accelerator, framework, a
// label): the field, or "unknown" when it is empty.
inline std::string OrUnknown(const std::string& s) {
  return s.empty() ? "unknown" : s;
}

}  // namespace goodput::core

#endif  // GOODPUT_CORE_REPORT_H_
