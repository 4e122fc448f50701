#include "agent/heartbeat.h"

#include <utility>

namespace goodput::agent {

Heartbeat::Heartbeat(Options options, EventSink* batcher, Clock* clock)
    : options_(std::move(options)), batcher_(batcher), clock_(clock) {}

void Heartbeat::Poll() {
  const int64_t now = clock_->NowNanos();
  {
    absl::MutexLock lock(&mu_);
    if (now < next_due_ns_) return;
    // Catch up by skipping missed beats, not by emitting a burst of them.
    next_due_ns_ = now + absl::ToInt64Nanoseconds(options_.interval);
    ++sent_;
  }
  batcher_->Add(MakeEvent(now));
}

int64_t Heartbeat::sent() const {
  absl::MutexLock lock(&mu_);
  return sent_;
}

int64_t Heartbeat::NextDueNanos() const {
  absl::MutexLock lock(&mu_);
  return next_due_ns_;
}

v1::Event Heartbeat::MakeEvent(int64_t now_ns) const {
  v1::Event e;
  e.mutable_time()->set_seconds(now_ns / 1000000000);
  e.mutable_time()->set_nanos(static_cast<int32_t>(now_ns % 1000000000));
  e.set_host(options_.host);
  e.mutable_heartbeat()->set_chips(options_.chips);
  e.mutable_heartbeat()->set_accelerator(options_.accelerator);
  return e;
}

}  // namespace goodput::agent
