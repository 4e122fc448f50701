// Launcher: the logic of goodput-run. Runs the job's program, one attempt
// at a time, and reports what it sees (SPEC section 2, "who sends what"):
//   - job_submitted first, if `submitted` is set;
//   - per attempt a new attempt id, `started`, and the child with
//     GOODPUT_ATTEMPT and GOODPUT_JOB_ID in its environment;
//   - exit 0 -> job_ended SUCCEEDED;
//   - a non-zero exit or a signal -> interruption FAILED at the time it was
//     seen, then a restart (a new attempt) while restarts remain, else
//     job_ended FAILED;
//   - SIGTERM/SIGINT to goodput-run -> forwarded to the child, with an
//     interruption notice (`stop_reason`); when the child then exits, an
//     interruption `stop_reason`, no restart and no job_ended (the
//     scheduler decides whether the job goes on elsewhere).
// Does not own the clock, runner or sink, which must outlive it. Not
// thread-safe.
#ifndef GOODPUT_RUN_LAUNCHER_H_
#define GOODPUT_RUN_LAUNCHER_H_

#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "proto/event.pb.h"
#include "run/event_sink.h"
#include "run/output_tap.h"
#include "run/process_runner.h"
#include "util/clock.h"

namespace goodput::run {

struct LauncherOptions {
  std::string job_id;
  std::optional<v1::JobSubmitted> submitted;  // sent first when set
  int max_restarts = 0;
  v1::Interruption::Reason stop_reason = v1::Interruption::PREEMPTED;
  // false: never send job_ended (the scheduler restarts and ends the job).
  bool send_job_ended = true;
  std::vector<std::string> argv;  // the job's command
};

class Launcher {
 public:
  Launcher(LauncherOptions options, Clock* clock, ProcessRunner* runner,
           EventSink* sink, std::function<std::string()> new_attempt_id,
           std::ostream* log);

  // With a tap, each child's output goes through it (goodput-run
  // --log_profile). Not owned; must outlive Run().
  void set_output_tap(OutputTap* tap) { tap_ = tap; }

  // Runs attempts until one succeeds, restarts run out or a stop signal
  // came; returns goodput-run's exit code: 0, the last attempt's ShellCode(),
  // or 127 when the command cannot be started.
  int Run();

 private:
  // One attempt: started, the child, its end. Returns the child's result.
  WaitResult RunAttempt(const std::string& attempt);
  // Starts the child of `attempt`, through the tap if there is one.
  absl::Status StartChild(const std::string& attempt);
  // Waits for the child, forwarding stop signals.
  WaitResult WaitForChild(const std::string& attempt);
  void SendInterruption(const std::string& attempt,
                        v1::Interruption::Reason reason, bool notice);
  void SendEnded(v1::JobEnded::Outcome outcome);
  v1::Event NewEvent(const std::string& attempt);

  const LauncherOptions options_;
  Clock* const clock_;
  ProcessRunner* const runner_;
  EventSink* const sink_;
  const std::function<std::string()> new_attempt_id_;
  std::ostream* const log_;
  OutputTap* tap_ = nullptr;
  bool stopping_ = false;
};

}  // namespace goodput::run

#endif  // GOODPUT_RUN_LAUNCHER_H_
