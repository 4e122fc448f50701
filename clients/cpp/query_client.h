// The reading side of goodputd's streamed Query.Report: ReadReport gathers
// one server's chunks into its ShardReport; FetchReport aggregates that
// into the report (report/shard_report.h, as for a shard list of one).
// Used by goodputctl, tests and benchmarks. Stateless functions; thread-safe
// as the stub is.
#ifndef GOODPUT_CLIENTS_CPP_QUERY_CLIENT_H_
#define GOODPUT_CLIENTS_CPP_QUERY_CLIENT_H_

#include <cstdint>
#include <optional>

#include "absl/status/statusor.h"
#include "core/report.h"
#include "grpcpp/client_context.h"
#include "proto/service.grpc.pb.h"

namespace goodput {

// Cluster mode (docs/scaling.md, "One view whoever you ask"): a query with
// the metadata `goodput-scope: local` is answered by the goodputd asked
// for the partitions it holds only, without asking the other members; its
// trailing metadata `goodput-partitions` lists those partitions ("0,3,5").
// goodputd sends it to its peers, and goodputctl with a --server list (each
// instance's own part, merged by goodputctl).
inline constexpr char kScopeMetadata[] = "goodput-scope";
inline constexpr char kScopeLocal[] = "local";
inline constexpr char kPartitionsMetadata[] = "goodput-partitions";

// One server's report as it came: as-of, since and its jobs and capacity.
struct FetchedReport {
  int64_t as_of_ns = 0;
  std::optional<int64_t> since_ns;
  v1::ShardReport shard;
};

// Reads every chunk of Query.Report(`request`) into one ShardReport. The
// call's status as an absl::Status; DataLoss if the stream ended with
// fewer jobs than its first chunk announced.
absl::StatusOr<FetchedReport> ReadReport(v1::Query::StubInterface* stub,
                                         grpc::ClientContext* context,
                                         const v1::ReportRequest& request);

// ReadReport, aggregated into the report one server answers.
absl::StatusOr<core::FleetReport> FetchReport(v1::Query::StubInterface* stub,
                                              grpc::ClientContext* context,
                                              const v1::ReportRequest& request);

}  // namespace goodput

#endif  // GOODPUT_CLIENTS_CPP_QUERY_CLIENT_H_
