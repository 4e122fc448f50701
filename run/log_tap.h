// LogTap: goodput-run --log_profile. Gives each attempt's child pipes for
// stdout and stderr, and one reader thread per pipe that writes every byte
// it reads to goodput-run's own stdout or stderr at once (same bytes, same
// order within each stream) and feeds the lines to a logs::LogMatcher for
// that attempt; the events it makes (the line's timestamp when the profile
// captures one, else the read time from the clock) go to the sink. The
// matcher runs without lifecycle events: the launcher's started and exit
// events say when attempts begin and end. Sets PYTHONUNBUFFERED=1 for the
// child (unless set), so that Python's lines are not held back in a pipe
// buffer. Owns the pipes and threads; borrows the profile, clock and sink
// (which must be thread-safe, e.g. a LockedEventSink). Its OutputTap calls
// come from one thread; the reader threads share the matcher under a mutex.
#ifndef GOODPUT_RUN_LOG_TAP_H_
#define GOODPUT_RUN_LOG_TAP_H_

#include <memory>
#include <ostream>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "logs/log_matcher.h"
#include "logs/log_profile.h"
#include "run/event_sink.h"
#include "run/output_tap.h"
#include "util/clock.h"

namespace goodput::run {

class LogTap : public OutputTap {
 public:
  // Passes the child's output on to `out_fd` and `err_fd`.
  LogTap(const logs::LogProfile* profile, std::string job_id, Clock* clock,
         EventSink* sink, int out_fd, int err_fd, std::ostream* log);
  ~LogTap() override;

  absl::StatusOr<ChildOutput> BeforeStart(const std::string& attempt) override;
  void AfterStart() override;
  void AfterExit() override;

  // Lines the profile could not turn into events (bad captures), so far.
  int64_t bad_lines() const;

 private:
  void Pump(int in_fd, int out_fd);
  void OnLine(absl::string_view line);
  void CloseChildEnds();

  const logs::LogProfile* const profile_;
  const std::string job_id_;
  Clock* const clock_;
  EventSink* const sink_;
  const int out_fd_, err_fd_;
  std::ostream* const log_;
  int child_out_ = -1, child_err_ = -1;  // the child's ends, until started
  int read_out_ = -1, read_err_ = -1;    // ours, until the readers own them
  std::vector<std::thread> readers_;
  mutable absl::Mutex mu_;
  std::unique_ptr<logs::LogMatcher> matcher_ ABSL_GUARDED_BY(mu_);
  int64_t bad_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace goodput::run

#endif  // GOODPUT_RUN_LOG_TAP_H_
