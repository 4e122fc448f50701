// LockedEventSink: makes an EventSink safe to share between the launcher's
// thread and LogTap's reader threads by sending under a mutex. Does not own
// the wrapped sink, which must outlive it. Thread-safe.
#ifndef GOODPUT_RUN_LOCKED_EVENT_SINK_H_
#define GOODPUT_RUN_LOCKED_EVENT_SINK_H_

#include "absl/synchronization/mutex.h"
#include "run/event_sink.h"

namespace goodput::run {

class LockedEventSink : public EventSink {
 public:
  explicit LockedEventSink(EventSink* sink) : sink_(sink) {}
  void Send(const v1::Event& event) override {
    absl::MutexLock lock(&mu_);
    sink_->Send(event);
  }

 private:
  absl::Mutex mu_;
  EventSink* const sink_ ABSL_PT_GUARDED_BY(mu_);
};

}  // namespace goodput::run

#endif  // GOODPUT_RUN_LOCKED_EVENT_SINK_H_
