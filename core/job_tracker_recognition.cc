// JobTracker: recognition time (SPEC section 3 rule 11; docs/metrics.md
// "Recognition time"): the settled totals the exporter turns into counters.
#include <algorithm>

#include "core/checkpoint_advice.h"
#include "core/job_tracker.h"

namespace goodput::core {
namespace {

// Issue 18, checkpoint advice of `r`'s settled time, with the job's own
// interruptions only, and what it is computed from (FleetMetrics advises
// with the segment's rate at scrape).
void SetCheckpointAdvice(v1::JobSubmitted::Workload workload,
                         int64_t checkpoints, Recognized* r) {
  JobReport job;
  job.workload = workload;
  job.chips = r->chips;
  job.nanos = r->nanos;
  for (const int64_t ns : r->nanos) job.total_ns += ns;
  for (const int64_t n : r->interruptions) job.interruptions += n;
  job.checkpoints = checkpoints;
  r->checkpoint = ObserveJob(job, checkpoints);
  const std::optional<CheckpointAdvice> a = AdviseJob(job, 0);
  if (!a) return;
  r->checkpoint_advised_s = a->advised_interval_seconds;
  r->checkpoint_actual_s = a->actual_interval_seconds;
}

}  // namespace

void JobTracker::RecognizeStep(const StepTime& st, bool first, int64_t t) {
  recog_.last_step_ns = t;
  const int64_t work = st.time_ns - st.wait_ns - st.idle_ns;
  // Rule 14: an elastic step's ideal chip-seconds against its chip-seconds.
  const double scale = Elastic() && st.chips > 0
                           ? static_cast<double>(weight_chips_) / st.chips
                           : 1.0;
  if (st.costed &&
      st.ideal_s * scale * kNanosPerSecond > static_cast<double>(work)) {
    recog_.pg_above_one_steps += st.steps;
  }
  if (first && !recog_.first_step_done) {
    recog_.first_step_done = true;
    if (recog_.attempt_start_ns) {
      recog_.observations.push_back(
          {ObservationKind::kStartup, t - *recog_.attempt_start_ns});
    }
    if (recog_.recover_from_ns) {
      recog_.observations.push_back(
          {ObservationKind::kTimeToRecover, t - *recog_.recover_from_ns});
      recog_.recover_from_ns.reset();
    }
  }
  const Attempt* a = Current();
  if (recog_.unfrozen_first >= 0 && a->max_step &&
      *a->max_step >= recog_.freeze_at_step) {
    FreezeFirstStep();
  }
}

// Rule 4: counters take a first step's compile share as estimated at its
// attempt's 10th further step or at the attempt's end.
void JobTracker::FreezeFirstStep() {
  if (recog_.unfrozen_first < 0) return;
  FirstStep& f = first_steps_[recog_.unfrozen_first];
  f.frozen_compile = FirstStepCompile(f);
  recog_.unfrozen_first = -1;
}

void JobTracker::AddFrozenFirstStep(const FirstStep& f, Recognized* r) const {
  const int64_t compile = *f.frozen_compile;
  auto add = [&](Category c, int64_t ns) {
    r->nanos[Index(c)] += ns;
    r->chip_seconds[Index(c)] += ChipSeconds(ns, f.chips);
  };
  add(Category::kCompile, compile);
  add(Category::kDataWait, f.wait_ns);
  add(Category::kIdle, f.idle_ns);
  const int64_t rest = f.time_ns - f.wait_ns - f.idle_ns - compile;
  if (f.fate == Fate::kLost) {
    add(Category::kLost, rest);
  } else if (f.fate == Fate::kDurable) {
    add(Category::kProductive, rest);
    if (f.costed) {
      r->costed_productive_ns += rest;
      r->costed_productive_chip_seconds += ChipSeconds(rest, f.chips);
      r->ideal_seconds += f.ideal_s;
    }
  }
}

int64_t JobTracker::AtRiskNanos() const {
  int64_t at_risk = at_risk_ns_ + (ServingLike() ? 0 : sink_.open_ns);
  for (const FirstStep& f : first_steps_) {
    if (f.fate != Fate::kPending) continue;
    at_risk += f.time_ns - f.wait_ns - f.idle_ns - FirstStepCompile(f);
  }
  return at_risk;
}

Recognized JobTracker::Recognize() const {
  Recognized r;
  r.nanos = sink_.nanos;
  r.nanos[Index(Category::kProductive)] -= recog_.pending_ns;
  r.costed_productive_ns = costed_productive_ns_ - recog_.pending_costed_ns;
  r.chip_seconds = sink_.chip_s;
  r.chip_seconds[Index(Category::kProductive)] -= recog_.pending_cs;
  r.costed_productive_chip_seconds =
      costed_productive_cs_ - recog_.pending_costed_cs;
  r.ideal_seconds = ideal_s_ - (pending_.empty() ? 0 : recog_.pending_ideal_s);
  for (const FirstStep& f : first_steps_) {
    if (f.frozen_compile) AddFrozenFirstStep(f, &r);
  }
  r.interruptions = recog_.interruptions;
  r.notices = recog_.notices;
  r.pg_above_one_steps = recog_.pg_above_one_steps;
  r.duplicates = duplicates_;
  r.steps = std::max<int64_t>(0, LastStep().value_or(0));
  r.at_risk_ns = AtRiskNanos();
  r.last_step_ns = recog_.last_step_ns;
  r.last_checkpoint_ns = recog_.last_checkpoint_ns;
  r.state = State();
  r.chips = weight_chips_;
  if (Elastic()) r.min_chips = min_chips_;
  r.last_event_ns = last_event_ns_;
  r.step_time = step_times_.Summary();
  SetCheckpointAdvice(workload_, recog_.checkpoints, &r);
  return r;
}

JobReport JobTracker::Spec() const {
  JobReport r;
  FillSpec(&r);
  return r;
}

}  // namespace goodput::core
