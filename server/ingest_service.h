#ifndef GOODPUT_SERVER_INGEST_SERVICE_H_
#define GOODPUT_SERVER_INGEST_SERVICE_H_

#include <string>

#include "grpcpp/impl/codegen/service_type.h"
#include "grpcpp/server_context.h"
#include "grpcpp/support/byte_buffer.h"
#include "grpcpp/support/sync_stream.h"
#include "proto/service.pb.h"
#include "server/agent_guard.h"
#include "server/cluster_front.h"
#include "server/ingest_limits.h"
#include "server/ingest_streams.h"
#include "server/ingestor.h"
#include "server/token_auth.h"
#include "util/logger.h"

namespace goodput::server {

// gRPC adapter of Ingest.Stream over an Ingestor: reads batches in order
// and writes one Ack per batch after the Ingestor made it durable
// (stream semantics in proto/service.proto). It reads the next batch only
// after the previous one's ack, so each stream holds one batch at a time
// and gRPC flow control slows a fast agent down. An Ingestor error ends the
// stream with UNAVAILABLE so the agent reconnects and resends; a batch over
// a limit (if `limits` is set) ends it with INVALID_ARGUMENT or, for the
// per-agent rate, RESOURCE_EXHAUSTED with a retry hint (util/retry_hint.h).
// A batch that does not parse (invalid UTF-8) ends it with INVALID_ARGUMENT
// naming the event, so the method reads raw bytes (not generated code's
// typed stream, which ends such a stream with OK). A batch whose agent_id
// `guard` refuses ends it with that refusal; one whose sequence jumps too
// far (the Ingestor's OUT_OF_RANGE) too. With `streams`, a stream over
// --max_ingest_streams is refused RESOURCE_EXHAUSTED before it reads, and
// each batch marks its stream active (IngestStreams ends idle ones). Does
// not own the Ingestor, limits, guard, tokens or streams. In cluster mode
// (set_cluster_front) batches are stored through the ClusterFront (into the
// replicated log) instead of the Ingestor. Thread-safe (gRPC calls it from
// many threads).
class IngestService final : public grpc::Service {
 public:
  using RawStream =
      grpc::ServerReaderWriter<grpc::ByteBuffer, grpc::ByteBuffer>;

  // `limits`, `guard` and `tokens` may be null (no such checks).
  IngestService(Ingestor* ingestor, IngestLimits* limits,
                AgentGuard* guard = nullptr, const TokenAuth* tokens = nullptr,
                IngestStreams* streams = nullptr,
                Logger log = Logger("goodputd"));

  grpc::Status Stream(grpc::ServerContext* context, RawStream* stream);

  // Cluster mode: stores batches through `front` (not owned, outlives
  // this) instead of the Ingestor. Call before serving.
  void set_cluster_front(ClusterFront* front) { front_ = front; }

 private:
  // The next batch in `*batch`: false at the end of the stream (`*status`
  // OK) or on a bad batch (`*status` says why).
  bool ReadBatch(RawStream* stream, v1::Batch* batch, absl::Status* status);
  // The batches of one admitted stream, until it ends; the status it ends
  // with.
  absl::Status Serve(grpc::ServerContext* context, RawStream* stream,
                     IngestStreams::Handle* open);
  // OK, or the status that ends the stream (with its retry hint set).
  absl::Status Admit(grpc::ServerContext* context, const CallIdentity& who,
                     const v1::Batch& batch, size_t bytes,
                     AgentGuard::Claims* claims);
  absl::Status Store(v1::Batch* batch, v1::Ack* ack);
  CallIdentity Identify(const grpc::ServerContext& context) const;
  // Logs a refusal an operator must hear about (alert GoodputAgentIdRefused
  // sends them here); returns it.
  absl::Status Loud(const grpc::ServerContext& context, absl::Status s) const;

  Ingestor* ingestor_;
  IngestLimits* limits_;
  const Logger log_;
  AgentGuard* guard_;
  const TokenAuth* tokens_;
  IngestStreams* streams_;
  ClusterFront* front_ = nullptr;
};

}  // namespace goodput::server

#endif  // GOODPUT_SERVER_INGEST_SERVICE_H_
