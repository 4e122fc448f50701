#include "agent/sleeper.h"

namespace goodput::agent {

void RealSleeper::Sleep(absl::Duration d) {
  absl::MutexLock lock(&mu_);
  mu_.AwaitWithTimeout(absl::Condition(&interrupted_), d);
}

void RealSleeper::Interrupt() {
  absl::MutexLock lock(&mu_);
  interrupted_ = true;
}

}  // namespace goodput::agent
