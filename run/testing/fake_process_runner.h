// FakeProcessRunner: a scripted ProcessRunner for launcher tests. Each
// Wait() returns the next scripted result after advancing the FakeClock by
// its duration; Start() and Signal() calls are recorded. Not thread-safe.
#ifndef GOODPUT_RUN_TESTING_FAKE_PROCESS_RUNNER_H_
#define GOODPUT_RUN_TESTING_FAKE_PROCESS_RUNNER_H_

#include <deque>
#include <string>
#include <utility>
#include <vector>

#include "run/process_runner.h"
#include "util/clock.h"

namespace goodput::run {

class FakeProcessRunner : public ProcessRunner {
 public:
  struct Step {
    int64_t after_ns;
    WaitResult result;
  };
  struct StartCall {
    std::vector<std::string> argv;
    EnvVars env;
  };

  explicit FakeProcessRunner(FakeClock* clock) : clock_(clock) {}

  // The child runs `after_ns`, then exits with `code` / dies by `signal`.
  void ThenExit(int64_t after_ns, int code, int signal = 0) {
    WaitResult r;
    r.exit_code = code;
    r.term_signal = signal;
    script_.push_back({after_ns, r});
  }
  // goodput-run gets stop signal `signal` after `after_ns`.
  void ThenStopSignal(int64_t after_ns, int signal) {
    WaitResult r;
    r.stop_signal = signal;
    script_.push_back({after_ns, r});
  }
  void FailStart(absl::Status status) { start_error_ = std::move(status); }

  absl::Status Start(const std::vector<std::string>& argv,
                     const EnvVars& env) override {
    starts.push_back({argv, env});
    return start_error_;
  }
  WaitResult Wait() override {
    Step step = script_.front();
    script_.pop_front();
    clock_->Advance(step.after_ns);
    return step.result;
  }
  void Signal(int signal) override { signals.push_back(signal); }

  std::vector<StartCall> starts;
  std::vector<int> signals;

 private:
  FakeClock* clock_;
  std::deque<Step> script_;
  absl::Status start_error_;
};

}  // namespace goodput::run

#endif  // GOODPUT_RUN_TESTING_FAKE_PROCESS_RUNNER_H_
