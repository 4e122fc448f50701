// ProcessRunner: how goodput-run starts its one child and waits for it.
// The narrow I/O boundary of the launcher; PosixProcessRunner is the real
// one, testing/fake_process_runner.h a scripted one. One child at a time;
// implementations are not thread-safe (the launcher is single-threaded).
#ifndef GOODPUT_RUN_PROCESS_RUNNER_H_
#define GOODPUT_RUN_PROCESS_RUNNER_H_

#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"

namespace goodput::run {

// How the child ended, or that goodput-run itself was asked to stop.
struct WaitResult {
  // SIGTERM or SIGINT reached goodput-run; the child is still running.
  int stop_signal = 0;
  int exit_code = 0;    // when it exited normally
  int term_signal = 0;  // when a signal killed it
  bool stop_requested() const { return stop_signal != 0; }
  bool succeeded() const {
    return !stop_requested() && exit_code == 0 && term_signal == 0;
  }
  // The shell's convention: the exit code, or 128 + the signal.
  int ShellCode() const {
    return term_signal != 0 ? 128 + term_signal : exit_code;
  }
};

using EnvVars = std::vector<std::pair<std::string, std::string>>;

class ProcessRunner {
 public:
  virtual ~ProcessRunner() = default;
  // Starts `argv` (argv[0] looked up in PATH) with the caller's environment
  // plus `env`; an error names the program when it cannot be run.
  virtual absl::Status Start(const std::vector<std::string>& argv,
                             const EnvVars& env) = 0;
  // The next Start's child writes its stdout and stderr to these fds
  // instead of inheriting the caller's (goodput-run --log_profile). A
  // runner that cannot ignores it.
  virtual void RedirectOutput(int stdout_fd, int stderr_fd) {
    (void)stdout_fd;
    (void)stderr_fd;
  }
  // Blocks until the child exits or a stop signal arrives.
  virtual WaitResult Wait() = 0;
  // Sends `signal` to the running child.
  virtual void Signal(int signal) = 0;
};

}  // namespace goodput::run

#endif  // GOODPUT_RUN_PROCESS_RUNNER_H_
