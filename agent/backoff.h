// Backoff: exponential reconnect delays with jitter. The n-th delay since
// Reset() is uniform in [d/2, d] with d = min(max, initial x 2^n), so a
// fleet of agents does not reconnect in lockstep after a server restart.
// A plain value; not thread-safe.
#ifndef GOODPUT_AGENT_BACKOFF_H_
#define GOODPUT_AGENT_BACKOFF_H_

#include <cstdint>
#include <random>

#include "absl/time/time.h"

namespace goodput::agent {

class Backoff {
 public:
  Backoff(absl::Duration initial, absl::Duration max, uint64_t seed);

  absl::Duration Next();
  void Reset() { attempt_ = 0; }

 private:
  const absl::Duration initial_;
  const absl::Duration max_;
  int attempt_ = 0;
  std::mt19937_64 rng_;
};

}  // namespace goodput::agent

#endif  // GOODPUT_AGENT_BACKOFF_H_
