#include "server/query_service.h"

#include <optional>

#include "cli/report_json.h"
#include "cli/report_table.h"
#include "util/grpc_status.h"

namespace goodput::server {
namespace {

int64_t Nanos(const google::protobuf::Timestamp& t) {
  return t.seconds() * 1'000'000'000 + t.nanos();
}

}  // namespace

grpc::Status QueryService::Report(grpc::ServerContext* context,
                                  const v1::ReportRequest* request,
                                  v1::ReportResponse* response) {
  const int64_t as_of =
      request->has_as_of() ? Nanos(request->as_of()) : clock_->NowNanos();
  std::optional<int64_t> since;
  if (request->has_since()) since = Nanos(request->since());
  absl::StatusOr<core::FleetReport> report = ingestor_->Report(as_of, since);
  if (!report.ok()) return ToGrpc(report.status());
  absl::StatusOr<std::string> json = cli::WriteReportJson(*report);
  if (!json.ok()) return ToGrpc(json.status());
  response->set_json(*std::move(json));
  response->set_table(cli::FormatReportTable(*report));
  return grpc::Status::OK;
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

}  // namespace goodput::server
