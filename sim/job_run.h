#ifndef GOODPUT_SIM_JOB_RUN_H_
#define GOODPUT_SIM_JOB_RUN_H_

#include <cstdint>
#include <deque>
#include <limits>
#include <set>
#include <string>

#include "proto/event.pb.h"
#include "sim/event_sink.h"
#include "sim/job_spec.h"
#include "sim/sim_random.h"
#include "sim/truth.h"

namespace goodput::sim {

inline constexpr int64_t kNever = std::numeric_limits<int64_t>::max();

// One simulated job from submission to its end: lives its attempts as a
// sequence of segments (launch, init, prep, compile, restore, step groups,
// input stalls, checkpoints, restart delays), emits the events a scheduler
// and the job's rank-0 process would send, and books every millisecond of
// its physical timeline into its JobTruth as it happens (its own rules,
// not core/'s). An elastic job (SPEC rule 14) that loses a host while it
// steps shrinks to the chips left (a new allocation, RESHARD) and grows
// back when the host returns. Clock-free: the caller drives it in
// simulated time. Does not own `rng`. Not thread-safe.
class JobRun {
 public:
  enum class Outcome {
    kRunning,  // holds its chips; call Fire() again at next_ms()
    kRequeue,  // lost its chips; wants an allocation again
    kDone,     // ended; release its chips
  };

  JobRun(JobSpec spec, SimRandom* rng);

  // Emits job_submitted at the spec's submit time; the job is queued.
  void Submit(EventSink& sink);

  // The job got its chips at `t_ms`; `host` names its rank-0 host.
  void Allocate(int64_t t_ms, const std::string& host, EventSink& sink);

  // Time of the job's next event while it holds chips, else kNever.
  int64_t next_ms() const;

  // Handles everything due at next_ms() (the end of a segment, or an
  // interruption inside it).
  Outcome Fire(EventSink& sink);

  // Makes the next interruption a host failure at `t_ms` (after the
  // current time, while the job holds chips): hand-made cases in tests.
  void FailHostAt(int64_t t_ms);

  // Books the time up to `end_ms` (the simulation's as-of) and returns the
  // truth. Call once, at the end.
  const JobTruth& Close(int64_t end_ms);

  const JobSpec& spec() const { return spec_; }

 private:
  enum class Mode { kUnsubmitted, kQueued, kRecovering, kAttempt, kDone };
  enum class Seg {
    kLaunch,
    kInit,
    kPrep,
    kCompile,
    kRestore,
    kSteps,
    kStall,
    kCheckpoint,
    kRestartDelay,
    kReshard,
  };
  struct Segment {
    Seg kind = Seg::kLaunch;
    int64_t start = 0, end = 0;
    int64_t steps = 0, wait = 0, idle = 0;  // kSteps only
  };
  struct Pending {  // completed steps not durable yet
    int64_t last_step, compute_ms, steps;
  };

  // --- Segments.
  void StartSegment(Seg kind, int64_t t, EventSink& sink);
  void StartSteps(int64_t t, EventSink& sink);
  int64_t SegmentLength(Seg kind);
  void FinishSegment(EventSink& sink);
  void FinishSteps(EventSink& sink);
  Outcome Continue(EventSink& sink);
  Seg AfterSteps();

  // --- Interruptions and resizes (rule 14).
  Outcome Interrupt(EventSink& sink);
  Outcome Kill(int64_t t, v1::Interruption::Reason reason, EventSink& sink);
  bool CanShrink() const;
  void Resize(int64_t t, int64_t held, EventSink& sink);
  void OnRepair(EventSink& sink);
  int64_t NextRepair() const;
  int64_t StepMs() const;
  void Book(Truth c, int64_t duration_ms);
  void BookPartial(int64_t until, bool killed);
  v1::Interruption::Reason DrawReason();
  void LoseAllPending();
  void MakeDurable(int64_t step);

  // --- Events.
  v1::Event Base(int64_t t, bool job_event) const;
  void EmitActivity(int64_t t, v1::Activity::Kind kind, EventSink& sink,
                    int64_t step = -1);
  void EmitEnded(int64_t t, v1::JobEnded::Outcome outcome, EventSink& sink);

  bool Training() const;

  JobSpec spec_;
  SimRandom* rng_;
  JobTruth truth_;
  Mode mode_ = Mode::kUnsubmitted;
  int64_t since_ms_ = 0;  // start of the queued/recovering period
  std::string host_;
  Segment seg_;
  int64_t interrupt_at_ = kNever;
  int attempt_ = 0;
  bool compiled_once_ = false;
  bool first_report_ = false;  // the attempt's first step group next
  int64_t steps_done_ = 0;     // completed in the current lineage
  int64_t durable_step_ = 0;   // last durable checkpoint
  int64_t saving_step_ = 0;    // async save in progress (0 = none)
  std::deque<Pending> pending_;
  int64_t undecided_ms_ = 0, undecided_steps_ = 0;
  int64_t held_ = 0;                // chips held now (rule 14)
  std::multiset<int64_t> repairs_;  // when failed hosts return
  bool force_host_failure_ = false;
};

}  // namespace goodput::sim

#endif  // GOODPUT_SIM_JOB_RUN_H_
