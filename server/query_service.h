#ifndef GOODPUT_SERVER_QUERY_SERVICE_H_
#define GOODPUT_SERVER_QUERY_SERVICE_H_

#include "proto/service.grpc.pb.h"
#include "server/drilldown.h"
#include "server/ingestor.h"
#include "storage/event_store.h"
#include "util/clock.h"

namespace goodput::server {

// gRPC adapter of the Query service: the report (SPEC section 4, rendered
// by the same JSON writer and table as goodputctl replay) as of a time
// (default: the clock), dead letters, and the drill-down views (jobs, job,
// fleet; server/drilldown.h) rendered by cli/drilldown_{json,table}.h.
// Does not own its collaborators. Thread-safe.
class QueryService final : public v1::Query::Service {
 public:
  QueryService(Ingestor* ingestor, storage::EventStore* store, Clock* clock)
      : ingestor_(ingestor),
        store_(store),
        clock_(clock),
        drilldown_(ingestor, store) {}

  grpc::Status Report(grpc::ServerContext* context,
                      const v1::ReportRequest* request,
                      v1::ReportResponse* response) override;
  grpc::Status DeadLetters(grpc::ServerContext* context,
                           const v1::DeadLettersRequest* request,
                           v1::DeadLettersResponse* response) override;
  grpc::Status Jobs(grpc::ServerContext* context,
                    const v1::JobsRequest* request,
                    v1::JobsResponse* response) override;
  grpc::Status Job(grpc::ServerContext* context, const v1::JobRequest* request,
                   v1::JobResponse* response) override;
  grpc::Status Fleet(grpc::ServerContext* context,
                     const v1::FleetRequest* request,
                     v1::FleetResponse* response) override;

 private:
  Ingestor* ingestor_;
  storage::EventStore* store_;
  Clock* clock_;
  Drilldown drilldown_;
};

}  // namespace goodput::server

#endif  // GOODPUT_SERVER_QUERY_SERVICE_H_
