// EventSink: where goodput-run's events go. The narrow I/O boundary of the
// launcher: AgentEventSink writes to the agent (falling back to a client
// spool file); tests record events. Implementations are not thread-safe.
#ifndef GOODPUT_RUN_EVENT_SINK_H_
#define GOODPUT_RUN_EVENT_SINK_H_

#include "proto/event.pb.h"

namespace goodput::run {

class EventSink {
 public:
  virtual ~EventSink() = default;
  // Delivers `event` or records the failure; never blocks for long.
  virtual void Send(const v1::Event& event) = 0;
};

}  // namespace goodput::run

#endif  // GOODPUT_RUN_EVENT_SINK_H_
