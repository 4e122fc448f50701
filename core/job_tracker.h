#ifndef GOODPUT_CORE_JOB_TRACKER_H_
#define GOODPUT_CORE_JOB_TRACKER_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/config.h"
#include "core/exclusions.h"
#include "core/recognition.h"
#include "core/report.h"
#include "core/step_time_stats.h"
#include "proto/event.pb.h"
#include "proto/tracker_state.pb.h"

namespace goodput::core {

enum class ApplyResult { kApplied, kDuplicate };

// The JobTrackerState layout that SaveState writes and FromState reads.
// Version 2: rule 2's start gap (Sink.gap_ns, Attempt.reported); a
// version-1 record held the gap in the open step and is rebuilt instead.
// Version 3: rule 14's elastic jobs (min_chips, the allocation, a pending
// resize, chip-weighted sums, per-size step means); a version-2 record
// has none of them and is rebuilt instead.
// Version 4: exclusions (the job's excluded intervals, category
// `excluded`); a version-3 record is loaded as one with no exclusions.
// Version 5: step times (issue 18, slow steps); a version-3 or 4 record is
// loaded as one with no step times yet.
// Version 6: the checkpoint count (issue 18, checkpoint advice).
// Version 7: the pending completions and the recent step reports as
// columns of packed numbers (issue 16: a quarter of the bytes a running
// job's state record had, and far cheaper to write); versions 3 to 6, with
// one message each, are loaded as before.
inline constexpr uint32_t kJobTrackerStateVersion = 7;

// The goodput state machine of one job (SPEC section 3): takes the job's
// events in apply order and attributes every instant of its lifetime to one
// category, incrementally (O(1) amortized per event; memory bounded by the
// job's non-durable step completions and its attempts). Attribution is lazy:
// time from the previous event to the next is attributed when the next one
// arrives, under the state the previous one left. A copyable value;
// `config` must outlive it. Not thread-safe: one caller at a time.
class JobTracker {
 public:
  JobTracker(std::string job_id, const Config* config);

  // Applies the job's next event (same job_id, not before the previous one
  // in apply order). Returns kDuplicate for duplicates (rule 3), which
  // change nothing but a counter; an error for an event after job_ended or
  // out of order, which changes nothing.
  // An `exclusion` event (scope JOB) changes nothing but the job's
  // excluded time (Exclude).
  absl::StatusOr<ApplyResult> Apply(const v1::Event& e);

  // Excludes [start_ns, until_ns) of the job's time (docs/semantics.md,
  // "Exclusions"): from then on that time is `excluded`, whatever the job
  // does in it. An error, changing nothing, if the job ended before
  // `start_ns` or has attributed time after it (cursor_ns() > start_ns:
  // the caller replays the job with the exclusion in place instead).
  absl::Status Exclude(int64_t start_ns, int64_t until_ns);

  // The job as of `as_of_ns` (not before the last applied event), within
  // the config's window.
  JobReport Report(int64_t as_of_ns) const;

  // --- Recognition time (counters, docs/metrics.md). Exact when the
  // config has no window (since_ns at its default), as in the live server.
  // The job's settled totals and gauges as of its last applied event.
  Recognized Recognize() const;
  // Every duration observed so far, in the order observed.
  const std::vector<Observation>& observations() const {
    return recog_.observations;
  }
  // The job's identity and segment fields (no attribution): cheap.
  JobReport Spec() const;

  // --- Snapshots (core/job_tracker_state.cc).
  // Writes the tracker's whole state (every member but the config, which
  // it records only as the window start, stall_after and the accelerator's
  // catalog peaks it was attributed under). Replaces `*state`.
  void SaveState(internal::v1::JobTrackerState* state) const;

  // The tracker SaveState saved, under `config` (which must outlive it):
  // applying the job's remaining events to it (those after the ones it
  // has applied, in apply order) gives the tracker that applying all of
  // them under `config` gives, exactly. Its accelerator's peaks are looked
  // up in `config`'s catalog, as job_submitted does. Which configs fit:
  //  - config->since_ns == the saved window start (no window for both, or
  //    the same since_ns): the state is taken as saved.
  //  - a state saved with no window, config->since_ns >= its cursor_ns()
  //    (a window that starts at or after every instant attributed so
  //    far): all time attributed so far lies before the window, so its
  //    window parts become zero (category and custom nanos, productive
  //    costed time and ideal seconds, the open step's time and rule 2's
  //    start gap are all before the window, completions' window time and
  //    ideal, first steps' time all before the window, recognition's
  //    pending sums); the rest
  //    (steps, durability, at-risk time, the compile mean, observations,
  //    counters) does not depend on the window and is kept.
  // Any other config (since_ns before the state's cursor, a state saved
  // under a window loaded under another since_ns, another stall_after_ns,
  // other catalog peaks for the accelerator or an entry that appeared or
  // vanished) and a version other than 3 to kJobTrackerStateVersion are
  // InvalidArgument naming the field: the caller replays the job's events
  // instead. An inconsistent record (an index out of range, an unknown
  // category, reason or enum value, a running job without attempts, a
  // completion with last_step < first_step) is DataLoss naming the field.
  static absl::StatusOr<JobTracker> FromState(
      const internal::v1::JobTrackerState& state, const Config* config);

  const std::string& job_id() const { return job_id_; }
  bool ended() const { return ended_; }
  int64_t first_event_ns() const { return first_event_ns_; }
  int64_t last_event_ns() const { return last_event_ns_; }
  // The instant through which time is attributed: the time of the last
  // applied event (as last_event_ns()), 0 before the first. Events at this
  // same instant may still follow (apply order, SPEC section 3 rule 1).
  int64_t cursor_ns() const { return cursor_ns_; }

 private:
  friend struct JobTrackerStateCodec;  // core/job_tracker_state.cc
  friend class JobWindows;             // core/job_windows.cc

  enum class Alloc { kUnknown, kEnough, kShort };
  enum class Fate { kPending, kDurable, kLost };

  // One attempt of the job (a run of its program), for duplicates and
  // the per-attempt rules.
  struct Attempt {
    std::string id;  // empty when the job sends no attempt ids
    std::optional<int64_t> max_step, max_checkpoint;
    std::optional<int64_t> restore_step;
    bool ended = false;
    bool compile_seen = false;  // a COMPILE activity before the first step
    bool resumed = false;       // its resume point was applied (rule 7)
    bool reported = false;      // its first activity or step was applied
  };

  // Where attributed time goes: final category time plus the open step.
  // Elastic jobs (rule 14) also keep each amount weighted by the chips it
  // counts with (`chip_s`, and chip-nanoseconds `*_cns` for the open step
  // and the gap); for a fixed-size job these stay 0 (its weight is known
  // only at report time).
  struct Sink {
    CategoryNanos nanos{};
    CategoryChipSeconds chip_s{};
    std::map<std::string, int64_t> custom;
    int64_t open_ns = 0;         // time accrued to the next step
    int64_t open_prefix_ns = 0;  // ... of which before the window
    // Rule 2: idle time before the attempt's first report (or, with no
    // attempt running, since the job was last all-allocated), held apart
    // until that report decides it: idle for an activity, the step's time
    // for a step. Reports show it as idle; counters wait.
    int64_t gap_ns = 0;
    int64_t gap_prefix_ns = 0;         // ... of which before the window
    double open_cns = 0, gap_cns = 0;  // chip-nanoseconds of open_ns, gap_ns
  };

  // The first completed step of an attempt with no COMPILE before it;
  // its compile share is recomputed at report time (rule 4).
  struct FirstStep {
    int64_t time_ns, prefix_ns, wait_ns, idle_ns, steps;
    double ideal_s;
    bool costed;
    Fate fate;
    std::optional<int64_t> frozen_compile;  // counters' estimate (rule 4)
    double chips = 0;  // elastic: the chips its time counts with
    int64_t held = 0;  // elastic: held chips at completion (rule 14, rule 4)
  };

  // A completed step (or k steps) whose progress is not durable yet.
  struct Completion {
    int64_t first_step, last_step;
    int64_t rest_ns, rest_window_ns;  // time left after the shares
    double ideal_s;                   // of the rest in the window
    bool costed;
    int first_ref;     // index into first_steps_, or -1
    double chips = 0;  // elastic: the chips its time counts with
  };

  // What happened to a pending non-first completion in an Apply: split at
  // a step, lost or made durable. JobWindows keeps the windows it no longer
  // shadows current with them.
  struct Resolution {
    enum Kind { kSplit, kLost, kDurable } kind;
    Completion completion;     // as before the split, or as resolved
    int64_t through_step = 0;  // kSplit: the lower part's last step
  };
  // The resolutions of the last Apply, kept while `on` (JobWindows turns it
  // on for its live tracker). A copy starts empty and off, so a tracker
  // copied for a report or a shadow logs nothing.
  struct ResolutionLog {
    ResolutionLog() = default;
    ResolutionLog(const ResolutionLog&) {}
    ResolutionLog& operator=(const ResolutionLog&) {
      on = false;
      entries.clear();
      return *this;
    }
    ResolutionLog(ResolutionLog&&) noexcept = default;
    ResolutionLog& operator=(ResolutionLog&&) noexcept = default;
    bool on = false;
    std::vector<Resolution> entries;
  };

  // A step event's measured parts, before attribution.
  struct StepTime {
    int64_t time_ns, prefix_ns, wait_ns, idle_ns, steps;
    int64_t first_step, last_step;
    double ideal_s;
    bool costed;
    double chips = 0;  // elastic: the chips its time counts with
    int64_t held = 0;  // elastic: held chips at its completion
  };

  // Completed non-first steps' time, for rule 4's mean.
  struct Mean {
    int64_t sum_ns = 0, steps = 0;
  };

  // Chips of `cns` chip-nanoseconds over `ns` (0 when `ns` is).
  static double AverageChips(double cns, int64_t ns) {
    return ns > 0 ? cns / static_cast<double>(ns) : 0;
  }
  static double ChipSeconds(int64_t ns, double chips) {
    return static_cast<double>(ns) * chips / kNanosPerSecond;
  }

  // --- Apply, in order of use.
  absl::Status CheckApplicable(const v1::Event& e, int64_t t) const;
  bool IsDuplicate(const v1::Event& e) const;
  bool EndsRunningAttempt(const v1::Event& e) const;
  void ApplyBody(const v1::Event& e, int64_t t);
  void OnSubmitted(const v1::JobSubmitted& s);
  void OnAllocation(int64_t chips);
  void EndResize();
  void OnStarted(const v1::Event& e, int64_t t);
  void OnActivity(const v1::Event& e, int64_t t);
  void OnStep(const v1::Event& e, int64_t t);
  void OnCheckpoint(const v1::Event& e);
  void OnInterruption(const v1::Event& e);
  void OnJobEnded(const v1::JobEnded& e, int64_t t);

  // --- Attribution.
  void Attribute(int64_t from, int64_t to, Sink* sink) const;
  void AttributeCounted(int64_t from, int64_t to, Sink* sink) const;
  void AccrueStep(int64_t from, int64_t to, Sink* sink) const;
  void AccrueGap(int64_t from, int64_t to, Sink* sink) const;
  void AccrueUntilStall(int64_t from, int64_t to, int64_t* ns,
                        int64_t* prefix_ns, double* cns, Sink* sink) const;
  void GapToIdle(Sink* sink) const;
  void SettleResize(Sink* sink) const;
  void SettleOpen(Category c, Sink* sink) const;
  void AddNanos(Category c, int64_t ns, double chips, Sink* sink) const;
  void FirstReport(bool step);
  void AddInterval(Category c, int64_t from, int64_t to, Sink* sink) const;
  bool AllAllocated() const;
  // Rule 14.
  bool Elastic() const { return min_chips_ > 0; }
  int64_t Held() const;
  int64_t StepHeld() const;
  double WeightNow() const;
  bool Stepping() const;
  bool ServingLike() const;
  Category ActivityCategory() const;

  // --- Attempts.
  Attempt* Current();
  const Attempt* Current() const;
  const Attempt* FindAttempt(const std::string& id) const;
  Attempt* FindAttempt(const std::string& id);
  void EnsureRunning(const v1::Event& e, int64_t t);
  void StartAttempt(const std::string& id);
  void EndAttempt();
  void SettleOpenStep(Category training_fate);

  // --- Steps and durability.
  StepTime MeasureStep(const v1::Step& s, int64_t steps);
  int64_t StepsCompleted(const v1::Step& s) const;
  void CostStep(const v1::Step& s, StepTime* st) const;
  void AddShares(const StepTime& st);
  void AddToMean(const StepTime& st);
  Mean MeanFor(int64_t held) const;
  void RecordFirstStep(const StepTime& st);
  void RecordCompletion(const StepTime& st, int first_ref, int64_t rest,
                        int64_t rest_window);
  void Resume(int64_t step);
  void MakeDurableThrough(int64_t step);
  void Durable(const Completion& c);
  void Lose(const Completion& c);
  void LoseAllPending();
  void MakeAllDurable();
  void ShrinkPending();
  static Completion SplitOff(Completion* c, int64_t through_step);
  // SplitOff, logged.
  Completion Split(Completion* c, int64_t through_step);

  // --- Recognition time.
  void RecognizeStep(const StepTime& st, bool first, int64_t t);
  void FreezeFirstStep();
  int64_t FirstStepCompile(const FirstStep& f) const;
  void AddFrozenFirstStep(const FirstStep& f, Recognized* r) const;
  int64_t AtRiskNanos() const;

  // --- Report.
  void AddFirstSteps(JobReport* r) const;
  std::optional<int64_t> LastStep() const;
  void FillSpec(JobReport* r) const;
  JobStateKind State() const;

  // Members are grouped by size so that padding does not grow the object
  // (a fleet holds one per job).
  std::string job_id_;
  const Config* config_;

  // Job spec (from job_submitted or implied).
  int64_t requested_chips_ = 0;
  int64_t weight_chips_ = 0;
  // Rule 14: min_chips (0: a fixed-size job) and the last allocation's
  // chips (-1 before the first).
  int64_t min_chips_ = 0;
  int64_t alloc_chips_ = -1;
  // A resize at cursor_ns_ waits for the steps at that same instant (they
  // complete before it); step_held_ is the held chips before it.
  int64_t step_held_ = 0;
  std::string accelerator_, framework_;
  std::map<std::string, std::string> labels_;
  double step_flops_ = 0, step_bytes_ = 0;
  const ChipPeak* peak_ = nullptr;  // accelerator_'s catalog entry

  // Timeline.
  int64_t first_event_ns_ = 0, last_event_ns_ = 0, cursor_ns_ = 0;
  int64_t end_ns_ = 0;
  v1::JobSubmitted::Workload workload_ = v1::JobSubmitted::TRAINING;
  v1::Activity::Kind activity_ = v1::Activity::KIND_UNSPECIFIED;
  Alloc alloc_ = Alloc::kUnknown;
  bool started_ = false;  // first event applied
  bool ended_ = false;
  bool job_event_seen_ = false;  // started, activity or step
  bool ever_allocated_ = false;  // ever all-allocated
  bool recovering_ = false;      // an attempt ended; waiting to resume
  bool running_ = false;         // an attempt is running
  bool pending_resume_ = false;  // an attempt ended, no resume point since
  bool resize_pending_ = false;  // rule 14; see step_held_
  std::string custom_name_;

  // Attempts.
  std::vector<Attempt> attempts_;

  // Excluded time not attributed yet (intervals ending after the cursor).
  ExclusionSet exclusions_;

  // Accumulated attribution (within the window).
  Sink sink_;
  int64_t costed_productive_ns_ = 0;
  double costed_productive_cs_ = 0;  // elastic: chip-seconds of the above
  double ideal_s_ = 0;
  int64_t at_risk_ns_ = 0;  // of pending non-first completions

  // Steps.
  std::vector<Completion> pending_;  // non-durable, ordered by step
  std::vector<FirstStep> first_steps_;
  int64_t mean_sum_ns_ = 0, mean_steps_ = 0;  // non-first completions
  std::map<int64_t, Mean> elastic_means_;     // ... by held chips (rule 14)
  std::optional<int64_t> max_durable_step_, last_checkpoint_;
  int64_t lost_steps_ = 0, duplicates_ = 0;
  StepTimeStats step_times_;  // non-first steps (issue 18, slow steps)
  ResolutionLog resolutions_;

  // Recognition time: what Recognize() needs beyond the report's state.
  // Their sums are the report's interruptions and notices.
  struct Recognition {
    ReasonCounts interruptions{}, notices{};
    int64_t checkpoints = 0;  // checkpoint events applied
    int64_t pg_above_one_steps = 0;
    std::optional<int64_t> last_step_ns, last_checkpoint_ns;
    std::optional<int64_t> attempt_start_ns;  // unknown for rule 7 restarts
    std::optional<int64_t> recover_from_ns;   // end of the last attempt
    // Pending non-first completions: their window time, costed part, ideal.
    int64_t pending_ns = 0, pending_costed_ns = 0;
    double pending_ideal_s = 0;
    double pending_cs = 0, pending_costed_cs = 0;  // elastic: chip-seconds
    int64_t freeze_at_step = 0;
    int ending_reason = kNumReasons - 1;  // of the attempt ending now
    int unfrozen_first = -1;              // index into first_steps_
    bool first_step_done = false;  // the current attempt completed a step
    std::vector<Observation> observations;
  } recog_;
};

}  // namespace goodput::core

#endif  // GOODPUT_CORE_JOB_TRACKER_H_
