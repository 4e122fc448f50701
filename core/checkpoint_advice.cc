#include "core/checkpoint_advice.h"

#include <cmath>

namespace goodput::core {
namespace {

// M: the job's own mean time between interruptions, or the segment's rate
// scaled to the job's chips; nullopt when neither is known.
std::optional<double> Mtbi(const CheckpointObservation& job, double rate,
                           bool* from_segment) {
  *from_segment = job.interruptions < kMinOwnInterruptions;
  if (!*from_segment) {
    return job.run_seconds / static_cast<double>(job.interruptions);
  }
  if (!(rate > 0) || job.chips <= 0) return std::nullopt;
  return 1.0 / (rate * static_cast<double>(job.chips));
}

double Seconds(const JobReport& job, Category c) {
  return static_cast<double>(job.nanos[Index(c)]) / 1e9;
}

}  // namespace

std::optional<CheckpointObservation> ObserveJob(const JobReport& job,
                                                int64_t checkpoints) {
  if (job.workload != v1::JobSubmitted::TRAINING) return std::nullopt;
  CheckpointObservation o;
  o.run_seconds = static_cast<double>(job.total_ns) / 1e9 -
                  Seconds(job, Category::kQueued) -
                  Seconds(job, Category::kRecovery);
  o.interruptions = job.interruptions;
  o.checkpoint_seconds = Seconds(job, Category::kCheckpoint);
  o.checkpoints = checkpoints;
  o.restart_seconds =
      Seconds(job, Category::kRecovery) + Seconds(job, Category::kInit) +
      Seconds(job, Category::kCompile) + Seconds(job, Category::kRestore);
  o.chips = job.chips;
  return o;
}

double ExpectedLostAndCheckpointShare(double interval, double save, double m) {
  return save / interval + (interval + save) / (2 * m);
}

std::optional<CheckpointAdvice> AdviseCheckpoint(
    const CheckpointObservation& job,
    double segment_interruptions_per_chip_second) {
  if (job.checkpoints <= 0 || job.chips <= 0) return std::nullopt;
  CheckpointAdvice a;
  std::optional<double> m =
      Mtbi(job, segment_interruptions_per_chip_second, &a.mtbi_from_segment);
  if (!m || !(*m > 0)) return std::nullopt;
  a.mtbi_seconds = *m;
  a.save_seconds = job.checkpoint_seconds / job.checkpoints;
  if (!(a.save_seconds > 0)) return std::nullopt;  // no blocking cost
  if (job.interruptions > 0) {
    a.restart_seconds = job.restart_seconds / job.interruptions;
  }
  a.advised_interval_seconds = std::sqrt(2 * a.save_seconds * a.mtbi_seconds);
  a.expected_share_at_advised = ExpectedLostAndCheckpointShare(
      a.advised_interval_seconds, a.save_seconds, a.mtbi_seconds);
  if (job.run_seconds > 0) {
    a.actual_interval_seconds = job.run_seconds / job.checkpoints;
    a.expected_share_at_actual = ExpectedLostAndCheckpointShare(
        *a.actual_interval_seconds, a.save_seconds, a.mtbi_seconds);
  }
  return a;
}

void AddCheckpointSums(const JobReport& job, CheckpointSums* sums) {
  if (job.chips <= 0) return;
  const std::optional<CheckpointObservation> o =
      ObserveJob(job, job.checkpoints);
  if (!o) return;
  sums->run_seconds += o->run_seconds;
  sums->run_chip_seconds += o->run_seconds * static_cast<double>(o->chips);
  sums->checkpoint_seconds += o->checkpoint_seconds;
  sums->restart_seconds += o->restart_seconds;
  sums->interruptions += o->interruptions;
  sums->checkpoints += o->checkpoints;
}

void AddCheckpointSums(const CheckpointSums& from, CheckpointSums* to) {
  to->run_seconds += from.run_seconds;
  to->run_chip_seconds += from.run_chip_seconds;
  to->checkpoint_seconds += from.checkpoint_seconds;
  to->restart_seconds += from.restart_seconds;
  to->interruptions += from.interruptions;
  to->checkpoints += from.checkpoints;
}

double InterruptionsPerChipSecond(const CheckpointSums& sums) {
  if (!(sums.run_chip_seconds > 0)) return 0;
  return static_cast<double>(sums.interruptions) / sums.run_chip_seconds;
}

std::optional<CheckpointAdvice> AdviseSet(const CheckpointSums& sums) {
  CheckpointObservation o;
  o.run_seconds = sums.run_seconds;
  o.interruptions = sums.interruptions;
  o.checkpoint_seconds = sums.checkpoint_seconds;
  o.checkpoints = sums.checkpoints;
  o.restart_seconds = sums.restart_seconds;
  o.chips = 1;  // M is the set's own: chips do not scale it
  return AdviseCheckpoint(o, 0);
}

std::optional<CheckpointAdvice> AdviseJobInSegment(
    const JobReport& job, const CheckpointSums& segment) {
  return AdviseJob(job, InterruptionsPerChipSecond(segment));
}

std::optional<CheckpointAdvice> AdviseJob(
    const JobReport& job, double segment_interruptions_per_chip_second) {
  const std::optional<CheckpointObservation> o =
      ObserveJob(job, job.checkpoints);
  if (!o) return std::nullopt;
  return AdviseCheckpoint(*o, segment_interruptions_per_chip_second);
}

}  // namespace goodput::core
