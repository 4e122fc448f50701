// EventLog: the narrow interface of the replicated, deduplicating event log
// of cluster mode (a JetStream stream in production:
// cluster/nats_event_log.h; an in-memory fake in tests). A message is
// stored once per message id within the log's duplicate window: publishing
// it again returns the first sequence, marked duplicate. Implementations
// are thread-safe.
#ifndef GOODPUT_CLUSTER_EVENT_LOG_H_
#define GOODPUT_CLUSTER_EVENT_LOG_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace goodput::cluster {

struct PublishAck {
  uint64_t sequence = 0;   // the message's sequence in the log
  bool duplicate = false;  // stored before under this message id
};

class EventLog {
 public:
  virtual ~EventLog() = default;
  // Returns once the log has stored the message (on a quorum of its
  // replicas); Unavailable or DeadlineExceeded if it could not say so.
  virtual absl::StatusOr<PublishAck> Publish(absl::string_view subject,
                                             absl::string_view message_id,
                                             absl::string_view data) = 0;
};

}  // namespace goodput::cluster

#endif  // GOODPUT_CLUSTER_EVENT_LOG_H_
