#ifndef GOODPUT_SERVER_INGEST_STREAMS_H_
#define GOODPUT_SERVER_INGEST_STREAMS_H_

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "grpcpp/server_context.h"
#include "util/clock.h"
#include "util/logger.h"

namespace goodput::server {

// IngestStreams: the open Ingest.Stream calls of goodputd (docs/security.md,
// "Idle streams and reserved capacity"). It caps how many are open at once
// (--max_ingest_streams), so that ingest load or idle connections can never
// take every gRPC thread (--max_streams) from queries and health checks,
// and ends streams that sent no batch for --stream_idle_timeout
// (CancelIdle, which goodputd calls periodically). Does not own the clock
// or the server contexts (each is registered only while its call runs).
// Thread-safe.
class IngestStreams {
 public:
  struct Options {
    int max_streams = 0;          // 0: no cap
    int64_t idle_timeout_ns = 0;  // 0: never time out
    Logger log{"goodputd"};       // where "ended ingest stream" lines go
  };
  struct Stats {
    int64_t open = 0;         // streams open now
    int64_t refused = 0;      // refused for max_ingest_streams
    int64_t idle_closed = 0;  // ended by stream_idle_timeout
  };

  // One open stream, registered until destroyed. Not thread-safe (its
  // call's handler thread uses it).
  class Handle {
   public:
    ~Handle();
    Handle(const Handle&) = delete;
    Handle& operator=(const Handle&) = delete;
    // A batch arrived: the stream is not idle.
    void Touch();

   private:
    friend class IngestStreams;
    Handle(IngestStreams* owner, grpc::ServerContext* context)
        : owner_(owner), context_(context) {}
    IngestStreams* owner_;
    grpc::ServerContext* context_;
  };

  IngestStreams(Options options, Clock* clock);

  // Registers the stream of `context`, or ResourceExhausted naming
  // --max_ingest_streams when that many are open.
  absl::StatusOr<std::unique_ptr<Handle>> Enter(grpc::ServerContext* context);
  // Cancels (ServerContext::TryCancel) every stream with no batch for the
  // idle timeout, logging each; returns how many.
  int CancelIdle();
  Stats stats() const;
  const Options& options() const { return options_; }

 private:
  struct Open {
    std::string peer;  // read on the call's thread
    int64_t last_active_ns = 0;
    bool cancelled = false;
  };

  const Options options_;
  Clock* const clock_;
  mutable absl::Mutex mu_;
  std::unordered_map<grpc::ServerContext*, Open> open_ ABSL_GUARDED_BY(mu_);
  Stats stats_ ABSL_GUARDED_BY(mu_);
};

}  // namespace goodput::server

#endif  // GOODPUT_SERVER_INGEST_STREAMS_H_
