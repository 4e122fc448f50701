// JobTracker: step completions, durability and lost work (SPEC section 3
// rules 2, 4, 5, 7), and the report.
#include <algorithm>

#include "core/job_tracker.h"

namespace goodput::core {
namespace {

// `ns` of category `c` at `chips` chips into a report (the chip-seconds
// count only for an elastic job, whose `chips` are then > 0).
void AddToReport(Category c, int64_t ns, double chips, JobReport* r) {
  r->nanos[Index(c)] += ns;
  r->chip_seconds[Index(c)] +=
      static_cast<double>(ns) * chips / kNanosPerSecond;
}

int64_t Share(int64_t x, int64_t y, int64_t prefix) {
  return std::max<int64_t>(0, y - std::max(x, prefix));
}

int64_t NanosAtMost(double seconds, int64_t cap) {
  double ns = seconds * static_cast<double>(kNanosPerSecond);
  return ns >= static_cast<double>(cap) ? cap : static_cast<int64_t>(ns);
}

double IdealShare(double ideal_s, int64_t part, int64_t whole) {
  if (whole <= 0) return 0;
  return ideal_s * static_cast<double>(part) / static_cast<double>(whole);
}

int64_t Sum(const ReasonCounts& counts) {
  int64_t sum = 0;
  for (int64_t n : counts) sum += n;
  return sum;
}

// floor(a * b / c) without overflow, for c > 0.
int64_t MulDiv(int64_t a, int64_t b, int64_t c) {
  return static_cast<int64_t>(static_cast<__int128>(a) * b / c);
}

}  // namespace

int64_t JobTracker::StepsCompleted(const v1::Step& s) const {
  const Attempt* a = Current();
  if (a->max_step) return s.step() - *a->max_step;
  if (a->restore_step && *a->restore_step < s.step()) {
    return s.step() - *a->restore_step;
  }
  return 1;  // resumed from step - 1 (rule 7)
}

JobTracker::StepTime JobTracker::MeasureStep(const v1::Step& s, int64_t steps) {
  StepTime st;
  st.time_ns = sink_.open_ns;
  st.prefix_ns = sink_.open_prefix_ns;
  st.chips = AverageChips(sink_.open_cns, sink_.open_ns);
  st.held = Elastic() ? StepHeld() : 0;
  sink_.open_ns = sink_.open_prefix_ns = 0;
  sink_.open_cns = 0;
  st.wait_ns = NanosAtMost(s.input_wait_seconds(), st.time_ns);
  st.idle_ns = NanosAtMost(s.idle_seconds(), st.time_ns - st.wait_ns);
  st.steps = steps;
  st.last_step = s.step();
  st.first_step = s.step() - steps + 1;
  CostStep(s, &st);
  return st;
}

void JobTracker::CostStep(const v1::Step& s, StepTime* st) const {
  double flops = s.flops(), bytes = s.bytes();
  if (flops <= 0 && bytes <= 0) {  // no own cost: the job's default
    flops = step_flops_ * static_cast<double>(st->steps);
    bytes = step_bytes_ * static_cast<double>(st->steps);
  }
  const ChipPeak* peak = peak_;
  st->costed = peak != nullptr && weight_chips_ > 0 && (flops > 0 || bytes > 0);
  st->ideal_s = 0;
  if (!st->costed) return;
  const double chips = static_cast<double>(weight_chips_);
  if (peak->flops_per_second > 0) {
    st->ideal_s = flops / (chips * peak->flops_per_second);
  }
  if (peak->bytes_per_second > 0) {
    st->ideal_s =
        std::max(st->ideal_s, bytes / (chips * peak->bytes_per_second));
  }
}

void JobTracker::AddShares(const StepTime& st) {
  const int64_t w = st.wait_ns, i = st.idle_ns, p = st.prefix_ns;
  AddNanos(Category::kDataWait, Share(0, w, p), st.chips, &sink_);
  AddNanos(Category::kIdle, Share(w, w + i, p), st.chips, &sink_);
  const int64_t rest = st.time_ns - w - i;
  const int64_t rest_window = Share(w + i, st.time_ns, p);
  AddNanos(Category::kProductive, rest_window, st.chips, &sink_);
  const double ideal =
      st.costed ? IdealShare(st.ideal_s, rest_window, rest) : 0;
  if (st.costed) {
    costed_productive_ns_ += rest_window;
    costed_productive_cs_ += ChipSeconds(rest_window, st.chips);
    ideal_s_ += ideal;
  }
  StepTime windowed = st;
  windowed.ideal_s = ideal;
  if (ServingLike()) {
    max_durable_step_ =
        std::max(max_durable_step_.value_or(st.last_step), st.last_step);
  } else {
    RecordCompletion(windowed, -1, rest, rest_window);
  }
}

// Rule 4's mean (rule 14: per held chips for an elastic job).
void JobTracker::AddToMean(const StepTime& st) {
  if (Elastic()) {
    Mean& m = elastic_means_[st.held];
    m.sum_ns += st.time_ns;
    m.steps += st.steps;
    return;
  }
  mean_sum_ns_ += st.time_ns;
  mean_steps_ += st.steps;
}

JobTracker::Mean JobTracker::MeanFor(int64_t held) const {
  if (!Elastic()) return Mean{mean_sum_ns_, mean_steps_};
  auto it = elastic_means_.find(held);
  return it == elastic_means_.end() ? Mean{} : it->second;
}

void JobTracker::RecordFirstStep(const StepTime& st) {
  const Fate fate = ServingLike() ? Fate::kDurable : Fate::kPending;
  first_steps_.push_back(FirstStep{st.time_ns, st.prefix_ns, st.wait_ns,
                                   st.idle_ns, st.steps, st.ideal_s, st.costed,
                                   fate, std::nullopt, st.chips, st.held});
  recog_.unfrozen_first = static_cast<int>(first_steps_.size()) - 1;
  recog_.freeze_at_step = st.last_step + 10;
  if (fate == Fate::kDurable) {
    max_durable_step_ =
        std::max(max_durable_step_.value_or(st.last_step), st.last_step);
    return;
  }
  RecordCompletion(st, static_cast<int>(first_steps_.size()) - 1, 0, 0);
}

void JobTracker::RecordCompletion(const StepTime& st, int first_ref,
                                  int64_t rest, int64_t rest_window) {
  pending_.push_back(Completion{st.first_step, st.last_step, rest, rest_window,
                                st.ideal_s, st.costed, first_ref, st.chips});
  if (first_ref >= 0) return;
  at_risk_ns_ += rest;
  recog_.pending_ns += rest_window;
  recog_.pending_cs += ChipSeconds(rest_window, st.chips);
  if (st.costed) {
    recog_.pending_costed_ns += rest_window;
    recog_.pending_costed_cs += ChipSeconds(rest_window, st.chips);
    recog_.pending_ideal_s += st.ideal_s;
  }
}

// Rule 7: completions above `step` from earlier attempts are lost, the rest
// is durable. Called before the current attempt completes any step, so
// every pending completion is from an earlier attempt.
void JobTracker::Resume(int64_t step) {
  Current()->resumed = true;
  pending_resume_ = false;
  while (!pending_.empty() && pending_.back().last_step > step) {
    Completion& c = pending_.back();
    if (c.first_step <= step && c.first_ref < 0) {
      Lose(Split(&c, step));
      break;
    }
    Lose(c);
    pending_.pop_back();
  }
  MakeAllDurable();
}

void JobTracker::MakeDurableThrough(int64_t step) {
  last_checkpoint_ = std::max(last_checkpoint_.value_or(step), step);
  size_t done = 0;
  for (; done < pending_.size() && pending_[done].first_step <= step; ++done) {
    Completion& c = pending_[done];
    if (c.last_step > step) {
      if (c.first_ref >= 0) break;  // a first step is never split
      Completion upper = Split(&c, step);
      Durable(c);
      c = upper;
      break;
    }
    Durable(c);
  }
  pending_.erase(pending_.begin(), pending_.begin() + done);
  ShrinkPending();
}

// Gives back most of pending_'s spare capacity once it has drained (after
// a checkpoint or resume), so an idle job holds no completion buffer.
void JobTracker::ShrinkPending() {
  if (pending_.capacity() <= 2 * pending_.size() + 2) return;
  std::vector<Completion>(pending_.begin(), pending_.end()).swap(pending_);
}

JobTracker::Completion JobTracker::SplitOff(Completion* c,
                                            int64_t through_step) {
  const int64_t n = c->last_step - c->first_step + 1;
  const int64_t k = through_step - c->first_step + 1;
  Completion upper = *c;
  upper.first_step = through_step + 1;
  c->last_step = through_step;
  const int64_t rest = MulDiv(c->rest_ns, k, n);
  const int64_t rest_window = MulDiv(c->rest_window_ns, k, n);
  const double ideal = c->ideal_s * static_cast<double>(k) / n;
  upper.rest_ns -= rest;
  upper.rest_window_ns -= rest_window;
  upper.ideal_s -= ideal;
  c->rest_ns = rest;
  c->rest_window_ns = rest_window;
  c->ideal_s = ideal;
  return upper;
}

JobTracker::Completion JobTracker::Split(Completion* c, int64_t through_step) {
  if (resolutions_.on) {
    resolutions_.entries.push_back({Resolution::kSplit, *c, through_step});
  }
  return SplitOff(c, through_step);
}

void JobTracker::Durable(const Completion& c) {
  if (c.first_ref < 0 && resolutions_.on) {
    resolutions_.entries.push_back({Resolution::kDurable, c});
  }
  if (c.first_ref >= 0) {
    first_steps_[c.first_ref].fate = Fate::kDurable;
  } else {
    at_risk_ns_ -= c.rest_ns;
    recog_.pending_ns -= c.rest_window_ns;
    recog_.pending_cs -= ChipSeconds(c.rest_window_ns, c.chips);
    if (c.costed) {
      recog_.pending_costed_ns -= c.rest_window_ns;
      recog_.pending_costed_cs -= ChipSeconds(c.rest_window_ns, c.chips);
      recog_.pending_ideal_s -= c.ideal_s;
    }
  }
  max_durable_step_ =
      std::max(max_durable_step_.value_or(c.last_step), c.last_step);
}

void JobTracker::Lose(const Completion& c) {
  lost_steps_ += c.last_step - c.first_step + 1;
  if (c.first_ref >= 0) {
    first_steps_[c.first_ref].fate = Fate::kLost;
    return;
  }
  if (resolutions_.on) resolutions_.entries.push_back({Resolution::kLost, c});
  const double cs = ChipSeconds(c.rest_window_ns, c.chips);
  AddNanos(Category::kProductive, -c.rest_window_ns, c.chips, &sink_);
  AddNanos(Category::kLost, c.rest_window_ns, c.chips, &sink_);
  at_risk_ns_ -= c.rest_ns;
  recog_.pending_ns -= c.rest_window_ns;
  recog_.pending_cs -= cs;
  if (c.costed) {
    costed_productive_ns_ -= c.rest_window_ns;
    costed_productive_cs_ -= cs;
    ideal_s_ -= c.ideal_s;
    recog_.pending_costed_ns -= c.rest_window_ns;
    recog_.pending_costed_cs -= cs;
    recog_.pending_ideal_s -= c.ideal_s;
  }
}

void JobTracker::LoseAllPending() {
  for (const Completion& c : pending_) Lose(c);
  pending_.clear();
  ShrinkPending();
}

void JobTracker::MakeAllDurable() {
  for (const Completion& c : pending_) Durable(c);
  pending_.clear();
  ShrinkPending();
}

// --- Report.

JobReport JobTracker::Report(int64_t as_of_ns) const {
  JobReport r;
  FillSpec(&r);
  Sink s = sink_;
  if (resize_pending_) SettleResize(&s);  // no step follows it now
  const int64_t end = ended_ ? end_ns_ : std::max(as_of_ns, last_event_ns_);
  if (!ended_) Attribute(cursor_ns_, end, &s);
  GapToIdle(&s);  // nothing reported yet: idle (rule 2)
  r.at_risk_ns = at_risk_ns_ + (ServingLike() ? 0 : s.open_ns);
  // In-flight step time is productive while the job runs (rule 2).
  SettleOpen(Category::kProductive, &s);
  r.nanos = s.nanos;
  r.chip_seconds = s.chip_s;
  r.custom_nanos = s.custom;
  r.costed_productive_ns = costed_productive_ns_;
  r.costed_productive_chip_seconds = costed_productive_cs_;
  // Lost steps take their ideal time back out: keep the rounding residue
  // from going below zero.
  r.ideal_seconds = std::max(0.0, ideal_s_);
  AddFirstSteps(&r);
  r.total_ns =
      std::max<int64_t>(0, end - std::max(first_event_ns_, config_->since_ns));
  r.step_time = step_times_.Summary();
  return r;
}

// Rule 4: a first step's time above the mean per-step time of the job's
// other (non-first) completions is compile, recomputed as steps arrive.
void JobTracker::AddFirstSteps(JobReport* r) const {
  for (const FirstStep& f : first_steps_) {
    const int64_t avail = f.time_ns - f.wait_ns - f.idle_ns;
    const int64_t compile = FirstStepCompile(f);
    const int64_t c = compile, cw = c + f.wait_ns, cwi = cw + f.idle_ns;
    AddToReport(Category::kCompile, Share(0, c, f.prefix_ns), f.chips, r);
    AddToReport(Category::kDataWait, Share(c, cw, f.prefix_ns), f.chips, r);
    AddToReport(Category::kIdle, Share(cw, cwi, f.prefix_ns), f.chips, r);
    const int64_t rest = avail - compile;
    const int64_t rest_window = Share(cwi, f.time_ns, f.prefix_ns);
    if (f.fate == Fate::kLost) {
      AddToReport(Category::kLost, rest_window, f.chips, r);
      continue;
    }
    AddToReport(Category::kProductive, rest_window, f.chips, r);
    if (f.fate == Fate::kPending) r->at_risk_ns += rest;
    if (f.costed) {
      r->costed_productive_ns += rest_window;
      r->costed_productive_chip_seconds += ChipSeconds(rest_window, f.chips);
      r->ideal_seconds += IdealShare(f.ideal_s, rest_window, rest);
    }
  }
}

// Rule 14: an elastic job's mean is of the steps completed at the held
// chips at which the first step completed.
int64_t JobTracker::FirstStepCompile(const FirstStep& f) const {
  const Mean mean = MeanFor(f.held);
  if (mean.steps == 0) return 0;
  const int64_t avail = f.time_ns - f.wait_ns - f.idle_ns;
  const int64_t expected = MulDiv(f.steps, mean.sum_ns, mean.steps);
  return std::clamp<int64_t>(f.time_ns - expected, 0, avail);
}

std::optional<int64_t> JobTracker::LastStep() const {
  std::optional<int64_t> last = max_durable_step_;
  if (!pending_.empty()) {
    last = std::max(last.value_or(pending_.back().last_step),
                    pending_.back().last_step);
  }
  return last;
}

JobStateKind JobTracker::State() const {
  if (ended_) return JobStateKind::kEnded;
  if (!ever_allocated_) return JobStateKind::kQueued;
  return AllAllocated() ? JobStateKind::kRunning : JobStateKind::kRecovering;
}

void JobTracker::FillSpec(JobReport* r) const {
  r->job_id = job_id_;
  r->chips = weight_chips_;
  if (Elastic()) r->min_chips = min_chips_;
  r->accelerator = accelerator_;
  r->workload = workload_;
  r->framework = framework_;
  r->labels = labels_;
  r->state = State();
  r->last_step = LastStep();
  r->last_checkpoint = last_checkpoint_;
  if (max_durable_step_ &&
      (!r->last_checkpoint || *max_durable_step_ > *r->last_checkpoint)) {
    r->last_checkpoint = max_durable_step_;
  }
  r->lost_steps = lost_steps_;
  r->interruptions = Sum(recog_.interruptions);
  r->duplicates = duplicates_;
  r->notices = Sum(recog_.notices);
  r->checkpoints = recog_.checkpoints;
}

}  // namespace goodput::core
