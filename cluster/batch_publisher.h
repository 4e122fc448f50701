// BatchPublisher: the ingest side of cluster mode. It splits an agent's
// Batch by partition (the jump hash of each event's job_id; events without
// a job_id, host heartbeats, go to their own subject), and publishes each
// part to the replicated EventLog under a message id made of (agent_id,
// sequence, partition, chunk), so that a batch the agent resends after a
// lost ack is stored once. Publish returns OK only when every part is
// stored: only then may the agent's batch be acknowledged. Parts above
// `max_message_bytes` (NATS's max_payload) go in several chunks.
//
// Subjects: "<prefix>.p.<partition>" and "<prefix>.hb". Borrows the log,
// which must outlive it. Thread-safe if the log is.
#ifndef GOODPUT_CLUSTER_BATCH_PUBLISHER_H_
#define GOODPUT_CLUSTER_BATCH_PUBLISHER_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "cluster/event_log.h"
#include "proto/service.pb.h"

namespace goodput::cluster {

struct PublishOptions {
  std::string subject_prefix = "goodput";
  int32_t partitions = 64;
  int64_t max_message_bytes = 1 << 20;  // NATS's default max_payload
};

struct PublishResult {
  int parts = 0;       // messages published
  int duplicates = 0;  // of them, stored before (a resend)
};

class BatchPublisher {
 public:
  BatchPublisher(EventLog* log, PublishOptions options)
      : log_(log), options_(std::move(options)) {}

  absl::StatusOr<PublishResult> Publish(const v1::Batch& batch);

  // "<prefix>.p.<partition>", and the heartbeats' "<prefix>.hb".
  std::string PartitionSubject(int32_t partition) const;
  std::string HeartbeatSubject() const;

 private:
  absl::Status PublishPart(const v1::Batch& part, const std::string& subject,
                           const std::string& id_base, PublishResult* result);

  EventLog* const log_;
  const PublishOptions options_;
};

}  // namespace goodput::cluster

#endif  // GOODPUT_CLUSTER_BATCH_PUBLISHER_H_
