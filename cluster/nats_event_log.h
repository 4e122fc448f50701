// NatsEventLog: the EventLog of cluster mode, a JetStream stream (file
// storage, `replicas` copies, deduplication by message id within
// `duplicate_window_ms`) reached through a NatsConnection it borrows.
// Publish returns after JetStream's ack, which comes once a quorum of the
// replicas stored the message. Thread-safe (the C client is).
#ifndef GOODPUT_CLUSTER_NATS_EVENT_LOG_H_
#define GOODPUT_CLUSTER_NATS_EVENT_LOG_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "cluster/event_log.h"
#include "cluster/nats_connection.h"

namespace goodput::cluster {

struct EventStreamConfig {
  std::string name = "GOODPUT_EVENTS";
  std::vector<std::string> subjects = {"goodput.p.*", "goodput.hb"};
  int replicas = 3;
  int64_t duplicate_window_ms = 10 * 60 * 1000;
  // P, written into the stream's description when Open creates it.
  int32_t partitions = 0;
  // The newest messages kept per subject; 0: all (the event stream). The
  // snapshot stream keeps a few snapshots' chunks per partition.
  int64_t max_msgs_per_subject = 0;
};

// The snapshot stream of cluster mode (cluster/partition_snapshots.h):
// subjects goodput.snap.<p>, the newest `max_msgs_per_subject` chunks of
// each kept.
EventStreamConfig SnapshotStreamConfig(int replicas, int32_t partitions,
                                       int64_t max_msgs_per_subject);

class NatsEventLog : public EventLog {
 public:
  // Creates the stream, or binds to it if it exists with these settings
  // (its description, which holds P, kept as it was created).
  static absl::StatusOr<std::unique_ptr<NatsEventLog>> Open(
      NatsConnection* nats, const EventStreamConfig& config);

  absl::StatusOr<PublishAck> Publish(absl::string_view subject,
                                     absl::string_view message_id,
                                     absl::string_view data) override;
  // P as the stream was created with (from its description); 0 for a
  // stream created without it.
  int32_t created_partitions() const { return created_partitions_; }
  // An ephemeral pull consumer of `subject` from `from_sequence`. While
  // it is behind, its Next fetches up to `max` of the stored messages at
  // once whatever `timeout_ms` (a new owner's catch-up); once caught up,
  // Next waits up to `timeout_ms` (at least 1 ms) for new ones.
  absl::StatusOr<std::unique_ptr<LogReader>> Read(
      absl::string_view subject, uint64_t from_sequence) override;

 private:
  NatsEventLog(NatsConnection* nats, std::string stream,
               int32_t created_partitions)
      : nats_(nats),
        stream_(std::move(stream)),
        created_partitions_(created_partitions) {}

  NatsConnection* const nats_;
  const std::string stream_;
  const int32_t created_partitions_;
};

}  // namespace goodput::cluster

#endif  // GOODPUT_CLUSTER_NATS_EVENT_LOG_H_
