#ifndef GOODPUT_SERVER_QUERY_SERVICE_H_
#define GOODPUT_SERVER_QUERY_SERVICE_H_

#include "proto/service.grpc.pb.h"
#include "server/ingestor.h"
#include "storage/event_store.h"
#include "util/clock.h"

namespace goodput::server {

// gRPC adapter of the Query service: the report (SPEC section 4, rendered
// by the same JSON writer and table as goodputctl replay) as of a time
// (default: the clock) and dead letters. Does not own its collaborators.
// Thread-safe.
class QueryService final : public v1::Query::Service {
 public:
  QueryService(Ingestor* ingestor, storage::EventStore* store, Clock* clock)
      : ingestor_(ingestor), store_(store), clock_(clock) {}

  grpc::Status Report(grpc::ServerContext* context,
                      const v1::ReportRequest* request,
                      v1::ReportResponse* response) override;
  grpc::Status DeadLetters(grpc::ServerContext* context,
                           const v1::DeadLettersRequest* request,
                           v1::DeadLettersResponse* response) override;

 private:
  Ingestor* ingestor_;
  storage::EventStore* store_;
  Clock* clock_;
};

}  // namespace goodput::server

#endif  // GOODPUT_SERVER_QUERY_SERVICE_H_
