#include "server/query_service.h"

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "absl/cleanup/cleanup.h"
#include "core/fleet_report.h"
#include "report/query_proto.h"
#include "report/shard_report.h"
#include "util/grpc_status.h"
#include "util/proto_time.h"
#include "util/time_format.h"

namespace goodput::server {
namespace {

int64_t AsOf(const google::protobuf::Timestamp* as_of, Clock* clock) {
  return as_of != nullptr ? TimestampToNanos(*as_of) : clock->NowNanos();
}

std::optional<int64_t> Since(bool has, const google::protobuf::Timestamp& t) {
  if (!has) return std::nullopt;
  return TimestampToNanos(t);
}

std::vector<NamedWindow> Windows(const v1::JobRequest& request) {
  if (request.windows().empty()) return DefaultJobWindows();
  std::vector<NamedWindow> windows;
  for (const auto& d : request.windows()) {
    const int64_t ns = DurationToNanos(d);
    windows.push_back({FormatShortDuration(ns), ns});
  }
  return windows;
}

// Whether the call was cancelled (client, deadline or server shutdown).
std::function<bool()> CancelledFn(grpc::ServerContext* context) {
  return [context] { return context->IsCancelled(); };
}

grpc::Status CancelledStatus() {
  return ToGrpc(absl::CancelledError("query: the call was cancelled"));
}

constexpr size_t kDefaultChunkJobs = 1000;
constexpr size_t kDefaultSummaryJobs = 10;

// Streams `report` in chunks of `chunk_jobs` jobs: the first with as_of,
// since, the capacity and the job count. CANCELLED if the client left.
grpc::Status WriteChunks(const core::FleetReport& report, size_t chunk_jobs,
                         grpc::ServerWriter<v1::ReportChunk>* writer) {
  v1::ShardReport all = report::ToShardReport(report);
  v1::ReportChunk chunk;
  *chunk.mutable_as_of() = NanosToTimestamp(report.as_of_ns);
  if (report.since_ns)
    *chunk.mutable_since() = NanosToTimestamp(*report.since_ns);
  *chunk.mutable_part()->mutable_capacity_chip_seconds() =
      all.capacity_chip_seconds();
  chunk.set_total_jobs(all.jobs_size());
  auto* jobs = all.mutable_jobs();
  size_t next = 0;
  do {
    for (size_t n = 0;
         n < chunk_jobs && next < static_cast<size_t>(jobs->size());
         ++n, ++next) {
      chunk.mutable_part()->mutable_jobs()->Add(std::move((*jobs)[next]));
    }
    if (!writer->Write(chunk)) return CancelledStatus();
    chunk.Clear();
  } while (next < static_cast<size_t>(jobs->size()));
  return grpc::Status::OK;
}

// Query.Summary's ingest counters from the ingestor's.
v1::IngestCounters Counters(const IngestStats& stats) {
  v1::IngestCounters out;
  out.set_batches(stats.batches);
  out.set_duplicate_batches(stats.duplicate_batches);
  out.set_accepted_events(stats.accepted_events);
  out.set_rejected_events(stats.rejected_events);
  out.set_failed_batches(stats.failed_batches);
  out.set_agents(static_cast<int64_t>(stats.agent_last_seen_ns.size()));
  int64_t newest = 0;
  for (const auto& [agent, ns] : stats.agent_last_seen_ns) {
    newest = std::max(newest, ns);
  }
  if (newest > 0) *out.mutable_last_agent_seen() = NanosToTimestamp(newest);
  return out;
}

}  // namespace

grpc::Status QueryService::RunHeavy(grpc::ServerContext* context,
                                    const QueryFn& query) {
  if (admission_ != nullptr) {
    if (absl::Status s = admission_->Enter(); !s.ok()) return ToGrpc(s);
  }
  absl::Cleanup leave = [this] {
    if (admission_ != nullptr) admission_->Leave();
  };
  const std::function<bool()> cancelled = CancelledFn(context);
  if (fault_hook_) fault_hook_(cancelled);
  if (cancelled()) return CancelledStatus();
  grpc::Status status = query(cancelled);
  return cancelled() ? CancelledStatus() : status;
}

grpc::Status QueryService::Report(grpc::ServerContext* context,
                                  const v1::ReportRequest* request,
                                  grpc::ServerWriter<v1::ReportChunk>* writer) {
  const int64_t as_of =
      AsOf(request->has_as_of() ? &request->as_of() : nullptr, clock_);
  const size_t chunk_jobs =
      request->chunk_jobs() == 0 ? kDefaultChunkJobs : request->chunk_jobs();
  return RunHeavy(context, [&](const std::function<bool()>& cancelled) {
    absl::StatusOr<core::FleetReport> report = ingestor_->Report(
        as_of, Since(request->has_since(), request->since()), cancelled,
        core::FleetSegments::kCapacityOnly, request->exact_since());
    if (!report.ok()) return ToGrpc(report.status());
    if (make_job_filter_) {
      const JobFilter keep = make_job_filter_();
      std::vector<core::JobReport>& jobs = report->jobs;
      jobs.erase(std::remove_if(
                     jobs.begin(), jobs.end(),
                     [&](const core::JobReport& j) { return !keep(j.job_id); }),
                 jobs.end());
    }
    return WriteChunks(*report, chunk_jobs, writer);
  });
}

grpc::Status QueryService::DeadLetters(grpc::ServerContext* context,
                                       const v1::DeadLettersRequest* request,
                                       v1::DeadLettersResponse* response) {
  std::vector<v1::DeadLetter> letters;
  uint64_t total = 0;
  const size_t limit = request->limit() == 0 ? 100 : request->limit();
  absl::Status s = store_->DeadLetters(limit, &letters, &total);
  if (!s.ok()) return ToGrpc(s);
  for (auto& d : letters) *response->add_dead_letters() = std::move(d);
  response->set_total(total);
  return grpc::Status::OK;
}

grpc::Status QueryService::Jobs(grpc::ServerContext* context,
                                const v1::JobsRequest* request,
                                v1::JobsResponse* response) {
  absl::StatusOr<core::JobFilter> filter =
      report::JobFilterFromRequest(*request);
  if (!filter.ok()) return ToGrpc(filter.status());
  const int64_t as_of =
      AsOf(request->has_as_of() ? &request->as_of() : nullptr, clock_);
  return RunHeavy(context, [&](const std::function<bool()>& cancelled) {
    absl::StatusOr<core::JobsView> view =
        drilldown_.Jobs(as_of, Since(request->has_since(), request->since()),
                        *filter, cancelled);
    if (!view.ok()) return ToGrpc(view.status());
    *response = report::JobsViewToProto(*view);
    return grpc::Status::OK;
  });
}

grpc::Status QueryService::Job(grpc::ServerContext* context,
                               const v1::JobRequest* request,
                               v1::JobResponse* response) {
  if (request->job_id().empty()) {
    return ToGrpc(absl::InvalidArgumentError("job_id: empty"));
  }
  const size_t limit =
      request->timeline_limit() == 0 ? 200 : request->timeline_limit();
  absl::StatusOr<core::JobView> view = drilldown_.Job(
      request->job_id(),
      AsOf(request->has_as_of() ? &request->as_of() : nullptr, clock_),
      Windows(*request), limit, CancelledFn(context));
  if (!view.ok()) return ToGrpc(view.status());
  *response = report::JobViewToProto(*view);
  return grpc::Status::OK;
}

grpc::Status QueryService::Fleet(grpc::ServerContext* context,
                                 const v1::FleetRequest* request,
                                 v1::FleetResponse* response) {
  const int64_t as_of =
      AsOf(request->has_as_of() ? &request->as_of() : nullptr, clock_);
  return RunHeavy(context, [&](const std::function<bool()>& cancelled) {
    absl::StatusOr<core::FleetView> view = drilldown_.Fleet(
        as_of, Since(request->has_since(), request->since()),
        request->by().empty() ? "accelerator" : request->by(), cancelled);
    if (!view.ok()) return ToGrpc(view.status());
    *response = report::FleetViewToProto(*view);
    return grpc::Status::OK;
  });
}

grpc::Status QueryService::Summary(grpc::ServerContext* context,
                                   const v1::SummaryRequest* request,
                                   v1::SummaryResponse* response) {
  const int64_t as_of =
      AsOf(request->has_as_of() ? &request->as_of() : nullptr, clock_);
  const size_t worst =
      request->worst_jobs() == 0 ? kDefaultSummaryJobs : request->worst_jobs();
  return RunHeavy(context, [&](const std::function<bool()>& cancelled) {
    absl::StatusOr<core::FleetReport> report = ingestor_->Report(
        as_of, std::nullopt, cancelled, core::FleetSegments::kCapacityOnly);
    if (!report.ok()) return ToGrpc(report.status());
    if (make_job_filter_) {
      *report =
          KeepAnswered(ingestor_->config(), make_job_filter_(),
                       *std::move(report), core::FleetSegments::kCapacityOnly);
    }
    *response = report::SummaryFromReport(*report, worst);
    *response->mutable_ingest() = Counters(ingestor_->stats());
    return grpc::Status::OK;
  });
}

}  // namespace goodput::server
