#include "server/query_service.h"

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "absl/cleanup/cleanup.h"
#include "report/drilldown_json.h"
#include "report/drilldown_table.h"
#include "report/report_json.h"
#include "report/report_table.h"
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

// Fills `response` (json and table) from a rendered view.
template <typename Response>
grpc::Status Render(absl::StatusOr<std::string> json, std::string table,
                    Response* response) {
  if (!json.ok()) return ToGrpc(json.status());
  response->set_json(*std::move(json));
  response->set_table(std::move(table));
  return grpc::Status::OK;
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
                                  v1::ReportResponse* response) {
  const int64_t as_of = request->has_as_of()
                            ? TimestampToNanos(request->as_of())
                            : clock_->NowNanos();
  std::optional<int64_t> since;
  if (request->has_since()) since = TimestampToNanos(request->since());
  return RunHeavy(context, [&](const std::function<bool()>& cancelled) {
    absl::StatusOr<core::FleetReport> report =
        ingestor_->Report(as_of, since, cancelled);
    if (!report.ok()) return ToGrpc(report.status());
    if (request->shard_data()) {
      *response->mutable_shard() = report::ToShardReport(*report);
      return grpc::Status::OK;
    }
    absl::StatusOr<std::string> json = report::WriteReportJson(*report);
    if (!json.ok()) return ToGrpc(json.status());
    response->set_json(*std::move(json));
    response->set_table(report::FormatReportTable(*report));
    return grpc::Status::OK;
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
    return Render(report::WriteJobsJson(*view, *filter),
                  report::FormatJobsTable(*view, *filter), response);
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
  return Render(report::WriteJobViewJson(*view),
                report::FormatJobViewTable(*view), response);
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
    return Render(report::WriteFleetViewJson(*view),
                  report::FormatFleetViewTable(*view), response);
  });
}

}  // namespace goodput::server
