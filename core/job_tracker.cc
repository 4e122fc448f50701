#include "core/job_tracker.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "core/event_order.h"

namespace goodput::core {
namespace {

using v1::Activity;
using v1::Event;

// Length of [from, to) at or after `since`.
int64_t WindowPart(int64_t from, int64_t to, int64_t since) {
  return std::max<int64_t>(0, to - std::max(from, since));
}

Category CategoryOf(Activity::Kind kind) {
  switch (kind) {
    case Activity::INIT:
      return Category::kInit;
    case Activity::PREP:
      return Category::kPrep;
    case Activity::COMPILE:
      return Category::kCompile;
    case Activity::RESTORE:
      return Category::kRestore;
    case Activity::DATA_WAIT:
      return Category::kDataWait;
    case Activity::CHECKPOINT:
      return Category::kCheckpoint;
    case Activity::RESHARD:
      return Category::kReshard;
    case Activity::CUSTOM:
      return Category::kCustom;
    default:
      return Category::kIdle;
  }
}

}  // namespace

JobTracker::JobTracker(std::string job_id, const Config* config)
    : job_id_(std::move(job_id)), config_(config) {}

absl::StatusOr<ApplyResult> JobTracker::Apply(const Event& e) {
  const int64_t t = EventTimeNanos(e);
  resolutions_.entries.clear();
  if (absl::Status s = CheckApplicable(e, t); !s.ok()) return s;
  if (e.has_exclusion()) {
    const int64_t until = e.exclusion().until().seconds() * kNanosPerSecond +
                          e.exclusion().until().nanos();
    if (absl::Status s = Exclude(t, until); !s.ok()) return s;
    return ApplyResult::kApplied;
  }
  if (IsDuplicate(e)) {
    ++duplicates_;
    return ApplyResult::kDuplicate;
  }
  if (!started_) {
    started_ = true;
    first_event_ns_ = last_event_ns_ = cursor_ns_ = t;
  }
  // Rule 14: a resize waits for the steps at its own instant.
  if (resize_pending_ && !(e.has_step() && t == cursor_ns_)) EndResize();
  // Rule 6: a restart ends the running attempt at the job's last event.
  if (EndsRunningAttempt(e)) EndAttempt();
  Attribute(cursor_ns_, t, &sink_);
  cursor_ns_ = t;
  ApplyBody(e, t);
  if (AllAllocated()) ever_allocated_ = true;
  last_event_ns_ = t;
  exclusions_.DropBefore(t);
  return ApplyResult::kApplied;
}

absl::Status JobTracker::Exclude(int64_t start_ns, int64_t until_ns) {
  if (ended_ && start_ns >= end_ns_) {
    return absl::FailedPreconditionError(absl::StrCat(
        "time: exclusion from ", FormatTimeNanos(start_ns), " for job \"",
        job_id_, "\", which ended at ", FormatTimeNanos(end_ns_)));
  }
  if (started_ && start_ns < cursor_ns_) {
    return absl::FailedPreconditionError(absl::StrCat(
        "time: exclusion from ", FormatTimeNanos(start_ns), " is before job \"",
        job_id_, "\"'s last applied event at ", FormatTimeNanos(cursor_ns_)));
  }
  exclusions_.Add(start_ns, until_ns);
  return absl::OkStatus();
}

absl::Status JobTracker::CheckApplicable(const Event& e, int64_t t) const {
  if (e.job_id() != job_id_ || e.has_heartbeat()) {
    return absl::InvalidArgumentError(
        absl::StrCat("job_id: event for \"", e.job_id(), "\" sent to job \"",
                     job_id_, "\""));
  }
  if (ended_) {
    return absl::FailedPreconditionError(
        absl::StrCat("job_id: job \"", job_id_, "\" ended at ",
                     FormatTimeNanos(end_ns_), "; later events are rejected"));
  }
  if (started_ && t < last_event_ns_) {
    return absl::FailedPreconditionError(absl::StrCat(
        "time: ", FormatTimeNanos(t), " is before job \"", job_id_,
        "\"'s last applied event at ", FormatTimeNanos(last_event_ns_)));
  }
  return absl::OkStatus();
}

bool JobTracker::IsDuplicate(const Event& e) const {
  if (e.attempt().empty()) return false;
  const Attempt* a = FindAttempt(e.attempt());
  // A step or activity with a new id names the running id-less attempt
  // (EnsureRunning), so rule 3 judges it against that attempt's steps.
  if (a == nullptr && running_ && Current()->id.empty() &&
      (e.has_step() || e.has_activity())) {
    a = Current();
  }
  if (a == nullptr) return false;
  switch (e.body_case()) {
    case Event::kStarted:
      return true;
    case Event::kActivity:
      return a->ended;  // stale: the attempt is over
    case Event::kStep:
      return a->ended || (a->max_step && e.step().step() <= *a->max_step);
    case Event::kCheckpoint:
      return a->max_checkpoint && e.checkpoint().step() <= *a->max_checkpoint;
    case Event::kInterruption:
      return !e.interruption().notice() && a->ended;
    default:
      return false;
  }
}

bool JobTracker::EndsRunningAttempt(const Event& e) const {
  if (!running_) return false;
  if (e.has_started()) return true;
  if (!e.has_step() && !e.has_activity()) return false;
  const std::string& current = Current()->id;
  return !e.attempt().empty() && !current.empty() && e.attempt() != current;
}

void JobTracker::ApplyBody(const Event& e, int64_t t) {
  switch (e.body_case()) {
    case Event::kJobSubmitted:
      return OnSubmitted(e.job_submitted());
    case Event::kAllocation:
      return OnAllocation(e.allocation().chips());
    case Event::kStarted:
      return OnStarted(e, t);
    case Event::kActivity:
      return OnActivity(e, t);
    case Event::kStep:
      return OnStep(e, t);
    case Event::kCheckpoint:
      return OnCheckpoint(e);
    case Event::kInterruption:
      return OnInterruption(e);
    case Event::kJobEnded:
      return OnJobEnded(e.job_ended(), t);
    default:
      return;
  }
}

void JobTracker::OnSubmitted(const v1::JobSubmitted& s) {
  requested_chips_ = weight_chips_ = s.chips();
  accelerator_ = s.accelerator();
  peak_ = config_->catalog.Find(accelerator_);
  framework_ = s.framework();
  if (s.workload() != v1::JobSubmitted::WORKLOAD_UNSPECIFIED) {
    workload_ = s.workload();
  }
  labels_.clear();
  labels_.insert(s.labels().begin(), s.labels().end());
  step_flops_ = s.step_flops();
  step_bytes_ = s.step_bytes();
  // Rule 14 (validation keeps 0 < min_chips <= chips; core clamps).
  min_chips_ = s.has_min_chips() && s.chips() > 0
                   ? std::clamp<int64_t>(s.min_chips(), 0, s.chips())
                   : 0;
}

void JobTracker::OnAllocation(int64_t chips) {
  if (weight_chips_ == 0) weight_chips_ = chips;
  if (requested_chips_ == 0) requested_chips_ = chips;
  const bool was_allocated = AllAllocated();
  const int64_t held_before = Held();
  alloc_chips_ = chips;
  const int64_t needed = Elastic() ? min_chips_ : requested_chips_;
  bool enough = chips > 0 && chips >= needed;
  alloc_ = enough ? Alloc::kEnough : Alloc::kShort;
  if (enough) recovering_ = false;
  // Rule 14: a resize changes the held chips of an all-allocated job.
  if (Elastic() && was_allocated && enough && Held() != held_before &&
      !resize_pending_) {
    resize_pending_ = true;
    step_held_ = held_before;
  }
}

// Rule 14: the step in flight at a resize ends (lost, or productive in no
// step for serving), and the time before an attempt's first report stays
// idle: rule 2's conversion starts at the resize.
void JobTracker::EndResize() {
  resize_pending_ = false;
  SettleResize(&sink_);
}

void JobTracker::SettleResize(Sink* sink) const {
  GapToIdle(sink);
  SettleOpen(Category::kLost, sink);
}

void JobTracker::OnStarted(const Event& e, int64_t t) {
  job_event_seen_ = true;
  recovering_ = false;
  GapToIdle(&sink_);  // the new attempt begins here (rule 2)
  StartAttempt(e.attempt());
}

void JobTracker::OnActivity(const Event& e, int64_t t) {
  EnsureRunning(e, t);
  FirstReport(/*step=*/false);
  const Activity& act = e.activity();
  Attempt* a = Current();
  if (act.kind() == Activity::COMPILE && !a->max_step) a->compile_seen = true;
  if (act.kind() == Activity::RESTORE && act.has_step() && !a->resumed) {
    a->restore_step = act.step();
    last_checkpoint_ =
        std::max(last_checkpoint_.value_or(act.step()), act.step());
    Resume(act.step());
  }
  activity_ = act.kind();
  custom_name_ = act.kind() == Activity::CUSTOM ? act.name() : "";
}

void JobTracker::OnStep(const Event& e, int64_t t) {
  const v1::Step& s = e.step();
  EnsureRunning(e, t);
  Attempt* a = Current();
  if (e.attempt().empty() && a->max_step && s.step() <= *a->max_step) {
    // Rule 7: a restart seen only as the step number going backwards.
    EndAttempt();
    recovering_ = false;  // no recovery is counted
    StartAttempt("");
    recog_.attempt_start_ns.reset();  // unknown start, no recovery
    recog_.recover_from_ns.reset();
    a = Current();
  }
  FirstReport(/*step=*/true);
  const bool first = !a->max_step.has_value();
  StepTime st = MeasureStep(s, StepsCompleted(s));
  if (first && !a->resumed) Resume(s.step() - 1);
  a->max_step = s.step();
  if (first && !a->compile_seen && st.time_ns > 0) {
    RecordFirstStep(st);
  } else {
    if (!first) AddToMean(st);
    AddShares(st);
  }
  if (!first) step_times_.Add(st.time_ns, st.steps, t);
  RecognizeStep(st, first, t);
  if (!Stepping()) activity_ = Activity::KIND_UNSPECIFIED;
}

void JobTracker::OnCheckpoint(const Event& e) {
  const int64_t step = e.checkpoint().step();
  recog_.last_checkpoint_ns = cursor_ns_;
  ++recog_.checkpoints;
  if (!e.attempt().empty()) {
    Attempt* a = FindAttempt(e.attempt());
    if (a != nullptr) a->max_checkpoint = step;
  }
  MakeDurableThrough(step);
}

void JobTracker::OnInterruption(const Event& e) {
  const int reason = ReasonIndex(e.interruption().reason());
  if (e.interruption().notice()) {
    ++recog_.notices[reason];
    return;
  }
  GapToIdle(&sink_);
  if (running_) {
    recog_.ending_reason = reason;
    EndAttempt();
  } else if (AllAllocated()) {
    recovering_ = true;  // lost its chips before any attempt ran
  }
}

void JobTracker::OnJobEnded(const v1::JobEnded& e, int64_t t) {
  const bool succeeded = e.outcome() == v1::JobEnded::SUCCEEDED;
  GapToIdle(&sink_);
  if (running_) {
    FreezeFirstStep();
    SettleOpenStep(succeeded ? Category::kIdle : Category::kLost);
    Current()->ended = true;
    running_ = false;
  }
  if (succeeded && !pending_resume_) {
    MakeAllDurable();
  } else {
    LoseAllPending();
  }
  ended_ = true;
  end_ns_ = t;
  activity_ = Activity::KIND_UNSPECIFIED;
}

// --- Attribution.

// Excluded time is `excluded` whatever the job does in it; the rest is
// attributed as if the excluded pieces were not there.
void JobTracker::Attribute(int64_t from, int64_t to, Sink* sink) const {
  exclusions_.Split(from, to, [&](int64_t a, int64_t b, bool excluded) {
    if (!excluded) return AttributeCounted(a, b, sink);
    AddInterval(Category::kExcluded, a, b, sink);
  });
}

void JobTracker::AttributeCounted(int64_t from, int64_t to, Sink* sink) const {
  if (to <= from) return;
  if (!AllAllocated()) {
    Category c = ever_allocated_ ? Category::kRecovery : Category::kQueued;
    return AddInterval(c, from, to, sink);
  }
  if (!running_ || !Current()->reported) return AccrueGap(from, to, sink);
  if (Stepping()) return AccrueStep(from, to, sink);
  const Category c = CategoryOf(activity_);
  AddInterval(c, from, to, sink);
  if (c == Category::kCustom) {
    sink->custom[custom_name_] += WindowPart(from, to, config_->since_ns);
  }
}

void JobTracker::AccrueStep(int64_t from, int64_t to, Sink* sink) const {
  AccrueUntilStall(from, to, &sink->open_ns, &sink->open_prefix_ns,
                   &sink->open_cns, sink);
}

// Rule 2: the gap may become step time, so it stalls as in-flight time does.
void JobTracker::AccrueGap(int64_t from, int64_t to, Sink* sink) const {
  AccrueUntilStall(from, to, &sink->gap_ns, &sink->gap_prefix_ns,
                   &sink->gap_cns, sink);
}

// Adds [from, to) to `*ns` (and its part before the window to `*prefix_ns`)
// up to stall_after after the last event; the rest is a hang: idle (rule 2).
// Excluded time does not count towards stall_after.
void JobTracker::AccrueUntilStall(int64_t from, int64_t to, int64_t* ns,
                                  int64_t* prefix_ns, double* cns,
                                  Sink* sink) const {
  const int64_t stall =
      exclusions_.AfterIncluded(last_event_ns_, config_->stall_after_ns);
  const int64_t mid = std::clamp(stall, from, to);
  *ns += mid - from;
  *cns += static_cast<double>(mid - from) * WeightNow();
  if (config_->since_ns > from) {
    *prefix_ns += std::min(mid, config_->since_ns) - from;
  }
  AddInterval(Category::kIdle, mid, to, sink);
}

// Rule 2: the gap before an attempt's first report stays idle unless that
// report is a step.
void JobTracker::GapToIdle(Sink* sink) const {
  AddNanos(Category::kIdle, sink->gap_ns - sink->gap_prefix_ns,
           AverageChips(sink->gap_cns, sink->gap_ns), sink);
  sink->gap_ns = sink->gap_prefix_ns = 0;
  sink->gap_cns = 0;
}

// Rule 2: the current attempt's first activity leaves the gap idle; its
// first step (an attempt that reports no activities) takes it as its time.
void JobTracker::FirstReport(bool step) {
  Attempt* a = Current();
  if (a->reported) return;
  a->reported = true;
  if (!step) return GapToIdle(&sink_);
  sink_.open_ns += sink_.gap_ns;
  sink_.open_prefix_ns += sink_.gap_prefix_ns;
  sink_.open_cns += sink_.gap_cns;
  sink_.gap_ns = sink_.gap_prefix_ns = 0;
  sink_.gap_cns = 0;
}

void JobTracker::AddInterval(Category c, int64_t from, int64_t to,
                             Sink* sink) const {
  AddNanos(c, WindowPart(from, to, config_->since_ns), WeightNow(), sink);
}

// `ns` of category `c`, counting `chips` chips in the elastic sums.
void JobTracker::AddNanos(Category c, int64_t ns, double chips,
                          Sink* sink) const {
  sink->nanos[Index(c)] += ns;
  sink->chip_s[Index(c)] += ChipSeconds(ns, chips);
}

bool JobTracker::AllAllocated() const {
  if (alloc_ == Alloc::kShort || recovering_) return false;
  return alloc_ == Alloc::kEnough || job_event_seen_;
}

// Rule 14: min(allocated, chips), and chips until the first allocation.
int64_t JobTracker::Held() const {
  if (alloc_chips_ < 0) return requested_chips_;
  return std::min(alloc_chips_, requested_chips_);
}

// The held chips a step completing now completes at: before a pending
// resize, the ones before it.
int64_t JobTracker::StepHeld() const {
  return resize_pending_ ? step_held_ : Held();
}

// The chips an instant counts with now in an elastic job's chip-weighted
// sums (rule 14): held while all-allocated, else chips. 0 for a fixed-size
// job, whose sums weight its nanoseconds at report time.
double JobTracker::WeightNow() const {
  if (!Elastic()) return 0;
  return static_cast<double>(AllAllocated() ? Held() : requested_chips_);
}

bool JobTracker::Stepping() const {
  return activity_ == Activity::KIND_UNSPECIFIED ||
         activity_ == Activity::TRAINING || activity_ == Activity::SERVING;
}

// --- Attempts.

JobTracker::Attempt* JobTracker::Current() {
  return attempts_.empty() ? nullptr : &attempts_.back();
}

const JobTracker::Attempt* JobTracker::Current() const {
  return attempts_.empty() ? nullptr : &attempts_.back();
}

// The latest attempt named `id`: a linear search from the back, since a
// job has few attempts and its events name the current one.
const JobTracker::Attempt* JobTracker::FindAttempt(
    const std::string& id) const {
  if (id.empty()) return nullptr;
  for (auto it = attempts_.rbegin(); it != attempts_.rend(); ++it) {
    if (it->id == id) return &*it;
  }
  return nullptr;
}

JobTracker::Attempt* JobTracker::FindAttempt(const std::string& id) {
  return const_cast<Attempt*>(std::as_const(*this).FindAttempt(id));
}

void JobTracker::EnsureRunning(const Event& e, int64_t t) {
  job_event_seen_ = true;
  recovering_ = false;
  if (!running_) return StartAttempt(e.attempt());
  Attempt* a = Current();
  if (a->id.empty() && !e.attempt().empty()) {  // the attempt names itself
    a->id = e.attempt();
  }
}

void JobTracker::StartAttempt(const std::string& id) {
  attempts_.push_back(Attempt{id});
  running_ = true;
  activity_ = Activity::KIND_UNSPECIFIED;
  custom_name_.clear();
  recog_.attempt_start_ns = cursor_ns_;
  recog_.first_step_done = false;
}

void JobTracker::EndAttempt() {
  GapToIdle(&sink_);
  FreezeFirstStep();
  ++recog_.interruptions[recog_.ending_reason];
  recog_.ending_reason = kNumReasons - 1;
  if (recog_.attempt_start_ns) {
    recog_.observations.push_back({ObservationKind::kTimeBetweenInterruptions,
                                   cursor_ns_ - *recog_.attempt_start_ns});
  }
  recog_.recover_from_ns = cursor_ns_;
  SettleOpenStep(Category::kLost);
  Current()->ended = true;
  running_ = false;
  recovering_ = true;
  pending_resume_ = true;
  activity_ = Activity::KIND_UNSPECIFIED;
  custom_name_.clear();
}

bool JobTracker::ServingLike() const {
  return workload_ == v1::JobSubmitted::SERVING ||
         workload_ == v1::JobSubmitted::BULK_INFERENCE;
}

void JobTracker::SettleOpenStep(Category training_fate) {
  SettleOpen(training_fate, &sink_);
}

void JobTracker::SettleOpen(Category training_fate, Sink* sink) const {
  const Category c = ServingLike() ? Category::kProductive : training_fate;
  AddNanos(c, sink->open_ns - sink->open_prefix_ns,
           AverageChips(sink->open_cns, sink->open_ns), sink);
  sink->open_ns = sink->open_prefix_ns = 0;
  sink->open_cns = 0;
}

}  // namespace goodput::core
