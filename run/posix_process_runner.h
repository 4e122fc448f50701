// PosixProcessRunner: the real ProcessRunner. Its constructor blocks
// SIGTERM, SIGINT and SIGCHLD in the calling thread and Wait() takes them
// with sigwaitinfo(), so a stop request is never lost between checks; the
// child starts (posix_spawnp) with the default signal mask and dispositions.
// Construct it in main() before any other thread exists. Owns the child's
// pid (it does not kill it on destruction). Not thread-safe.
#ifndef GOODPUT_RUN_POSIX_PROCESS_RUNNER_H_
#define GOODPUT_RUN_POSIX_PROCESS_RUNNER_H_

#include <signal.h>
#include <sys/types.h>

#include "run/process_runner.h"

namespace goodput::run {

class PosixProcessRunner : public ProcessRunner {
 public:
  PosixProcessRunner();
  ~PosixProcessRunner() override;

  absl::Status Start(const std::vector<std::string>& argv,
                     const EnvVars& env) override;
  void RedirectOutput(int stdout_fd, int stderr_fd) override;
  WaitResult Wait() override;
  void Signal(int signal) override;

 private:
  // Reaps the child if it exited; true then, with `*result` set.
  bool Reap(WaitResult* result);

  sigset_t waited_;
  sigset_t old_mask_;
  pid_t pid_ = -1;
  int stdout_fd_ = -1, stderr_fd_ = -1;  // for the next Start; -1: inherit
};

}  // namespace goodput::run

#endif  // GOODPUT_RUN_POSIX_PROCESS_RUNNER_H_
