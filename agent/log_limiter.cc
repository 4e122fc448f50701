#include "agent/log_limiter.h"

namespace goodput::agent {

LogLimiter::LogLimiter(Clock* clock, absl::Duration interval, int burst)
    : clock_(clock),
      interval_ns_(absl::ToInt64Nanoseconds(interval)),
      burst_(burst) {}

bool LogLimiter::Allow(int64_t* suppressed) {
  const int64_t now = clock_->NowNanos();
  absl::MutexLock lock(&mu_);
  if (!started_ || now - window_start_ns_ >= interval_ns_) {
    started_ = true;
    window_start_ns_ = now;
    used_ = 0;
  }
  if (used_ >= burst_) {
    ++suppressed_;
    return false;
  }
  ++used_;
  *suppressed = suppressed_;
  suppressed_ = 0;
  return true;
}

int64_t LogLimiter::TakeSuppressed(bool all) {
  const int64_t now = clock_->NowNanos();
  absl::MutexLock lock(&mu_);
  if (!all && now - window_start_ns_ < interval_ns_) return 0;
  const int64_t taken = suppressed_;
  suppressed_ = 0;
  return taken;
}

}  // namespace goodput::agent
