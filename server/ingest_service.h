#ifndef GOODPUT_SERVER_INGEST_SERVICE_H_
#define GOODPUT_SERVER_INGEST_SERVICE_H_

#include "proto/service.grpc.pb.h"
#include "server/ingest_limits.h"
#include "server/ingestor.h"

namespace goodput::server {

// gRPC adapter of Ingest.Stream over an Ingestor: reads batches in order
// and writes one Ack per batch after the Ingestor made it durable
// (stream semantics in proto/service.proto). It reads the next batch only
// after the previous one's ack, so each stream holds one batch at a time
// and gRPC flow control slows a fast agent down. An Ingestor error ends the
// stream with UNAVAILABLE so the agent reconnects and resends; a batch over
// a limit (if `limits` is set) ends it with INVALID_ARGUMENT or, for the
// per-agent rate, RESOURCE_EXHAUSTED with a retry hint (util/retry_hint.h).
// Does not own the Ingestor or limits. Thread-safe (gRPC calls it from
// many threads).
class IngestService final : public v1::Ingest::Service {
 public:
  explicit IngestService(Ingestor* ingestor, IngestLimits* limits = nullptr)
      : ingestor_(ingestor), limits_(limits) {}

  grpc::Status Stream(
      grpc::ServerContext* context,
      grpc::ServerReaderWriter<v1::Ack, v1::Batch>* stream) override;

 private:
  // OK, or the status that ends the stream (with its retry hint set).
  absl::Status Admit(grpc::ServerContext* context, const std::string& agent,
                     const v1::Batch& batch);

  Ingestor* ingestor_;
  IngestLimits* limits_;
};

}  // namespace goodput::server

#endif  // GOODPUT_SERVER_INGEST_SERVICE_H_
