// Sleeper: how the uplink waits between reconnect attempts, injectable so
// tests never sleep through a backoff. RealSleeper waits on a condition
// with a timeout; Interrupt() ends the current and every later Sleep at
// once (shutdown). Implementations are thread-safe.
#ifndef GOODPUT_AGENT_SLEEPER_H_
#define GOODPUT_AGENT_SLEEPER_H_

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace goodput::agent {

class Sleeper {
 public:
  virtual ~Sleeper() = default;
  // Returns after `d`, or earlier once Interrupt() was called.
  virtual void Sleep(absl::Duration d) = 0;
  virtual void Interrupt() = 0;
};

class RealSleeper : public Sleeper {
 public:
  void Sleep(absl::Duration d) override;
  void Interrupt() override;

 private:
  absl::Mutex mu_;
  bool interrupted_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace goodput::agent

#endif  // GOODPUT_AGENT_SLEEPER_H_
