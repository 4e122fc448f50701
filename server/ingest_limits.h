// IngestLimits: goodputd's admission limits beyond event validation
// (docs/security.md): events per batch, a per-agent event rate (a token
// bucket on the server's clock) and the number of jobs held in memory.
// A hit limit is an error naming the flag, the limit and the value, and
// bumps a counter in stats(); so do the limits enforced elsewhere (the
// validator's sizes, gRPC's threads, QueryAdmission's query cap) through
// the Count* calls. Does not own the clock. Thread-safe.
#ifndef GOODPUT_SERVER_INGEST_LIMITS_H_
#define GOODPUT_SERVER_INGEST_LIMITS_H_

#include <cstdint>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "proto/event.pb.h"
#include "util/clock.h"

namespace goodput::server {

struct IngestLimitOptions {
  size_t max_batch_events = 10000;     // --max_batch_events
  size_t max_batch_bytes = 4 << 20;    // --max_batch_bytes (serialized)
  double agent_events_per_second = 0;  // --max_agent_rate; 0 = unlimited
  double agent_burst_events = 0;       // bucket size; 0 = 2 s of rate
  size_t max_jobs = 1000000;           // --max_jobs
};

// How often each limit was hit, exported as goodput_limit_rejected_total
// with the label `limit` in the comment.
struct IngestLimitStats {
  int64_t batches_too_large = 0;       // max_batch_events (batches)
  int64_t bytes_limited_batches = 0;   // max_batch_bytes (batches)
  int64_t rate_limited_batches = 0;    // agent_rate (batches)
  int64_t jobs_limited_events = 0;     // max_jobs (events)
  int64_t labels_limited_events = 0;   // max_labels (events)
  int64_t strings_limited_events = 0;  // max_string_bytes (events)
  int64_t refused_streams = 0;         // max_streams (calls)
  int64_t refused_queries = 0;         // max_concurrent_queries (calls)
};

class IngestLimits {
 public:
  IngestLimits(IngestLimitOptions options, Clock* clock);

  // Whether `agent` may send a batch of `events` now. InvalidArgument when
  // the batch exceeds --max_batch_events; ResourceExhausted with
  // `*retry_after` set when the agent's rate is used up. The bucket may go
  // negative by one batch, so any batch within the size limit gets through.
  absl::Status AdmitBatch(const std::string& agent, size_t events,
                          absl::Duration* retry_after);

  // Whether a batch of `bytes` (serialized) is within --max_batch_bytes:
  // InvalidArgument naming the flag otherwise. gRPC's own message limit is
  // TransportLimit(), so a batch up to twice the flag reaches this check
  // and is counted; a larger one is dropped uncounted by gRPC's transport.
  absl::Status AdmitBatchBytes(size_t bytes);
  // gRPC's max receive message size for these options.
  int TransportLimit() const;

  // Whether event `e` may create a job: ResourceExhausted naming --max_jobs
  // when its job is not among `known_jobs` live jobs (`is_known`) and the
  // live jobs plus those `new_in_batch` reached the limit.
  absl::Status AdmitJob(const v1::Event& e, bool is_known, size_t known_jobs,
                        std::unordered_set<std::string>* new_in_batch);

  // Counts an event codec::ValidateEvent refused as `invalid` if a size
  // limit (--max_labels, --max_string_bytes) was the reason.
  void CountInvalidEvent(const absl::Status& invalid);
  // Counts a call gRPC refused because --max_streams calls were running.
  void CountRefusedStream();
  // Counts a query refused because --max_concurrent_queries were running.
  void CountRefusedQuery();

  IngestLimitStats stats() const;
  const IngestLimitOptions& options() const { return options_; }

 private:
  struct Bucket {
    double tokens = 0;
    int64_t updated_ns = 0;
  };
  // Refills `bucket` up to now; forgets full buckets when there are many.
  void Refill(Bucket* bucket, int64_t now_ns) const;
  void ForgetIdle(int64_t now_ns) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const IngestLimitOptions options_;
  const double burst_;
  Clock* const clock_;
  mutable absl::Mutex mu_;
  std::unordered_map<std::string, Bucket> buckets_ ABSL_GUARDED_BY(mu_);
  IngestLimitStats stats_ ABSL_GUARDED_BY(mu_);
};

}  // namespace goodput::server

#endif  // GOODPUT_SERVER_INGEST_LIMITS_H_
