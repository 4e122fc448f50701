#include "sim/job_run.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "absl/strings/str_cat.h"

namespace goodput::sim {
namespace {

using Kind = v1::Activity;

constexpr int64_t kSecond = 1000;

}  // namespace

JobRun::JobRun(JobSpec spec, SimRandom* rng)
    : spec_(std::move(spec)), rng_(rng) {
  truth_.job_id = spec_.job_id;
  truth_.chips = spec_.chips;
  truth_.min_chips = spec_.min_chips;
  held_ = spec_.chips;
}

bool JobRun::Training() const {
  return spec_.workload == v1::JobSubmitted::TRAINING;
}

// --- Scheduler side.

void JobRun::Submit(EventSink& sink) {
  v1::Event e = Base(spec_.submit_ms, /*job_event=*/false);
  v1::JobSubmitted* s = e.mutable_job_submitted();
  s->set_chips(spec_.chips);
  s->set_accelerator(spec_.accelerator);
  s->set_workload(spec_.workload);
  s->set_framework(spec_.framework);
  (*s->mutable_labels())["team"] = spec_.team;
  s->set_step_flops(spec_.step_flops);
  if (spec_.min_chips > 0) s->set_min_chips(spec_.min_chips);
  sink.Emit(e);
  mode_ = Mode::kQueued;
  since_ms_ = spec_.submit_ms;
}

void JobRun::Allocate(int64_t t_ms, const std::string& host, EventSink& sink) {
  Book(mode_ == Mode::kQueued ? Truth::kQueued : Truth::kRecovery,
       t_ms - since_ms_);
  held_ = spec_.chips;  // a new gang gets all the chips
  repairs_.clear();
  v1::Event e = Base(t_ms, /*job_event=*/false);
  e.mutable_allocation()->set_chips(spec_.chips);
  sink.Emit(e);
  host_ = host;
  mode_ = Mode::kAttempt;
  interrupt_at_ = kNever;
  seg_ = Segment{Seg::kLaunch, t_ms, t_ms + SegmentLength(Seg::kLaunch)};
}

int64_t JobRun::next_ms() const {
  if (mode_ != Mode::kAttempt) return kNever;
  return std::min({seg_.end, interrupt_at_, NextRepair()});
}

JobRun::Outcome JobRun::Fire(EventSink& sink) {
  const int64_t repair = NextRepair();
  if (interrupt_at_ < seg_.end && interrupt_at_ <= repair) {
    return Interrupt(sink);
  }
  if (repair < seg_.end) {
    OnRepair(sink);
    return Outcome::kRunning;
  }
  FinishSegment(sink);
  return Continue(sink);
}

// --- Segments.

int64_t JobRun::SegmentLength(Seg kind) {
  switch (kind) {
    case Seg::kLaunch:
      return rng_->Between(5, 60) * kSecond;
    case Seg::kInit:
      return rng_->Between(20, 120) * kSecond;
    case Seg::kPrep:
      return rng_->Between(10, 300) * kSecond;
    case Seg::kCompile: {
      // The compile cache usually hits on a restart.
      const bool hit = rng_->Chance(compiled_once_ ? 0.7 : 0.2);
      compiled_once_ = true;
      if (hit) return rng_->Between(5, 30) * kSecond;
      const double scale = 1 + std::log2(static_cast<double>(spec_.chips)) / 10;
      return std::llround(rng_->Between(60, 600) * scale) * kSecond;
    }
    case Seg::kRestore:
      return rng_->Between(30, 300) * kSecond;
    case Seg::kStall:
      return rng_->Between(30, 540) * kSecond;
    case Seg::kCheckpoint:
      return rng_->Between(10, 120) * kSecond;
    case Seg::kRestartDelay:
      return rng_->Between(30, 180) * kSecond;
    case Seg::kReshard:
      return spec_.reshard_ms;
    case Seg::kSteps:
      break;
  }
  return kSecond;
}

void JobRun::StartSegment(Seg kind, int64_t t, EventSink& sink) {
  const Seg previous = seg_.kind;
  if (kind == Seg::kSteps) {
    StartSteps(t, sink);
    if (previous != Seg::kSteps) {
      const bool serving = spec_.workload != v1::JobSubmitted::TRAINING;
      EmitActivity(t, serving ? Kind::SERVING : Kind::TRAINING, sink);
    }
    return;
  }
  seg_ = Segment{kind, t, t + SegmentLength(kind)};
  switch (kind) {
    case Seg::kInit: {
      ++attempt_;
      first_report_ = true;
      sink.Emit([&] {
        v1::Event e = Base(t, /*job_event=*/true);
        e.mutable_started();
        return e;
      }());
      EmitActivity(t, Kind::INIT, sink);
      const double gap = rng_->Exponential(static_cast<double>(spec_.mtbi_ms));
      interrupt_at_ = t + std::max<int64_t>(kSecond, std::llround(gap));
      break;
    }
    case Seg::kPrep:
      EmitActivity(t, Kind::PREP, sink);
      break;
    case Seg::kCompile:
      EmitActivity(t, Kind::COMPILE, sink);
      break;
    case Seg::kRestore:
      EmitActivity(t, Kind::RESTORE, sink, durable_step_);
      undecided_ms_ = undecided_steps_ = 0;  // the resume point decides
      break;
    case Seg::kStall:
      EmitActivity(t, Kind::DATA_WAIT, sink);
      break;
    case Seg::kCheckpoint:
      EmitActivity(t, Kind::CHECKPOINT, sink);
      break;
    case Seg::kReshard:
      EmitActivity(t, Kind::RESHARD, sink);
      break;
    default:
      break;
  }
}

void JobRun::StartSteps(int64_t t, EventSink&) {
  // A program logs the first step of each attempt, then every k-th step:
  // the service counts a first report as one step (SPEC rule 7).
  const int64_t k = spec_.steps_per_report;
  const int64_t group = first_report_ ? 1 : k - steps_done_ % k;
  first_report_ = false;
  const int64_t steps = std::min(group, spec_.total_steps - steps_done_);
  const int64_t compute = steps * StepMs();
  Segment s{Seg::kSteps, t, t};
  s.steps = steps;
  s.wait = std::llround(compute * spec_.wait_share * (0.5 + rng_->Uniform()));
  s.idle = std::llround(compute * spec_.idle_share * (0.5 + rng_->Uniform()));
  s.end = t + s.wait + s.idle + compute;
  seg_ = s;
}

void JobRun::FinishSegment(EventSink& sink) {
  const int64_t length = seg_.end - seg_.start;
  switch (seg_.kind) {
    case Seg::kLaunch:
      Book(Truth::kIdle, length);
      break;
    case Seg::kRestartDelay:
      Book(Truth::kRecovery, length);
      break;
    case Seg::kInit:
      Book(Truth::kInit, length);
      break;
    case Seg::kPrep:
      Book(Truth::kPrep, length);
      break;
    case Seg::kCompile:
      Book(Truth::kCompile, length);
      break;
    case Seg::kRestore:
      Book(Truth::kRestore, length);
      break;
    case Seg::kStall:
      Book(Truth::kDataWait, length);
      break;
    case Seg::kReshard:
      Book(Truth::kReshard, length);
      break;
    case Seg::kCheckpoint: {
      Book(Truth::kCheckpoint, length);
      v1::Event e = Base(seg_.end, /*job_event=*/true);
      e.mutable_checkpoint()->set_step(steps_done_);
      sink.Emit(e);
      MakeDurable(steps_done_);
      break;
    }
    case Seg::kSteps:
      FinishSteps(sink);
      break;
  }
}

void JobRun::FinishSteps(EventSink& sink) {
  const int64_t compute = seg_.end - seg_.start - seg_.wait - seg_.idle;
  Book(Truth::kDataWait, seg_.wait);
  Book(Truth::kIdle, seg_.idle);
  Book(Truth::kProductive, compute);
  truth_.productive_steps += seg_.steps;
  steps_done_ += seg_.steps;
  v1::Event e = Base(seg_.end, /*job_event=*/true);
  v1::Step* step = e.mutable_step();
  step->set_step(steps_done_);
  if (seg_.wait > 0) step->set_input_wait_seconds(seg_.wait / 1e3);
  if (seg_.idle > 0) step->set_idle_seconds(seg_.idle / 1e3);
  sink.Emit(e);
  // The first step of an attempt without a restore is its resume point.
  undecided_ms_ = undecided_steps_ = 0;
  if (Training()) pending_.push_back({steps_done_, compute, seg_.steps});
  if (saving_step_ > 0) {  // an async save finished during these steps
    v1::Event c = Base(seg_.end, /*job_event=*/true);
    c.mutable_checkpoint()->set_step(saving_step_);
    sink.Emit(c);
    MakeDurable(saving_step_);
    saving_step_ = 0;
  }
}

JobRun::Outcome JobRun::Continue(EventSink& sink) {
  const int64_t t = seg_.end;
  Seg next = Seg::kSteps;
  switch (seg_.kind) {
    case Seg::kLaunch:
    case Seg::kRestartDelay:
      next = Seg::kInit;
      break;
    case Seg::kReshard:
      next = Seg::kSteps;  // the step group starts over at the new size
      break;
    case Seg::kInit:
      next = Seg::kPrep;
      break;
    case Seg::kPrep:
      next = Seg::kCompile;
      break;
    case Seg::kCompile:
      next = Training() && durable_step_ > 0 ? Seg::kRestore : Seg::kSteps;
      break;
    case Seg::kSteps:
      if (steps_done_ >= spec_.total_steps) {
        EmitEnded(t, v1::JobEnded::SUCCEEDED, sink);
        return Outcome::kDone;
      }
      next = AfterSteps();
      break;
    default:
      break;
  }
  // An interruption at a boundary comes just after it (1 ms into the
  // next segment), so that the events at the boundary stay whole.
  if (interrupt_at_ == t) ++interrupt_at_;
  StartSegment(next, t, sink);
  return Outcome::kRunning;
}

JobRun::Seg JobRun::AfterSteps() {
  if (Training() && spec_.checkpoint_every > 0 &&
      steps_done_ % spec_.checkpoint_every == 0 &&
      steps_done_ > durable_step_) {
    if (!spec_.async_checkpoint) return Seg::kCheckpoint;
    saving_step_ = steps_done_;  // reported when the next steps finish
    return Seg::kSteps;
  }
  return rng_->Chance(0.01) ? Seg::kStall : Seg::kSteps;
}

// --- Interruptions and resizes.

void JobRun::FailHostAt(int64_t t_ms) {
  interrupt_at_ = t_ms;
  force_host_failure_ = true;
}

JobRun::Outcome JobRun::Interrupt(EventSink& sink) {
  const int64_t t = interrupt_at_;
  interrupt_at_ = kNever;
  const v1::Interruption::Reason reason =
      force_host_failure_ ? v1::Interruption::HOST_FAILURE : DrawReason();
  force_host_failure_ = false;
  if (reason != v1::Interruption::HOST_FAILURE || !CanShrink()) {
    return Kill(t, reason, sink);
  }
  // Rule 14: an elastic job goes on with the chips left, until the host
  // returns.
  Resize(t, held_ - spec_.chips_per_host, sink);
  repairs_.insert(t + spec_.repair_ms);
  const double gap = rng_->Exponential(static_cast<double>(spec_.mtbi_ms));
  interrupt_at_ = t + std::max<int64_t>(kSecond, std::llround(gap));
  return Outcome::kRunning;
}

JobRun::Outcome JobRun::Kill(int64_t t, v1::Interruption::Reason reason,
                             EventSink& sink) {
  BookPartial(t, /*killed=*/true);
  ++truth_.interruptions;
  v1::Event e = Base(t, /*job_event=*/true);
  e.mutable_interruption()->set_reason(reason);
  sink.Emit(e);
  saving_step_ = 0;  // an unfinished save is not durable
  if (Training()) {
    LoseAllPending();
    steps_done_ = durable_step_;
  }
  if (reason == v1::Interruption::FAILED &&
      rng_->Chance(spec_.fatal_failures)) {
    undecided_ms_ = undecided_steps_ = 0;  // job_ended FAILED decides
    EmitEnded(t, v1::JobEnded::FAILED, sink);
    return Outcome::kDone;
  }
  if (reason == v1::Interruption::FAILED) {  // restarts on the same chips
    seg_ =
        Segment{Seg::kRestartDelay, t, t + SegmentLength(Seg::kRestartDelay)};
    return Outcome::kRunning;
  }
  mode_ = Mode::kRecovering;
  since_ms_ = t;
  repairs_.clear();  // the scheduler takes back every host, failed or not
  return Outcome::kRequeue;
}

// A program reshards only while it steps: a host failure in any other
// phase kills the attempt as in a fixed-size job.
bool JobRun::CanShrink() const {
  return spec_.min_chips > 0 && seg_.kind == Seg::kSteps &&
         held_ - spec_.chips_per_host >= spec_.min_chips;
}

// The scheduler's new allocation at `t`: the step group in flight is
// abandoned (the service counts it lost, or productive for serving), and
// the job reshards before it steps again at the new size.
void JobRun::Resize(int64_t t, int64_t held, EventSink& sink) {
  BookPartial(t, /*killed=*/true);
  held_ = held;
  ++truth_.resizes;
  v1::Event e = Base(t, /*job_event=*/false);
  e.mutable_allocation()->set_chips(held);
  sink.Emit(e);
  StartSegment(Seg::kReshard, t, sink);
}

// A failed host returns: the job grows by it inside a step group, else
// (or at a group's first instant) as soon as one is under way.
void JobRun::OnRepair(EventSink& sink) {
  const int64_t t = NextRepair();
  repairs_.erase(repairs_.begin());
  const bool stepping = seg_.kind == Seg::kSteps;
  if (!stepping || t == seg_.start) {
    repairs_.insert(stepping ? t + 1 : seg_.end + 1);
    return;
  }
  Resize(t, std::min(held_ + spec_.chips_per_host, spec_.chips), sink);
}

int64_t JobRun::NextRepair() const {
  return repairs_.empty() ? kNever : *repairs_.begin();
}

// A step's compute at the held chips: the same work on fewer chips.
int64_t JobRun::StepMs() const {
  return std::llround(static_cast<double>(spec_.step_ms) * spec_.chips / held_);
}

void JobRun::Book(Truth c, int64_t duration_ms) {
  truth_.Add(c, duration_ms);
  if (Allocated(c)) truth_.held_chip_ms += held_ * duration_ms;
}

void JobRun::BookPartial(int64_t until, bool killed) {
  const int64_t elapsed = until - seg_.start;
  Unobservable& u = truth_.unobservable;
  switch (seg_.kind) {
    case Seg::kSteps: {
      const int64_t wait = std::min(elapsed, seg_.wait);
      const int64_t idle = std::min(elapsed - wait, seg_.idle);
      const int64_t compute = elapsed - wait - idle;
      Book(Truth::kDataWait, wait);
      Book(Truth::kIdle, idle);
      const bool lost = killed && Training();
      Book(lost ? Truth::kLost : Truth::kProductive, compute);
      (killed ? u.wait_in_killed_step_ms : u.wait_in_flight_ms) += wait;
      (killed ? u.idle_in_killed_step_ms : u.idle_in_flight_ms) += idle;
      break;
    }
    case Seg::kLaunch:
      Book(Truth::kIdle, elapsed);
      break;
    case Seg::kRestartDelay:
      Book(Truth::kRecovery, elapsed);
      break;
    case Seg::kInit:
      Book(Truth::kInit, elapsed);
      break;
    case Seg::kPrep:
      Book(Truth::kPrep, elapsed);
      break;
    case Seg::kCompile:
      Book(Truth::kCompile, elapsed);
      break;
    case Seg::kRestore:
      Book(Truth::kRestore, elapsed);
      break;
    case Seg::kStall:
      Book(Truth::kDataWait, elapsed);
      break;
    case Seg::kCheckpoint:
      Book(Truth::kCheckpoint, elapsed);
      break;
    case Seg::kReshard:
      Book(Truth::kReshard, elapsed);
      break;
  }
}

v1::Interruption::Reason JobRun::DrawReason() {
  // Half of an elastic job's interruptions are host failures (the case it
  // is elastic for); the other half, and a fixed-size job's, the usual mix.
  if (spec_.min_chips > 0 && rng_->Chance(0.5)) {
    return v1::Interruption::HOST_FAILURE;
  }
  const double u = rng_->Uniform();
  if (u < 0.4) return v1::Interruption::PREEMPTED;
  if (u < 0.75) return v1::Interruption::FAILED;
  if (u < 0.9) return v1::Interruption::HOST_FAILURE;
  return v1::Interruption::MAINTENANCE;
}

void JobRun::LoseAllPending() {
  for (const Pending& p : pending_) {
    truth_.Add(Truth::kProductive, -p.compute_ms);
    truth_.Add(Truth::kLost, p.compute_ms);
    truth_.productive_steps -= p.steps;
    undecided_ms_ += p.compute_ms;
    undecided_steps_ += p.steps;
  }
  pending_.clear();
}

void JobRun::MakeDurable(int64_t step) {
  durable_step_ = std::max(durable_step_, step);
  while (!pending_.empty() && pending_.front().last_step <= step) {
    pending_.pop_front();
  }
}

// --- Events.

v1::Event JobRun::Base(int64_t t, bool job_event) const {
  v1::Event e;
  e.mutable_time()->set_seconds(t / 1000);
  e.mutable_time()->set_nanos(static_cast<int32_t>(t % 1000) * 1'000'000);
  e.set_job_id(spec_.job_id);
  if (job_event) {
    e.set_host(host_);
    e.set_attempt(absl::StrCat("a", attempt_));
  }
  return e;
}

void JobRun::EmitActivity(int64_t t, v1::Activity::Kind kind, EventSink& sink,
                          int64_t step) {
  v1::Event e = Base(t, /*job_event=*/true);
  e.mutable_activity()->set_kind(kind);
  if (step >= 0) e.mutable_activity()->set_step(step);
  sink.Emit(e);
}

void JobRun::EmitEnded(int64_t t, v1::JobEnded::Outcome outcome,
                       EventSink& sink) {
  v1::Event e = Base(t, /*job_event=*/false);
  e.mutable_job_ended()->set_outcome(outcome);
  sink.Emit(e);
  if (outcome == v1::JobEnded::SUCCEEDED) pending_.clear();  // all durable
  mode_ = Mode::kDone;
}

const JobTruth& JobRun::Close(int64_t end_ms) {
  switch (mode_) {
    case Mode::kQueued:
      Book(Truth::kQueued, end_ms - since_ms_);
      break;
    case Mode::kRecovering:
      Book(Truth::kRecovery, end_ms - since_ms_);
      break;
    case Mode::kAttempt:
      BookPartial(end_ms, /*killed=*/false);
      break;
    default:
      break;
  }
  truth_.unobservable.lost_undecided_ms = undecided_ms_;
  truth_.unobservable.lost_undecided_steps = undecided_steps_;
  truth_.ideal_step_seconds = spec_.ideal_step_s;
  truth_.ideal_seconds = truth_.productive_steps * spec_.ideal_step_s;
  return truth_;
}

}  // namespace goodput::sim
