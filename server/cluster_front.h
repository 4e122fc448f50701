// ClusterFront: the accepting side of cluster mode, what goodputd's Ingest
// service stores an agent's batch through when --cluster is set. It judges
// each event with the stateless checks (codec::ValidateEvent against this
// server's clock, the same errors naming the field and value as the
// embedded mode), answers the refused ones in the ack, and publishes the
// accepted ones through the BatchPublisher, split by partition; the ack is
// returned only once every part is stored in the replicated log, and a log
// error is Unavailable (the agent keeps the batch and resends it: the log
// stores a resent part once). What needs a job's state (events after its
// job_ended, --max_jobs) is judged where the partition is applied; those
// refusals become dead letters there. Borrows the publisher and the clock,
// which must outlive it. Thread-safe if the publisher's log is.
#ifndef GOODPUT_SERVER_CLUSTER_FRONT_H_
#define GOODPUT_SERVER_CLUSTER_FRONT_H_

#include <atomic>
#include <cstdint>

#include "absl/status/statusor.h"
#include "cluster/batch_publisher.h"
#include "codec/event_validator.h"
#include "proto/service.pb.h"
#include "util/clock.h"

namespace goodput::server {

struct ClusterFrontStats {
  int64_t batches = 0;          // acknowledged
  int64_t accepted_events = 0;  // published
  int64_t rejected_events = 0;  // answered in the ack, not published
  int64_t failed_batches = 0;   // the log did not store them
  int64_t duplicate_parts = 0;  // parts the log had stored before
};

class ClusterFront {
 public:
  ClusterFront(cluster::BatchPublisher* publisher, Clock* clock,
               codec::ValidationLimits limits);

  // The ack of `*batch` once its accepted events are in the log (their
  // events are moved out of `*batch`); InvalidArgument for a batch without
  // agent_id or sequence, Unavailable if the log failed.
  absl::StatusOr<v1::Ack> IngestTaking(v1::Batch* batch);

  ClusterFrontStats stats() const;

 private:
  cluster::BatchPublisher* const publisher_;
  Clock* const clock_;
  const codec::ValidationLimits limits_;
  std::atomic<int64_t> batches_{0}, accepted_{0}, rejected_{0}, failed_{0},
      duplicates_{0};
};

}  // namespace goodput::server

#endif  // GOODPUT_SERVER_CLUSTER_FRONT_H_
