// Uplink: streams the spool's batches to goodputd over Ingest.Stream
// (proto/service.proto) and deletes each batch once the server has
// acknowledged it (duplicate acks too: the server stored it earlier).
//
// Batches go out in sequence order with at most `max_in_flight` awaiting
// their acks; acks must come back in the same order. When the stream
// fails (server down, network, a protocol error), the uplink waits a
// Backoff delay through the Sleeper and opens a new stream that resends
// every unacknowledged batch from the oldest: at-least-once delivery, made
// exactly-once by the server's (agent_id, sequence) dedupe. A stream the
// server ends with a retry hint (RESOURCE_EXHAUSTED: over its rate limit,
// util/retry_hint.h) is reopened no sooner than the hint. Events the
// server rejects are logged with index and reason and counted, never
// retried. A batch the server refuses whole (the stream ends with
// INVALID_ARGUMENT, e.g. over its --max_batch_bytes) and a batch whose file
// is corrupt are moved to the spool's dead-letter/ directory, logged and
// counted, and the uplink goes on with the next: never retried.
//
// Owns its gRPC channel and its thread (one writer; each stream adds one
// reader thread); does not own the spool, clock, sleeper or metrics.
// Thread-safe.
#ifndef GOODPUT_AGENT_UPLINK_H_
#define GOODPUT_AGENT_UPLINK_H_

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "agent/backoff.h"
#include "agent/log_limiter.h"
#include "agent/sleeper.h"
#include "agent/spool.h"
#include "grpcpp/grpcpp.h"
#include "proto/service.grpc.pb.h"
#include "util/clock.h"
#include "util/logger.h"

namespace goodput::agent {

class Uplink {
 public:
  struct Options {
    std::string server;  // HOST:PORT of goodputd
    size_t max_in_flight = 8;
    absl::Duration initial_backoff = absl::Milliseconds(100);
    absl::Duration max_backoff = absl::Seconds(10);
    uint64_t seed = 0;  // of the backoff jitter; 0 = random
    // From util/grpc_credentials.h (TLS, token); null = plaintext.
    std::shared_ptr<grpc::ChannelCredentials> credentials;
    std::string tls_server_name;  // expected in the server's cert, if set
    Logger log{"goodput-agent"};  // where its log lines go
  };

  struct Stats {
    int64_t streams = 0;        // opened
    int64_t stream_errors = 0;  // streams that ended (all end in error)
    int64_t sent_batches = 0;   // resends included
    int64_t acked_batches = 0;
    int64_t duplicate_acks = 0;
    int64_t server_rejected_events = 0;
    int64_t corrupt_batches = 0;
    int64_t refused_batches = 0;  // refused by the server as invalid
    int64_t dead_lettered = 0;    // corrupt or refused by the server
    int64_t retry_hints = 0;      // streams ended with a server retry hint
    size_t max_in_flight_seen = 0;

    // Sums the counts (the agent's shards); max_in_flight_seen is the max.
    void Add(const Stats& o);
  };

  Uplink(Options options, Spool* spool, Clock* clock, Sleeper* sleeper);
  ~Uplink();
  Uplink(const Uplink&) = delete;
  Uplink& operator=(const Uplink&) = delete;

  void Start();
  // Cancels the stream and joins; unacknowledged batches stay spooled.
  void Stop();
  // A batch was appended to the spool (wakes the writer).
  void Notify();
  // Logs how many rejections and stream failures the rate limits
  // suppressed in intervals that have ended (`all`: also in the
  // running ones, at shutdown), if any.
  void FlushSuppressedLogs(bool all = false);

  // A stream is open and the channel is ready.
  bool connected() const;
  Stats stats() const;
  // Waits until `done(stats())` holds; false on timeout.
  bool AwaitStats(const std::function<bool(const Stats&)>& done,
                  absl::Duration timeout) const;

 private:
  // Batches go out as the bytes of the spool file (Spool::ReadWire), never
  // parsed and serialized again: a Batch on the wire all the same.
  using Stream = grpc::ClientReaderWriter<grpc::ByteBuffer, v1::Ack>;

  void Run();
  // One stream from open to failure; its error.
  absl::Status RunSession();
  // Clears the ended session's state; the batch the server refused as
  // invalid (`finish`), if any.
  std::optional<uint64_t> EndSession(const absl::Status& finish);
  void DeadLetterRefused(uint64_t sequence, const absl::Status& status);
  // Writes pending batches until the stream breaks or Stop().
  absl::Status WriteBatches(Stream* stream);
  // The next pending batch above `last_sent` once the in-flight window has
  // room; nullopt when stopping or the stream broke.
  std::optional<uint64_t> WaitForNext(uint64_t last_sent);
  // The batch to send; a corrupt one is dead-lettered (NotFound).
  absl::StatusOr<grpc::ByteBuffer> ReadForSending(uint64_t sequence);
  void ReadAcks(Stream* stream, grpc::ClientContext* context);
  absl::Status HandleAck(const v1::Ack& ack);
  void LogRejections(const v1::Ack& ack);
  // Rate-limited to a line per 30 s unless `always`.
  void LogRetry(const absl::Status& status, absl::Duration delay, bool always);

  const Options options_;
  Spool* const spool_;
  Clock* const clock_;
  Sleeper* const sleeper_;
  std::shared_ptr<grpc::Channel> channel_;
  // goodput.v1.Ingest/Stream, called with the spool's bytes (Stream).
  const grpc::internal::RpcMethod stream_method_;
  Backoff backoff_;                           // used by thread_ only
  std::optional<absl::Duration> retry_hint_;  // thread_ only: last session's
  LogLimiter retry_log_;
  LogLimiter rejection_log_;
  std::thread thread_;

  mutable absl::Mutex mu_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  bool broken_ ABSL_GUARDED_BY(mu_) = false;  // the reader has finished
  bool session_active_ ABSL_GUARDED_BY(mu_) = false;
  bool session_acked_ ABSL_GUARDED_BY(mu_) = false;
  absl::Status session_error_ ABSL_GUARDED_BY(mu_);
  grpc::ClientContext* context_ ABSL_GUARDED_BY(mu_) = nullptr;
  std::deque<uint64_t> in_flight_ ABSL_GUARDED_BY(mu_);
  uint64_t append_generation_ ABSL_GUARDED_BY(mu_) = 0;
  Stats stats_ ABSL_GUARDED_BY(mu_);
};

}  // namespace goodput::agent

#endif  // GOODPUT_AGENT_UPLINK_H_
