#include "run/launcher.h"

#include <signal.h>

#include <utility>

#include "clients/cpp/event_json.h"

namespace goodput::run {

Launcher::Launcher(LauncherOptions options, Clock* clock, ProcessRunner* runner,
                   EventSink* sink, std::function<std::string()> new_attempt_id,
                   std::ostream* log)
    : options_(std::move(options)),
      clock_(clock),
      runner_(runner),
      sink_(sink),
      new_attempt_id_(std::move(new_attempt_id)),
      log_(log) {}

int Launcher::Run() {
  if (options_.submitted) {
    v1::Event e = NewEvent("");
    *e.mutable_job_submitted() = *options_.submitted;
    sink_->Send(e);
  }
  for (int run = 0;; ++run) {
    const std::string attempt = new_attempt_id_();
    WaitResult result = RunAttempt(attempt);
    if (stopping_) return result.ShellCode();
    if (result.succeeded()) {
      SendEnded(v1::JobEnded::SUCCEEDED);
      return 0;
    }
    SendInterruption(attempt, v1::Interruption::FAILED, false);
    if (run >= options_.max_restarts) {
      *log_ << "goodput-run: attempt " << attempt << " failed (exit "
            << result.ShellCode() << "); no restarts left\n";
      SendEnded(v1::JobEnded::FAILED);
      return result.ShellCode();
    }
    *log_ << "goodput-run: attempt " << attempt << " failed (exit "
          << result.ShellCode() << "); restart " << run + 1 << " of "
          << options_.max_restarts << "\n";
  }
}

WaitResult Launcher::RunAttempt(const std::string& attempt) {
  v1::Event started = NewEvent(attempt);
  started.mutable_started();
  sink_->Send(started);
  absl::Status s = StartChild(attempt);
  if (!s.ok()) {
    *log_ << "goodput-run: " << s.message() << "\n";
    WaitResult failed;
    failed.exit_code = 127;
    return failed;
  }
  *log_ << "goodput-run: attempt " << attempt << " started\n";
  WaitResult result = WaitForChild(attempt);
  if (tap_ != nullptr) tap_->AfterExit();
  return result;
}

absl::Status Launcher::StartChild(const std::string& attempt) {
  EnvVars env = {{"GOODPUT_ATTEMPT", attempt},
                 {"GOODPUT_JOB_ID", options_.job_id}};
  if (tap_ == nullptr) return runner_->Start(options_.argv, env);
  absl::StatusOr<ChildOutput> out = tap_->BeforeStart(attempt);
  if (!out.ok()) return out.status();
  runner_->RedirectOutput(out->stdout_fd, out->stderr_fd);
  env.insert(env.end(), out->env.begin(), out->env.end());
  absl::Status s = runner_->Start(options_.argv, env);
  tap_->AfterStart();
  return s;
}

WaitResult Launcher::WaitForChild(const std::string& attempt) {
  for (;;) {
    WaitResult result = runner_->Wait();
    if (!result.stop_requested()) {
      if (stopping_) SendInterruption(attempt, options_.stop_reason, false);
      return result;
    }
    *log_ << "goodput-run: got signal " << result.stop_signal
          << ", forwarding SIGTERM to the job\n";
    runner_->Signal(SIGTERM);
    if (!stopping_) SendInterruption(attempt, options_.stop_reason, true);
    stopping_ = true;
  }
}

void Launcher::SendInterruption(const std::string& attempt,
                                v1::Interruption::Reason reason, bool notice) {
  v1::Event e = NewEvent(attempt);
  e.mutable_interruption()->set_reason(reason);
  if (notice) e.mutable_interruption()->set_notice(true);
  sink_->Send(e);
}

void Launcher::SendEnded(v1::JobEnded::Outcome outcome) {
  if (!options_.send_job_ended) return;
  v1::Event e = NewEvent("");
  e.mutable_job_ended()->set_outcome(outcome);
  sink_->Send(e);
}

v1::Event Launcher::NewEvent(const std::string& attempt) {
  v1::Event e;
  client::SetTimeMillis(clock_->NowNanos(), &e);
  e.set_job_id(options_.job_id);
  if (!attempt.empty()) e.set_attempt(attempt);
  return e;
}

}  // namespace goodput::run
