#include "clients/cpp/query_client.h"

#include <memory>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "report/shard_report.h"
#include "util/grpc_status.h"
#include "util/proto_time.h"

namespace goodput {
namespace {

// Appends `chunk` to `out`; the first chunk also sets the header.
void Take(v1::ReportChunk& chunk, bool first, FetchedReport* out,
          int64_t* announced) {
  if (first) {
    out->as_of_ns = TimestampToNanos(chunk.as_of());
    if (chunk.has_since()) out->since_ns = TimestampToNanos(chunk.since());
    *announced = chunk.total_jobs();
    out->shard.mutable_jobs()->Reserve(static_cast<int>(*announced));
    *out->shard.mutable_capacity_chip_seconds() =
        chunk.part().capacity_chip_seconds();
    out->shard.set_capacity_hosts(chunk.part().capacity_hosts());
  }
  // The parsed jobs change hands by pointer (both on the heap): no message
  // is made or swapped per job.
  auto* jobs = chunk.mutable_part()->mutable_jobs();
  std::vector<v1::JobReport*> taken(jobs->size());
  jobs->ExtractSubrange(0, jobs->size(), taken.data());
  for (v1::JobReport* job : taken) out->shard.mutable_jobs()->AddAllocated(job);
}

}  // namespace

absl::StatusOr<FetchedReport> ReadReport(v1::Query::StubInterface* stub,
                                         grpc::ClientContext* context,
                                         const v1::ReportRequest& request) {
  std::unique_ptr<grpc::ClientReaderInterface<v1::ReportChunk>> reader =
      stub->Report(context, request);
  FetchedReport out;
  int64_t announced = 0;
  bool first = true;
  for (v1::ReportChunk chunk; reader->Read(&chunk); first = false) {
    Take(chunk, first, &out, &announced);
  }
  if (absl::Status s = FromGrpc(reader->Finish()); !s.ok()) return s;
  if (out.shard.jobs_size() != announced) {
    return absl::DataLossError(absl::StrCat(
        "report: got ", out.shard.jobs_size(), " of ", announced, " jobs"));
  }
  return out;
}

absl::StatusOr<core::FleetReport> FetchReport(
    v1::Query::StubInterface* stub, grpc::ClientContext* context,
    const v1::ReportRequest& request) {
  absl::StatusOr<FetchedReport> fetched = ReadReport(stub, context, request);
  if (!fetched.ok()) return fetched.status();
  return report::MergeShardReports({{"", std::move(fetched->shard)}},
                                   fetched->as_of_ns, fetched->since_ns);
}

}  // namespace goodput
