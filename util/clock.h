#ifndef GOODPUT_UTIL_CLOCK_H_
#define GOODPUT_UTIL_CLOCK_H_

#include <cstdint>

#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace goodput {

// Where time comes from: everything that needs "now" takes a Clock, so
// tests use FakeClock and never sleep. Implementations are thread-safe.
class Clock {
 public:
  virtual ~Clock() = default;
  // Nanoseconds since the Unix epoch.
  virtual int64_t NowNanos() = 0;
};

// The system's real-time clock.
class RealClock : public Clock {
 public:
  int64_t NowNanos() override { return absl::GetCurrentTimeNanos(); }
};

// A clock that moves only when told to. Thread-safe.
class FakeClock : public Clock {
 public:
  explicit FakeClock(int64_t now_ns) : now_ns_(now_ns) {}
  int64_t NowNanos() override {
    absl::MutexLock lock(&mu_);
    return now_ns_;
  }
  void Set(int64_t now_ns) {
    absl::MutexLock lock(&mu_);
    now_ns_ = now_ns;
  }
  void Advance(int64_t ns) {
    absl::MutexLock lock(&mu_);
    now_ns_ += ns;
  }

 private:
  absl::Mutex mu_;
  int64_t now_ns_ ABSL_GUARDED_BY(mu_);
};

}  // namespace goodput

#endif  // GOODPUT_UTIL_CLOCK_H_
