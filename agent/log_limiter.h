// LogLimiter: rate limit for a class of log lines (e.g. "bad line on the
// socket"), so a misbehaving client cannot flood stderr: at most `burst`
// lines per `interval` of the Clock; the rest are suppressed and their
// number is handed to the next line that is let through, or to a periodic
// TakeSuppressed() once their interval has passed (so the end of a burst is
// logged too). Does not own the clock. Thread-safe.
#ifndef GOODPUT_AGENT_LOG_LIMITER_H_
#define GOODPUT_AGENT_LOG_LIMITER_H_

#include <cstdint>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "util/clock.h"

namespace goodput::agent {

class LogLimiter {
 public:
  LogLimiter(Clock* clock, absl::Duration interval, int burst);

  // True if a line may be logged now. Then `*suppressed` is the number of
  // lines refused since the previous allowed one (to mention in the line).
  bool Allow(int64_t* suppressed);

  // The lines refused in an interval that has ended, counted once: 0 while
  // the interval that refused them is still running (the next allowed line
  // will carry them) or when none were refused. Call it periodically and
  // log a summary line when it is positive.
  // With `all`, also those of the interval still running (at shutdown).
  int64_t TakeSuppressed(bool all = false);

 private:
  Clock* const clock_;
  const int64_t interval_ns_;
  const int burst_;
  absl::Mutex mu_;
  int64_t window_start_ns_ ABSL_GUARDED_BY(mu_) = 0;
  int used_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t suppressed_ ABSL_GUARDED_BY(mu_) = 0;
  bool started_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace goodput::agent

#endif  // GOODPUT_AGENT_LOG_LIMITER_H_
