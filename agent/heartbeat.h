// Heartbeat: the host's capacity event (SPEC section 2, `heartbeat`: chips
// of accelerator on host), handed to the EventSink at the first Poll and then
// every `interval` of the Clock. Does not own the batcher, clock or
// metrics. Thread-safe.
#ifndef GOODPUT_AGENT_HEARTBEAT_H_
#define GOODPUT_AGENT_HEARTBEAT_H_

#include <cstdint>
#include <string>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "agent/event_sink.h"
#include "proto/event.pb.h"
#include "util/clock.h"

namespace goodput::agent {

class Heartbeat {
 public:
  struct Options {
    int64_t chips = 0;
    std::string accelerator;
    std::string host;
    absl::Duration interval = absl::Seconds(60);
  };

  Heartbeat(Options options, EventSink* batcher, Clock* clock);

  // Emits a heartbeat if one is due.
  void Poll();
  // When the next heartbeat is due (Unix ns); the past before the first.
  int64_t NextDueNanos() const;
  // Heartbeats emitted so far.
  int64_t sent() const;

  // The heartbeat event at `now_ns`.
  v1::Event MakeEvent(int64_t now_ns) const;

 private:
  const Options options_;
  EventSink* const batcher_;
  Clock* const clock_;
  mutable absl::Mutex mu_;
  int64_t next_due_ns_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t sent_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace goodput::agent

#endif  // GOODPUT_AGENT_HEARTBEAT_H_
