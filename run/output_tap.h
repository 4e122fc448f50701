// OutputTap: what the launcher does around each attempt when it reads the
// child's output (goodput-run --log_profile): LogTap is the real one. The
// launcher calls BeforeStart, starts the child with the returned fds and
// environment, calls AfterStart, waits for the child, then AfterExit. Not
// thread-safe: the launcher's thread calls it.
#ifndef GOODPUT_RUN_OUTPUT_TAP_H_
#define GOODPUT_RUN_OUTPUT_TAP_H_

#include <string>

#include "absl/status/statusor.h"
#include "run/process_runner.h"

namespace goodput::run {

// Where the next child writes: its stdout and stderr fds, and what to add
// to its environment.
struct ChildOutput {
  int stdout_fd = -1;
  int stderr_fd = -1;
  EnvVars env;
};

class OutputTap {
 public:
  virtual ~OutputTap() = default;
  // Prepares for attempt `attempt`'s child.
  virtual absl::StatusOr<ChildOutput> BeforeStart(
      const std::string& attempt) = 0;
  // The child started (or failed to): release the child's ends, read ours.
  virtual void AfterStart() = 0;
  // The child exited: returns once all its output was passed on and
  // matched.
  virtual void AfterExit() = 0;
};

}  // namespace goodput::run

#endif  // GOODPUT_RUN_OUTPUT_TAP_H_
