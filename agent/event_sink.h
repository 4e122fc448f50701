// EventSink: where the agent's accepted events go (Intake and Heartbeat
// write to one): a Batcher, or a ShardRouter in front of one Batcher per
// goodputd shard. An interface; implementations are thread-safe.
#ifndef GOODPUT_AGENT_EVENT_SINK_H_
#define GOODPUT_AGENT_EVENT_SINK_H_

#include "proto/event.pb.h"

namespace goodput::agent {

class EventSink {
 public:
  virtual ~EventSink() = default;
  // Takes one accepted event; never blocks on the network.
  virtual void Add(v1::Event event) = 0;
};

}  // namespace goodput::agent

#endif  // GOODPUT_AGENT_EVENT_SINK_H_
