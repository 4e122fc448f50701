#include "server/query_service.h"

#include <algorithm>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"
#include "core/fleet_report.h"
#include "report/job_report_wire.h"
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
constexpr size_t kFleetWorstJobs = 5;  // as Drilldown::Fleet

// The first chunk's header but the capacity: as_of, since and the job count.
void SetHeader(int64_t as_of_ns, std::optional<int64_t> since_ns,
               size_t total_jobs, v1::ReportChunk* chunk) {
  *chunk->mutable_as_of() = NanosToTimestamp(as_of_ns);
  if (since_ns) *chunk->mutable_since() = NanosToTimestamp(*since_ns);
  chunk->set_total_jobs(static_cast<int64_t>(total_jobs));
}

// Streams `report` in chunks of `chunk_jobs` jobs: the first with as_of,
// since, the capacity and the job count. CANCELLED if the client left.
// (The fan-out's merged parts; the local report is WriteCoreChunks'.)
grpc::Status WriteChunks(FetchedReport& report, size_t chunk_jobs,
                         grpc::ServerWriter<v1::ReportChunk>* writer) {
  v1::ShardReport& all = report.shard;
  v1::ReportChunk chunk;
  SetHeader(report.as_of_ns, report.since_ns, all.jobs_size(), &chunk);
  *chunk.mutable_part()->mutable_capacity_chip_seconds() =
      all.capacity_chip_seconds();
  chunk.mutable_part()->set_capacity_hosts(all.capacity_hosts());
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

// Streams `report` as WriteChunks does, each chunk's part (the capacity
// in the first, then its jobs) written straight from core's form
// (report::AppendJobReportField) into the chunk's wire form: a field the
// chunk carries as an unknown field of ReportChunk's `part` number, which
// protobuf writes as it is, so the client parses the same ShardReport it
// would from a built message. No message is built per job, and nothing is
// allocated per job (the part's bytes, one chunk's, are reused).
grpc::Status WriteCoreChunks(const core::FleetReport& report, size_t chunk_jobs,
                             const std::string& capacity_hosts,
                             grpc::ServerWriter<v1::ReportChunk>* writer) {
  const size_t total = report.jobs.size();
  std::string part;
  size_t next = 0;
  do {
    v1::ReportChunk chunk;
    size_t used = 0;
    if (next == 0) {
      SetHeader(report.as_of_ns, report.since_ns, total, &chunk);
      v1::ShardReport capacity;
      report::CapacityToProto(report, capacity.mutable_capacity_chip_seconds());
      capacity.set_capacity_hosts(capacity_hosts);
      part = capacity.SerializeAsString();  // then the jobs: one ShardReport
      used = part.size();
    }
    const size_t end = std::min(total, next + chunk_jobs);
    for (; next < end; ++next) {
      report::AppendJobReportField(v1::ShardReport::kJobsFieldNumber,
                                   report.jobs[next], &part, &used);
    }
    chunk.GetReflection()
        ->MutableUnknownFields(&chunk)
        ->AddLengthDelimited(v1::ReportChunk::kPartFieldNumber)
        ->assign(part.data(), used);
    if (!writer->Write(chunk)) return CancelledStatus();
  } while (next < total);
  return grpc::Status::OK;
}

// The members' reports as one: their jobs (each once: FailedPrecondition
// naming a job two sent) and the first one's capacity (every member applies
// every heartbeat: "all"), as of and since as the first.
absl::StatusOr<FetchedReport> Concat(std::vector<FetchedReport> parts) {
  FetchedReport out;
  if (parts.empty()) return out;
  out.as_of_ns = parts[0].as_of_ns;
  out.since_ns = parts[0].since_ns;
  *out.shard.mutable_capacity_chip_seconds() =
      parts[0].shard.capacity_chip_seconds();
  out.shard.set_capacity_hosts(parts[0].shard.capacity_hosts());
  std::set<std::string> seen;
  for (FetchedReport& part : parts) {
    for (v1::JobReport& job : *part.shard.mutable_jobs()) {
      if (!seen.insert(job.job_id()).second) {
        return absl::FailedPreconditionError(absl::StrCat(
            "cluster: job '", job.job_id(), "' was answered by two members"));
      }
      out.shard.mutable_jobs()->Add(std::move(job));
    }
  }
  return out;
}

// Sets `request`'s as_of to `now_ns` if it has none: every member answers
// as of one instant.
template <typename Request>
Request AtOneInstant(const Request& request, int64_t now_ns) {
  Request out = request;
  if (!out.has_as_of()) *out.mutable_as_of() = NanosToTimestamp(now_ns);
  return out;
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
  grpc::Status status;
  auto run = [&] {
    if (fault_hook_) fault_hook_(cancelled);
    if (!cancelled()) status = query(cancelled);
  };
  if (pool_ != nullptr) {
    pool_->Run(run);
  } else {
    run();
  }
  return cancelled() ? CancelledStatus() : status;
}

bool QueryService::FansOut(const grpc::ServerContext& context) const {
  if (cluster_.fan_out == nullptr) return false;
  const auto& metadata = context.client_metadata();
  auto it = metadata.find(kScopeMetadata);
  return it == metadata.end() || it->second != kScopeLocal;
}

template <typename T>
absl::StatusOr<MemberPart<T>> QueryService::HeldPart(
    const std::function<absl::StatusOr<T>()>& answer) const {
  std::vector<int32_t> before = cluster_.held();
  absl::StatusOr<T> response = answer();
  if (!response.ok()) return response.status();
  if (cluster_.held() != before) {
    return absl::AbortedError(
        "cluster: this instance's partitions moved during the query; retry");
  }
  return MemberPart<T>{*std::move(response), std::move(before)};
}

template <typename T>
absl::StatusOr<T> QueryService::Local(
    grpc::ServerContext* context,
    const std::function<absl::StatusOr<T>()>& answer) {
  if (!cluster_.held) return answer();
  absl::StatusOr<MemberPart<T>> part = HeldPart(answer);
  if (!part.ok()) return part.status();
  context->AddTrailingMetadata(kPartitionsMetadata,
                               FanOut::FormatPartitions(part->partitions));
  return std::move(part->response);
}

template <typename T>
absl::StatusOr<std::vector<T>> QueryService::Gather(
    const std::function<absl::StatusOr<T>()>& local,
    const std::function<
        absl::StatusOr<MemberPart<T>>(const std::string& address)>& remote) {
  return cluster_.fan_out->Gather<T>(
      [&](const cluster::Member& member,
          bool self) -> absl::StatusOr<MemberPart<T>> {
        if (self) return HeldPart(local);
        return remote(member.address);
      });
}

absl::StatusOr<core::FleetReport> QueryService::LocalFleetReport(
    const v1::ReportRequest& request, const std::function<bool()>& cancelled) {
  absl::StatusOr<core::FleetReport> report =
      ingestor_->Report(TimestampToNanos(request.as_of()),
                        Since(request.has_since(), request.since()), cancelled,
                        core::FleetSegments::kJobsOnly, request.exact_since());
  if (!report.ok()) return report.status();
  if (make_job_filter_) {
    const JobFilter keep = make_job_filter_();
    std::vector<core::JobReport>& jobs = report->jobs;
    jobs.erase(std::remove_if(
                   jobs.begin(), jobs.end(),
                   [&](const core::JobReport& j) { return !keep(j.job_id); }),
               jobs.end());
  }
  return report;
}

absl::StatusOr<FetchedReport> QueryService::LocalReport(
    const v1::ReportRequest& request, const std::function<bool()>& cancelled) {
  absl::StatusOr<core::FleetReport> report =
      LocalFleetReport(request, cancelled);
  if (!report.ok()) return report.status();
  FetchedReport out{report->as_of_ns, report->since_ns,
                    report::ToShardReport(*report)};
  out.shard.set_capacity_hosts(capacity_hosts_);
  return out;
}

absl::StatusOr<FetchedReport> QueryService::FanOutReport(
    grpc::ServerContext* context, const v1::ReportRequest& request,
    const std::function<bool()>& cancelled) {
  absl::StatusOr<std::vector<FetchedReport>> parts = Gather<FetchedReport>(
      [&] { return LocalReport(request, cancelled); },
      [&](const std::string& address) {
        return cluster_.peers->Report(address, *context, request);
      });
  if (!parts.ok()) return parts.status();
  return Concat(*std::move(parts));
}

grpc::Status QueryService::Report(grpc::ServerContext* context,
                                  const v1::ReportRequest* request,
                                  grpc::ServerWriter<v1::ReportChunk>* writer) {
  const v1::ReportRequest one = AtOneInstant(*request, clock_->NowNanos());
  const size_t chunk_jobs =
      request->chunk_jobs() == 0 ? kDefaultChunkJobs : request->chunk_jobs();
  return RunHeavy(context, [&](const std::function<bool()>& cancelled) {
    if (FansOut(*context)) {
      absl::StatusOr<FetchedReport> merged =
          FanOutReport(context, one, cancelled);
      if (!merged.ok()) return ToGrpc(merged.status());
      return WriteChunks(*merged, chunk_jobs, writer);
    }
    absl::StatusOr<core::FleetReport> report = Local<core::FleetReport>(
        context, [&] { return LocalFleetReport(one, cancelled); });
    if (!report.ok()) return ToGrpc(report.status());
    return WriteCoreChunks(*report, chunk_jobs, capacity_hosts_, writer);
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

absl::StatusOr<v1::JobsResponse> QueryService::LocalJobs(
    const v1::JobsRequest& request, const core::JobFilter& filter,
    const std::function<bool()>& cancelled) {
  absl::StatusOr<core::JobsView> view = drilldown_.Jobs(
      TimestampToNanos(request.as_of()),
      Since(request.has_since(), request.since()), filter, cancelled);
  if (!view.ok()) return view.status();
  return report::JobsViewToProto(*view);
}

absl::StatusOr<v1::JobsResponse> QueryService::FanOutJobs(
    grpc::ServerContext* context, const v1::JobsRequest& request,
    const core::JobFilter& filter, const std::function<bool()>& cancelled) {
  absl::StatusOr<std::vector<v1::JobsResponse>> parts =
      Gather<v1::JobsResponse>(
          [&] { return LocalJobs(request, filter, cancelled); },
          [&](const std::string& address) {
            return cluster_.peers->Jobs(address, *context, request);
          });
  if (!parts.ok()) return parts.status();
  std::vector<core::JobsView> views;
  for (const v1::JobsResponse& part : *parts) {
    absl::StatusOr<core::JobsView> view = report::JobsViewFromProto(part);
    if (!view.ok()) return view.status();
    views.push_back(*std::move(view));
  }
  return report::JobsViewToProto(report::MergeJobsViews(views, filter));
}

grpc::Status QueryService::Jobs(grpc::ServerContext* context,
                                const v1::JobsRequest* request,
                                v1::JobsResponse* response) {
  absl::StatusOr<core::JobFilter> filter =
      report::JobFilterFromRequest(*request);
  if (!filter.ok()) return ToGrpc(filter.status());
  const v1::JobsRequest one = AtOneInstant(*request, clock_->NowNanos());
  return RunHeavy(context, [&](const std::function<bool()>& cancelled) {
    absl::StatusOr<v1::JobsResponse> jobs =
        FansOut(*context) ? FanOutJobs(context, one, *filter, cancelled)
                          : Local<v1::JobsResponse>(context, [&] {
                              return LocalJobs(one, *filter, cancelled);
                            });
    if (!jobs.ok()) return ToGrpc(jobs.status());
    *response = *std::move(jobs);
    return grpc::Status::OK;
  });
}

absl::StatusOr<v1::JobResponse> QueryService::LocalJob(
    grpc::ServerContext* context, const v1::JobRequest& request) {
  const size_t limit =
      request.timeline_limit() == 0 ? 200 : request.timeline_limit();
  absl::StatusOr<core::JobView> view = drilldown_.Job(
      request.job_id(),
      AsOf(request.has_as_of() ? &request.as_of() : nullptr, clock_),
      Windows(request), limit, CancelledFn(context));
  if (!view.ok()) return view.status();
  return report::JobViewToProto(*view);
}

absl::StatusOr<v1::JobResponse> QueryService::OwnersJob(
    grpc::ServerContext* context, const v1::JobRequest& request) {
  auto owner = cluster_.fan_out->OwnerOfJob(request.job_id());
  if (!owner.ok()) return owner.status();
  if (owner->second) return LocalJob(context, request);
  return cluster_.peers->Job(owner->first.address, *context, request);
}

grpc::Status QueryService::Job(grpc::ServerContext* context,
                               const v1::JobRequest* request,
                               v1::JobResponse* response) {
  if (request->job_id().empty()) {
    return ToGrpc(absl::InvalidArgumentError("job_id: empty"));
  }
  absl::StatusOr<v1::JobResponse> job = FansOut(*context)
                                            ? OwnersJob(context, *request)
                                            : LocalJob(context, *request);
  if (!job.ok()) return ToGrpc(job.status());
  *response = *std::move(job);
  return grpc::Status::OK;
}

absl::StatusOr<v1::FleetResponse> QueryService::LocalFleet(
    const v1::FleetRequest& request, const std::function<bool()>& cancelled) {
  absl::StatusOr<core::FleetView> view = drilldown_.Fleet(
      TimestampToNanos(request.as_of()),
      Since(request.has_since(), request.since()),
      request.by().empty() ? "accelerator" : request.by(), cancelled);
  if (!view.ok()) return view.status();
  v1::FleetResponse out = report::FleetViewToProto(*view);
  out.set_capacity_hosts(capacity_hosts_);
  return out;
}

absl::StatusOr<v1::FleetResponse> QueryService::FanOutFleet(
    grpc::ServerContext* context, const v1::FleetRequest& request,
    const std::function<bool()>& cancelled) {
  absl::StatusOr<std::vector<v1::FleetResponse>> parts =
      Gather<v1::FleetResponse>([&] { return LocalFleet(request, cancelled); },
                                [&](const std::string& address) {
                                  return cluster_.peers->Fleet(
                                      address, *context, request);
                                });
  if (!parts.ok()) return parts.status();
  std::vector<core::FleetView> views;
  for (const v1::FleetResponse& part : *parts) {
    absl::StatusOr<core::FleetView> view = report::FleetViewFromProto(part);
    if (!view.ok()) return view.status();
    views.push_back(*std::move(view));
  }
  v1::FleetResponse out = report::FleetViewToProto(report::MergeFleetViews(
      views, kFleetWorstJobs, report::CapacityMerge::kOnce));
  out.set_capacity_hosts(capacity_hosts_);
  return out;
}

grpc::Status QueryService::Fleet(grpc::ServerContext* context,
                                 const v1::FleetRequest* request,
                                 v1::FleetResponse* response) {
  const v1::FleetRequest one = AtOneInstant(*request, clock_->NowNanos());
  return RunHeavy(context, [&](const std::function<bool()>& cancelled) {
    absl::StatusOr<v1::FleetResponse> fleet =
        FansOut(*context) ? FanOutFleet(context, one, cancelled)
                          : Local<v1::FleetResponse>(context, [&] {
                              return LocalFleet(one, cancelled);
                            });
    if (!fleet.ok()) return ToGrpc(fleet.status());
    *response = *std::move(fleet);
    return grpc::Status::OK;
  });
}

absl::StatusOr<v1::SummaryResponse> QueryService::LocalSummary(
    const v1::SummaryRequest& request, const std::function<bool()>& cancelled) {
  const size_t worst =
      request.worst_jobs() == 0 ? kDefaultSummaryJobs : request.worst_jobs();
  absl::StatusOr<core::FleetReport> report =
      ingestor_->Report(TimestampToNanos(request.as_of()), std::nullopt,
                        cancelled, core::FleetSegments::kCapacityOnly);
  if (!report.ok()) return report.status();
  if (make_job_filter_) {
    *report =
        KeepAnswered(ingestor_->config(), make_job_filter_(),
                     *std::move(report), core::FleetSegments::kCapacityOnly);
  }
  v1::SummaryResponse out = report::SummaryFromReport(*report, worst);
  *out.mutable_ingest() = Counters(ingestor_->stats());
  out.set_capacity_hosts(capacity_hosts_);
  return out;
}

absl::StatusOr<v1::SummaryResponse> QueryService::FanOutSummary(
    grpc::ServerContext* context, const v1::SummaryRequest& request,
    const std::function<bool()>& cancelled) {
  absl::StatusOr<std::vector<v1::SummaryResponse>> parts =
      Gather<v1::SummaryResponse>(
          [&] { return LocalSummary(request, cancelled); },
          [&](const std::string& address) {
            return cluster_.peers->Summary(address, *context, request);
          });
  if (!parts.ok()) return parts.status();
  absl::StatusOr<v1::SummaryResponse> out = report::MergeSummaries(
      *parts, request.worst_jobs(), report::CapacityMerge::kOnce);
  if (out.ok()) out->set_capacity_hosts(capacity_hosts_);
  return out;
}

grpc::Status QueryService::Summary(grpc::ServerContext* context,
                                   const v1::SummaryRequest* request,
                                   v1::SummaryResponse* response) {
  const v1::SummaryRequest one = AtOneInstant(*request, clock_->NowNanos());
  return RunHeavy(context, [&](const std::function<bool()>& cancelled) {
    absl::StatusOr<v1::SummaryResponse> summary =
        FansOut(*context) ? FanOutSummary(context, one, cancelled)
                          : Local<v1::SummaryResponse>(context, [&] {
                              return LocalSummary(one, cancelled);
                            });
    if (!summary.ok()) return ToGrpc(summary.status());
    *response = *std::move(summary);
    return grpc::Status::OK;
  });
}

}  // namespace goodput::server
