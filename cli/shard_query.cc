#include "cli/shard_query.h"

#include <algorithm>
#include <memory>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "cli/remote_util.h"
#include "core/config.h"
#include "core/drilldown.h"
#include "proto/service.grpc.pb.h"
#include "report/drilldown_json.h"
#include "report/drilldown_table.h"
#include "report/report_json.h"
#include "report/report_table.h"
#include "report/shard_report.h"
#include "util/grpc_status.h"
#include "util/proto_time.h"

namespace goodput::cli {
namespace {

// As goodputd's Query.Fleet (server/drilldown.cc).
constexpr size_t kWorstJobs = 5;

std::optional<int64_t> Since(bool has, const google::protobuf::Timestamp& t) {
  if (!has) return std::nullopt;
  return TimestampToNanos(t);
}

int64_t AsOf(bool has, const google::protobuf::Timestamp& t) {
  return has ? TimestampToNanos(t) : absl::GetCurrentTimeNanos();
}

// Query.Report with shard_data from `address`; errors name the address.
absl::StatusOr<v1::ShardReport> FetchShard(const std::string& address,
                                           const TlsFlagValues& tls,
                                           const v1::ReportRequest& request) {
  absl::StatusOr<std::shared_ptr<grpc::Channel>> channel =
      ConnectTo(address, tls);
  if (!channel.ok()) return channel.status();
  grpc::ClientContext rpc;
  rpc.set_deadline(absl::ToChronoTime(absl::Now() + kQueryTimeout));
  v1::ReportResponse response;
  absl::Status s =
      FromGrpc(v1::Query::NewStub(*channel)->Report(&rpc, request, &response));
  if (!s.ok()) {
    return absl::Status(s.code(), absl::StrCat(address, ": ", s.message()));
  }
  if (!response.has_shard()) {
    return absl::FailedPreconditionError(absl::StrCat(
        address, ": answered without shard data (goodputd too old?)"));
  }
  return std::move(*response.mutable_shard());
}

// Writes `text` (or the error) to the context; the exit code.
int Print(absl::StatusOr<std::string> text, const std::string& prefix,
          CommandContext& context) {
  if (!text.ok()) {
    context.err << prefix << ": " << text.status().message() << "\n";
    return kExitUsage;
  }
  context.out << *text;
  return kExitOk;
}

}  // namespace

absl::StatusOr<std::optional<ShardMap>> ShardList(
    const CommandContext& context) {
  if (!context.server || !absl::StrContains(*context.server, ',')) {
    return std::optional<ShardMap>();
  }
  absl::StatusOr<ShardMap> map = ShardMap::Parse(*context.server, "--server");
  if (!map.ok()) return map.status();
  return std::optional<ShardMap>(*std::move(map));
}

absl::StatusOr<core::FleetReport> FetchMergedReport(
    const ShardMap& shards, const TlsFlagValues& tls, int64_t as_of_ns,
    std::optional<int64_t> since_ns) {
  v1::ReportRequest request;
  request.set_shard_data(true);
  *request.mutable_as_of() = NanosToTimestamp(as_of_ns);
  if (since_ns) *request.mutable_since() = NanosToTimestamp(*since_ns);
  std::vector<absl::StatusOr<v1::ShardReport>> answers(shards.size());
  std::vector<std::thread> threads;
  for (size_t i = 0; i < shards.size(); ++i) {
    threads.emplace_back(
        [&, i] { answers[i] = FetchShard(shards.address(i), tls, request); });
  }
  for (std::thread& t : threads) t.join();
  std::vector<report::ShardAnswer> merged;
  for (size_t i = 0; i < shards.size(); ++i) {
    if (!answers[i].ok()) return answers[i].status();
    merged.push_back({shards.address(i), *std::move(answers[i])});
  }
  return report::MergeShardReports(merged, as_of_ns, since_ns);
}

absl::StatusOr<core::FleetReport> FetchMergedReport(
    const ShardMap& shards, const TlsFlagValues& tls,
    const v1::ReportRequest& request) {
  return FetchMergedReport(shards, tls,
                           AsOf(request.has_as_of(), request.as_of()),
                           Since(request.has_since(), request.since()));
}

int PrintMergedReport(const ShardMap& shards, const v1::ReportRequest& request,
                      bool json, const std::string& prefix,
                      CommandContext& context) {
  absl::StatusOr<core::FleetReport> report =
      FetchMergedReport(shards, context.tls, request);
  if (!report.ok()) return Print(report.status(), prefix, context);
  if (json) return Print(report::WriteReportJson(*report), prefix, context);
  return Print(report::FormatReportTable(*report), prefix, context);
}

int PrintMergedJobs(const ShardMap& shards, const v1::JobsRequest& request,
                    bool json, const std::string& prefix,
                    CommandContext& context) {
  absl::StatusOr<core::JobFilter> filter =
      report::JobFilterFromRequest(request);
  if (!filter.ok()) return Print(filter.status(), prefix, context);
  const std::optional<int64_t> since =
      Since(request.has_since(), request.since());
  absl::StatusOr<core::FleetReport> report = FetchMergedReport(
      shards, context.tls, AsOf(request.has_as_of(), request.as_of()), since);
  if (!report.ok()) return Print(report.status(), prefix, context);
  core::Config config;
  if (since) config.since_ns = *since;
  const core::JobsView view = core::RankJobs(config, *report, *filter);
  if (json) return Print(report::WriteJobsJson(view, *filter), prefix, context);
  return Print(report::FormatJobsTable(view, *filter), prefix, context);
}

int PrintMergedFleet(const ShardMap& shards, const v1::FleetRequest& request,
                     bool json, const std::string& prefix,
                     CommandContext& context) {
  const std::string by = request.by().empty() ? "accelerator" : request.by();
  if (absl::Status s = core::CheckDimension(by); !s.ok()) {
    return Print(s, prefix, context);
  }
  absl::StatusOr<core::FleetReport> report = FetchMergedReport(
      shards, context.tls, AsOf(request.has_as_of(), request.as_of()),
      Since(request.has_since(), request.since()));
  if (!report.ok()) return Print(report.status(), prefix, context);
  absl::StatusOr<core::FleetView> view =
      core::MakeFleetView(*report, by, kWorstJobs);
  if (!view.ok()) return Print(view.status(), prefix, context);
  if (json) return Print(report::WriteFleetViewJson(*view), prefix, context);
  return Print(report::FormatFleetViewTable(*view), prefix, context);
}

}  // namespace goodput::cli
