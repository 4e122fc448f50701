#ifndef GOODPUT_CORE_CHECKPOINT_ADVICE_H_
#define GOODPUT_CORE_CHECKPOINT_ADVICE_H_

#include <cstdint>
#include <optional>

#include "core/report.h"

namespace goodput::core {

// What a TRAINING job (or a segment) showed about interruptions and saves
// (issue 18 part 2, docs/semantics.md "Checkpoint advice"). Plain data.
struct CheckpointObservation {
  double run_seconds = 0;         // attempts' running time (all-allocated)
  int64_t interruptions = 0;      // attempts that ended without job_ended
  double checkpoint_seconds = 0;  // time in the CHECKPOINT category
  int64_t checkpoints = 0;        // saves (checkpoint events)
  double restart_seconds = 0;     // recovery + init + compile + restore
  int64_t chips = 0;
};

// The Young/Daly advice for one job. Stateless, thread-safe functions.
struct CheckpointAdvice {
  double mtbi_seconds = 0;              // M
  bool mtbi_from_segment = false;       // M scaled from the segment's rate
  double save_seconds = 0;              // C, blocking seconds per checkpoint
  double restart_seconds = 0;           // R, per interruption (nullopt-free: 0)
  double advised_interval_seconds = 0;  // sqrt(2 C M)
  std::optional<double> actual_interval_seconds;  // run / checkpoints
  // Expected lost + checkpoint share of run time at each interval.
  double expected_share_at_advised = 0;
  std::optional<double> expected_share_at_actual;
};

// The job's own interruptions count when it has at least this many.
inline constexpr int64_t kMinOwnInterruptions = 3;

// Expected lost + checkpoint share of run time when saving every
// `interval` seconds with save cost C and mean time between interruptions
// M (first order, Young 1974): C / interval + (interval + C) / (2 M).
double ExpectedLostAndCheckpointShare(double interval, double save, double m);

// Advice for `job`, using `segment_interruptions_per_chip_second` (the
// segment's interruptions over its chip-seconds of running time) when the
// job has fewer than kMinOwnInterruptions. nullopt when there is nothing
// to advise on: no checkpoint yet (C unknown), no chips, or no
// interruption in the job or its segment (M unknown).
std::optional<CheckpointAdvice> AdviseCheckpoint(
    const CheckpointObservation& job,
    double segment_interruptions_per_chip_second);

// What `job`'s report shows, with `checkpoints` saves: running time is
// total - queued - recovery, restarts recovery + init + compile + restore.
// nullopt for a workload other than TRAINING.
std::optional<CheckpointObservation> ObserveJob(const JobReport& job,
                                                int64_t checkpoints);

// AdviseCheckpoint on ObserveJob(job, job.checkpoints): the advice for a
// job's report (the tracker's own count of saves).
std::optional<CheckpointAdvice> AdviseJob(
    const JobReport& job, double segment_interruptions_per_chip_second);

// Adds `job` to `sums` when it is a TRAINING job with chips.
void AddCheckpointSums(const JobReport& job, CheckpointSums* sums);

// Adds `from` to `*to` (shards' totals).
void AddCheckpointSums(const CheckpointSums& from, CheckpointSums* to);

// A set's interruptions per chip-second of running time; 0 with none.
double InterruptionsPerChipSecond(const CheckpointSums& sums);

// The advice for a set (a segment, the fleet): M = its running time over
// its interruptions (its rate scaled to its run-time-weighted mean job
// size: 1 / (rate x run_chip_seconds / run_seconds) is the same), C its
// checkpoint seconds over its saves, R its restart seconds over its
// interruptions. nullopt below kMinOwnInterruptions or without a save.
std::optional<CheckpointAdvice> AdviseSet(const CheckpointSums& sums);

// AdviseJob with the rate of `segment` (the job's accelerator segment in
// the reports) for a job with fewer than kMinOwnInterruptions.
std::optional<CheckpointAdvice> AdviseJobInSegment(
    const JobReport& job, const CheckpointSums& segment);

}  // namespace goodput::core

#endif  // GOODPUT_CORE_CHECKPOINT_ADVICE_H_
