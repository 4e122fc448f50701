#ifndef GOODPUT_SERVER_INGESTOR_H_
#define GOODPUT_SERVER_INGESTOR_H_

#include <cstdint>
#include <functional>
#include <map>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "codec/event_validator.h"
#include "core/report.h"
#include "proto/service.pb.h"
#include "server/live_state.h"
#include "storage/event_store.h"
#include "util/clock.h"

namespace goodput::server {

// Counters of what ingest did, for metrics and tests.
struct IngestStats {
  int64_t batches = 0;
  int64_t duplicate_batches = 0;  // redelivered, acknowledged again
  int64_t accepted_events = 0;
  int64_t rejected_events = 0;  // kept as dead letters
  int64_t failed_batches = 0;   // not stored (the agent retries)
  std::map<std::string, int64_t> agent_last_seen_ns;  // server clock
};

// The ingest path of goodputd, independent of gRPC: judges each event of
// an agent's batch (validation, then admission against the live state),
// writes the accepted ones, the dead letters and the agent's sequence in
// one durable store write, then applies them to the live state and returns
// the ack. Batches at or below an agent's acknowledged sequence are
// acknowledged again as duplicates and change nothing. Does not own its
// collaborators, which must outlive it. Thread-safe: calls are serialized.
class Ingestor {
 public:
  // Named fault-injection points (tests, and goodputd --fault): called
  // with "before_store" once a batch is judged and before its write, and
  // with "after_store" once it is durable and before its ack.
  using FaultHook = std::function<void(const char* point)>;

  Ingestor(storage::EventStore* store, LiveState* live, Clock* clock,
           codec::ValidationLimits limits);

  // Loads the agents' acknowledged sequences and every stored event into
  // the live state (restart recovery).
  absl::Status Recover();

  // Ingests one batch. An error means nothing was stored (the agent
  // retries; InvalidArgument for a batch without agent_id or sequence);
  // an ack means the batch is durable.
  absl::StatusOr<v1::Ack> Ingest(const v1::Batch& batch);

  // The live report as of `as_of_ns`; exact for any as-of (replays the
  // store when `as_of_ns` or `since_ns` needs it).
  absl::StatusOr<core::FleetReport> Report(int64_t as_of_ns,
                                           std::optional<int64_t> since_ns);

  // Calls `fn` with the live state under the ingest lock (metrics).
  void VisitLive(const std::function<void(const LiveState&)>& fn);

  // The attribution config of the live state (catalog, size buckets...),
  // for queries that replay a job's stored events.
  core::Config config();

  void set_fault_hook(FaultHook hook);
  IngestStats stats();
  LiveState::Stats live_stats();

 private:
  // Fills `write` and `ack` with the judgement of each event of `batch`.
  void Judge(const v1::Batch& batch, storage::BatchWrite* write, v1::Ack* ack)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::StatusOr<core::FleetReport> ReplayStore(const core::Config& config,
                                                int64_t as_of_ns)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  storage::EventStore* store_;
  Clock* clock_;
  absl::Mutex mu_;
  LiveState* live_ ABSL_GUARDED_BY(mu_);
  codec::ValidationLimits limits_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, uint64_t> agent_sequence_ ABSL_GUARDED_BY(mu_);
  FaultHook fault_hook_ ABSL_GUARDED_BY(mu_);
  IngestStats stats_ ABSL_GUARDED_BY(mu_);
};

}  // namespace goodput::server

#endif  // GOODPUT_SERVER_INGESTOR_H_
