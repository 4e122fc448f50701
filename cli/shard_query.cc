#include "cli/shard_query.h"

#include <memory>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "cli/remote_util.h"
#include "clients/cpp/query_client.h"
#include "core/drilldown.h"
#include "proto/service.grpc.pb.h"
#include "report/drilldown_json.h"
#include "report/drilldown_table.h"
#include "report/query_proto.h"
#include "report/report_json.h"
#include "report/report_table.h"
#include "report/shard_report.h"
#include "util/grpc_status.h"
#include "util/proto_time.h"

namespace goodput::cli {
namespace {

using Stub = v1::Query::Stub;

// As goodputd's Query.Fleet (server/drilldown.cc).
constexpr size_t kWorstJobs = 5;

// `s` with `address` in front of its message.
absl::Status Named(const std::string& address, const absl::Status& s) {
  return absl::Status(s.code(), absl::StrCat(address, ": ", s.message()));
}

// A stub for `address`, and a context with the query deadline.
struct Call {
  std::unique_ptr<Stub> stub;
  grpc::ClientContext rpc;
};

// With `local`, the call asks a goodputd in cluster mode for its own
// part only (goodput-scope: local): goodputctl merges a --server list's
// parts itself, so each instance must not answer for the whole fleet.
absl::StatusOr<std::unique_ptr<Call>> Open(const std::string& address,
                                           const TlsFlagValues& tls,
                                           bool local = false) {
  absl::StatusOr<std::shared_ptr<grpc::Channel>> channel =
      ConnectTo(address, tls);
  if (!channel.ok()) return channel.status();
  auto call = std::make_unique<Call>();
  call->stub = v1::Query::NewStub(*channel);
  call->rpc.set_deadline(absl::ToChronoTime(absl::Now() + kQueryTimeout));
  if (local) call->rpc.AddMetadata(kScopeMetadata, kScopeLocal);
  return call;
}

// Calls `method` with `request` on `address`; errors name the address.
template <typename Request, typename Response>
absl::StatusOr<Response> CallOne(
    const std::string& address, const TlsFlagValues& tls,
    grpc::Status (Stub::*method)(grpc::ClientContext*, const Request&,
                                 Response*),
    const Request& request, bool local = false) {
  absl::StatusOr<std::unique_ptr<Call>> call = Open(address, tls, local);
  if (!call.ok()) return call.status();
  Response response;
  absl::Status s =
      FromGrpc(((*(*call)->stub).*method)(&(*call)->rpc, request, &response));
  if (!s.ok()) return Named(address, s);
  return response;
}

// `fetch(address)` for every shard, in parallel; the first error.
template <typename T, typename Fetch>
absl::StatusOr<std::vector<T>> ForEachShard(const ShardMap& shards,
                                            const Fetch& fetch) {
  std::vector<absl::StatusOr<T>> answers(shards.size(),
                                         absl::UnknownError("not asked"));
  std::vector<std::thread> threads;
  for (size_t i = 1; i < shards.size(); ++i) {
    threads.emplace_back([&, i] { answers[i] = fetch(shards.address(i)); });
  }
  answers[0] = fetch(shards.address(0));
  for (std::thread& t : threads) t.join();
  std::vector<T> out;
  for (absl::StatusOr<T>& a : answers) {
    if (!a.ok()) return a.status();
    out.push_back(*std::move(a));
  }
  return out;
}

// Sets `request`'s as_of to now if it has none and several shards answer.
template <typename Request>
void OneInstant(const ShardMap& shards, Request* request) {
  if (shards.size() > 1 && !request->has_as_of()) {
    *request->mutable_as_of() = NanosToTimestamp(absl::GetCurrentTimeNanos());
  }
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

absl::StatusOr<core::JobsView> FetchJobs(const ShardMap& shards,
                                         const TlsFlagValues& tls,
                                         const v1::JobsRequest& request,
                                         const core::JobFilter& filter) {
  auto views = ForEachShard<core::JobsView>(
      shards,
      [&](const std::string& address) -> absl::StatusOr<core::JobsView> {
        auto r = CallOne(address, tls, &Stub::Jobs, request, shards.size() > 1);
        if (!r.ok()) return r.status();
        auto view = report::JobsViewFromProto(*r);
        if (!view.ok()) return Named(address, view.status());
        return view;
      });
  if (!views.ok()) return views.status();
  return report::MergeJobsViews(*views, filter);
}

// How `shards`' capacities merge, from what each `answers` says it covers
// (report::CapacityMergeOf).
template <typename Answer>
absl::StatusOr<report::CapacityMerge> CapacityMergeOf(
    const ShardMap& shards, const std::vector<Answer>& answers) {
  std::vector<std::string> hosts;
  for (const Answer& a : answers) hosts.push_back(a.capacity_hosts());
  return report::CapacityMergeOf(shards.addresses(), hosts);
}

absl::StatusOr<core::FleetView> FetchFleet(const ShardMap& shards,
                                           const TlsFlagValues& tls,
                                           const v1::FleetRequest& request) {
  auto answers =
      ForEachShard<v1::FleetResponse>(shards, [&](const std::string& address) {
        return CallOne(address, tls, &Stub::Fleet, request, shards.size() > 1);
      });
  if (!answers.ok()) return answers.status();
  absl::StatusOr<report::CapacityMerge> how = CapacityMergeOf(shards, *answers);
  if (!how.ok()) return how.status();
  std::vector<core::FleetView> views;
  for (size_t i = 0; i < answers->size(); ++i) {
    auto view = report::FleetViewFromProto((*answers)[i]);
    if (!view.ok()) return Named(shards.address(i), view.status());
    views.push_back(*std::move(view));
  }
  return report::MergeFleetViews(views, kWorstJobs, *how);
}

}  // namespace

absl::StatusOr<ShardMap> ShardList(const CommandContext& context) {
  if (!context.server) {
    return absl::InvalidArgumentError("--server: required");
  }
  if (!absl::StrContains(*context.server, ',')) {
    return ShardMap({*context.server});
  }
  return ShardMap::Parse(*context.server, "--server");
}

absl::StatusOr<core::FleetReport> FetchMergedReport(const ShardMap& shards,
                                                    const TlsFlagValues& tls,
                                                    v1::ReportRequest request) {
  OneInstant(shards, &request);
  auto answers = ForEachShard<FetchedReport>(
      shards, [&](const std::string& address) -> absl::StatusOr<FetchedReport> {
        absl::StatusOr<std::unique_ptr<Call>> call =
            Open(address, tls, shards.size() > 1);
        if (!call.ok()) return call.status();
        auto r = ReadReport((*call)->stub.get(), &(*call)->rpc, request);
        if (!r.ok()) return Named(address, r.status());
        return r;
      });
  if (!answers.ok()) return answers.status();
  std::vector<report::ShardAnswer> merged;
  for (size_t i = 0; i < shards.size(); ++i) {
    merged.push_back({shards.address(i), std::move((*answers)[i].shard)});
  }
  const FetchedReport& first = (*answers)[0];
  return report::MergeShardReports(merged, first.as_of_ns, first.since_ns);
}

absl::StatusOr<v1::SummaryResponse> FetchSummary(const ShardMap& shards,
                                                 const TlsFlagValues& tls,
                                                 v1::SummaryRequest request) {
  OneInstant(shards, &request);
  auto answers = ForEachShard<v1::SummaryResponse>(
      shards, [&](const std::string& address) {
        return CallOne(address, tls, &Stub::Summary, request,
                       shards.size() > 1);
      });
  if (!answers.ok()) return answers.status();
  absl::StatusOr<report::CapacityMerge> how = CapacityMergeOf(shards, *answers);
  if (!how.ok()) return how.status();
  return report::MergeSummaries(*answers, request.worst_jobs(), *how);
}

int PrintReport(const ShardMap& shards, const v1::ReportRequest& request,
                bool json, const std::string& prefix, CommandContext& context) {
  absl::StatusOr<core::FleetReport> report =
      FetchMergedReport(shards, context.tls, request);
  if (!report.ok()) return Print(report.status(), prefix, context);
  if (json) return Print(report::WriteReportJson(*report), prefix, context);
  return Print(report::FormatReportTable(*report), prefix, context);
}

int PrintJobs(const ShardMap& shards, const v1::JobsRequest& request, bool json,
              const std::string& prefix, CommandContext& context) {
  absl::StatusOr<core::JobFilter> filter =
      report::JobFilterFromRequest(request);
  if (!filter.ok()) return Print(filter.status(), prefix, context);
  v1::JobsRequest one_instant = request;
  OneInstant(shards, &one_instant);
  absl::StatusOr<core::JobsView> view =
      FetchJobs(shards, context.tls, one_instant, *filter);
  if (!view.ok()) return Print(view.status(), prefix, context);
  if (json)
    return Print(report::WriteJobsJson(*view, *filter), prefix, context);
  return Print(report::FormatJobsTable(*view, *filter), prefix, context);
}

int PrintJob(const ShardMap& shards, const v1::JobRequest& request, bool json,
             const std::string& prefix, CommandContext& context) {
  // A job lives on one shard: ask that one.
  const std::string& address = shards.address(shards.ShardOf(request.job_id()));
  absl::StatusOr<v1::JobResponse> response =
      CallOne(address, context.tls, &Stub::Job, request);
  if (!response.ok()) return Print(response.status(), prefix, context);
  absl::StatusOr<core::JobView> view = report::JobViewFromProto(*response);
  if (!view.ok()) return Print(Named(address, view.status()), prefix, context);
  if (json) return Print(report::WriteJobViewJson(*view), prefix, context);
  return Print(report::FormatJobViewTable(*view), prefix, context);
}

int PrintFleet(const ShardMap& shards, const v1::FleetRequest& request,
               bool json, const std::string& prefix, CommandContext& context) {
  const std::string by = request.by().empty() ? "accelerator" : request.by();
  if (absl::Status s = core::CheckDimension(by); !s.ok()) {
    return Print(s, prefix, context);
  }
  v1::FleetRequest one_instant = request;
  OneInstant(shards, &one_instant);
  absl::StatusOr<core::FleetView> view =
      FetchFleet(shards, context.tls, one_instant);
  if (!view.ok()) return Print(view.status(), prefix, context);
  if (json) return Print(report::WriteFleetViewJson(*view), prefix, context);
  return Print(report::FormatFleetViewTable(*view), prefix, context);
}

}  // namespace goodput::cli
