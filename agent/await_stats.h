#ifndef GOODPUT_AGENT_AWAIT_STATS_H_
#define GOODPUT_AGENT_AWAIT_STATS_H_

#include <functional>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace goodput::agent {

// Waits under `mu` until `done(*stats)` holds or `timeout` passes; returns
// whether it held. `stats` must be guarded by `mu`. For tests that wait on
// a component's counters instead of sleeping.
template <typename Stats>
bool AwaitStats(absl::Mutex& mu, const Stats& stats,
                const std::function<bool(const Stats&)>& done,
                absl::Duration timeout) {
  struct Arg {
    const std::function<bool(const Stats&)>* done;
    const Stats* stats;
  } arg{&done, &stats};
  absl::MutexLock lock(&mu);
  return mu.AwaitWithTimeout(
      absl::Condition(
          +[](Arg* a) { return (*a->done)(*a->stats); }, &arg),
      timeout);
}

}  // namespace goodput::agent

#endif  // GOODPUT_AGENT_AWAIT_STATS_H_
