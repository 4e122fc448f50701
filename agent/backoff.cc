#include "agent/backoff.h"

#include <algorithm>

namespace goodput::agent {

Backoff::Backoff(absl::Duration initial, absl::Duration max, uint64_t seed)
    : initial_(initial), max_(std::max(initial, max)), rng_(seed) {}

absl::Duration Backoff::Next() {
  absl::Duration d = initial_;
  for (int i = 0; i < attempt_ && d < max_; ++i) d *= 2;
  d = std::min(d, max_);
  if (attempt_ < 64) ++attempt_;
  std::uniform_real_distribution<double> jitter(0.5, 1.0);
  return d * jitter(rng_);
}

}  // namespace goodput::agent
