// EventSink: where the agent's accepted events go (Intake and Heartbeat
// write to one): a Batcher, or a ShardRouter in front of one Batcher per
// goodputd shard. An interface; implementations are thread-safe.
#ifndef GOODPUT_AGENT_EVENT_SINK_H_
#define GOODPUT_AGENT_EVENT_SINK_H_

#include <cstdint>
#include <utility>

#include "absl/status/status.h"
#include "codec/plain_step.h"
#include "proto/event.pb.h"

namespace goodput::agent {

class EventSink {
 public:
  virtual ~EventSink() = default;
  // Takes one accepted event; never blocks on the network.
  virtual void Add(v1::Event event) = 0;
  // Takes an event with a client id's hash (agent/event_ids.h), kept with
  // it in the spool. Sinks without a spool ignore the id.
  virtual void AddWithId(v1::Event event, uint64_t id) {
    (void)id;
    Add(std::move(event));
  }
  // Takes the event of a plain step line (codec::PlainStepDecoder), as
  // Add of its codec::PlainStepToEvent would; `step`'s strings need only
  // outlive the call. A Batcher serializes it without building the Event.
  virtual void AddPlainStep(const codec::PlainStep& step) {
    v1::Event event;
    codec::PlainStepToEvent(step, &event);
    Add(std::move(event));
  }
  // Writes what the sink holds to its spool now (the ack mode's group
  // commit). Not OK if events were dropped (spool full or failing) since
  // the previous Sync: the caller cannot tell which, so it acks nothing.
  virtual absl::Status Sync() { return absl::OkStatus(); }
};

}  // namespace goodput::agent

#endif  // GOODPUT_AGENT_EVENT_SINK_H_
