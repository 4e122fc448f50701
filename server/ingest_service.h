#ifndef GOODPUT_SERVER_INGEST_SERVICE_H_
#define GOODPUT_SERVER_INGEST_SERVICE_H_

#include "proto/service.grpc.pb.h"
#include "server/ingestor.h"

namespace goodput::server {

// gRPC adapter of Ingest.Stream over an Ingestor: reads batches in order
// and writes one Ack per batch after the Ingestor made it durable
// (stream semantics in proto/service.proto). An Ingestor error ends the
// stream with UNAVAILABLE so the agent reconnects and resends. Does not own
// the Ingestor. Thread-safe (gRPC calls it from many threads).
class IngestService final : public v1::Ingest::Service {
 public:
  explicit IngestService(Ingestor* ingestor) : ingestor_(ingestor) {}

  grpc::Status Stream(
      grpc::ServerContext* context,
      grpc::ServerReaderWriter<v1::Ack, v1::Batch>* stream) override;

 private:
  Ingestor* ingestor_;
};

}  // namespace goodput::server

#endif  // GOODPUT_SERVER_INGEST_SERVICE_H_
