// EventLog: the narrow interface of the replicated, deduplicating event log
// of cluster mode (a JetStream stream in production:
// cluster/nats_event_log.h; an in-memory fake in tests). A message is
// stored once per message id within the log's duplicate window: publishing
// it again returns the first sequence, marked duplicate. Implementations
// are thread-safe.
#ifndef GOODPUT_CLUSTER_EVENT_LOG_H_
#define GOODPUT_CLUSTER_EVENT_LOG_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace goodput::cluster {

struct LogMessage {
  uint64_t sequence = 0;  // in the whole log
  std::string data;
};

// Reads the messages of one subject in log order, from a start sequence.
// Not thread-safe: one reader per consuming thread.
class LogReader {
 public:
  virtual ~LogReader() = default;
  // Up to `max` next messages; waits up to `timeout_ms` for the first one,
  // and returns none if nothing came.
  virtual absl::StatusOr<std::vector<LogMessage>> Next(int max,
                                                       int64_t timeout_ms) = 0;
};

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
  // A reader of `subject`'s messages with sequence >= `from_sequence`.
  virtual absl::StatusOr<std::unique_ptr<LogReader>> Read(
      absl::string_view subject, uint64_t from_sequence) = 0;
};

}  // namespace goodput::cluster

#endif  // GOODPUT_CLUSTER_EVENT_LOG_H_
