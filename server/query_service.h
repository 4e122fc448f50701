#ifndef GOODPUT_SERVER_QUERY_SERVICE_H_
#define GOODPUT_SERVER_QUERY_SERVICE_H_

#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include "clients/cpp/query_client.h"
#include "proto/service.grpc.pb.h"
#include "server/drilldown.h"
#include "server/fan_out.h"
#include "server/ingestor.h"
#include "server/peer_client.h"
#include "server/query_admission.h"
#include "server/query_pool.h"
#include "storage/event_store.h"
#include "util/clock.h"

namespace goodput::server {

// gRPC adapter of the Query service. It answers with data, never rendered
// text (goodputctl renders): the report's jobs and capacity as of a time
// (default: the clock), streamed in chunks; dead letters; the drill-down
// views (jobs, job, fleet; server/drilldown.h) as messages
// (report/query_proto.h); and the summary (fleet totals, ratios, badput,
// worst jobs, ingest counters). Every query but DeadLetters stops with
// CANCELLED once its call is cancelled (by the client, its deadline, or
// the server's shutdown); Report, Jobs, Fleet and Summary run only if
// `admission` (if set; the cap --max_concurrent_queries) admits them,
// RESOURCE_EXHAUSTED otherwise; with `pool` (if set) they run on its
// threads, below ingest's CPU priority (--query_nice). With a job filter
// (cluster mode: the jobs of the partitions this instance holds now), Report,
// Jobs, Fleet and Summary answer only for the jobs it admits (totals summed
// from them), and Job NotFound for the others. With set_cluster as well
// (cluster mode), Report, Jobs, Fleet and Summary answer for the whole fleet:
// every member is asked for its part, as of one instant, and the parts merged
// (server/fan_out.h); Job goes to the owner of the job's partition. A call
// with `goodput-scope: local` metadata (from a peer, or goodputctl over a
// --server list) gets this instance's part, and the partitions it covers
// in trailing metadata (clients/cpp/query_client.h).
// Does not own its collaborators. Thread-safe.
class QueryService final : public v1::Query::Service {
 public:
  // Test-only fault (goodputd --fault=hold_query:N): called with the
  // call's cancellation when a Report, Jobs, Fleet or Summary query is
  // admitted,
  // before its work.
  using FaultHook = std::function<void(const std::function<bool()>& cancelled)>;

  QueryService(Ingestor* ingestor, storage::EventStore* store, Clock* clock,
               QueryAdmission* admission = nullptr, QueryPool* pool = nullptr)
      : ingestor_(ingestor),
        store_(store),
        clock_(clock),
        admission_(admission),
        pool_(pool),
        drilldown_(ingestor, store) {}

  // Call before serving.
  void set_fault_hook(FaultHook hook) { fault_hook_ = std::move(hook); }

  // Whether a job is answered for; a new one is made per query (it may
  // snapshot what it needs, e.g. the partitions held now).
  using JobFilter = std::function<bool(const std::string& job_id)>;
  // Call before serving; null (the default) answers for every job.
  void set_job_filter(std::function<JobFilter()> make) {
    drilldown_.set_answers(make);
    make_job_filter_ = std::move(make);
  }

  // Cluster mode: the partitions held now (ascending; the job filter's),
  // the members to fan out to and how to call them.
  struct Cluster {
    std::function<std::vector<int32_t>()> held;
    const FanOut* fan_out = nullptr;
    PeerClient* peers = nullptr;
  };
  // Call before serving, with set_job_filter.
  void set_cluster(Cluster cluster) { cluster_ = std::move(cluster); }

  // Call before serving: what the answers say of whose heartbeats the
  // capacity covers (ShardReport.capacity_hosts: "I/N" for --shard, "all"
  // in cluster mode; empty by default).
  void set_capacity_hosts(std::string hosts) {
    capacity_hosts_ = std::move(hosts);
  }

  // Call before serving: Drilldown::set_segment_rate for Job's advice.
  void set_segment_rate(Drilldown::SegmentRate rate) {
    drilldown_.set_segment_rate(std::move(rate));
  }

  grpc::Status Report(grpc::ServerContext* context,
                      const v1::ReportRequest* request,
                      grpc::ServerWriter<v1::ReportChunk>* writer) override;
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
  grpc::Status Summary(grpc::ServerContext* context,
                       const v1::SummaryRequest* request,
                       v1::SummaryResponse* response) override;

 private:
  using QueryFn = std::function<grpc::Status(const std::function<bool()>&)>;
  // Runs `query` with the call's cancellation once `admission_` admits it
  // (and leaves after), on `pool_` if set; CANCELLED if the call is
  // cancelled before or after.
  grpc::Status RunHeavy(grpc::ServerContext* context, const QueryFn& query);

  // Whether `context`'s call is to be fanned out to every member.
  bool FansOut(const grpc::ServerContext& context) const;
  // `answer()` with the partitions held throughout it; ABORTED if they
  // changed meanwhile.
  template <typename T>
  absl::StatusOr<MemberPart<T>> HeldPart(
      const std::function<absl::StatusOr<T>()>& answer) const;
  // This instance's answer: in cluster mode the held partitions' part,
  // listed in `context`'s trailing metadata.
  template <typename T>
  absl::StatusOr<T> Local(grpc::ServerContext* context,
                          const std::function<absl::StatusOr<T>()>& answer);
  // Every member's part: this instance's by `local`, the others' by
  // `remote` (a PeerClient method).
  template <typename T>
  absl::StatusOr<std::vector<T>> Gather(
      const std::function<absl::StatusOr<T>()>& local,
      const std::function<
          absl::StatusOr<MemberPart<T>>(const std::string& address)>& remote);

  // This instance's answers (the job filter applied); LocalReport is
  // LocalFleetReport in machine form (a fan-out's part).
  absl::StatusOr<core::FleetReport> LocalFleetReport(
      const v1::ReportRequest& request, const std::function<bool()>& cancelled);
  absl::StatusOr<FetchedReport> LocalReport(
      const v1::ReportRequest& request, const std::function<bool()>& cancelled);
  absl::StatusOr<v1::JobsResponse> LocalJobs(
      const v1::JobsRequest& request, const core::JobFilter& filter,
      const std::function<bool()>& cancelled);
  absl::StatusOr<v1::FleetResponse> LocalFleet(
      const v1::FleetRequest& request, const std::function<bool()>& cancelled);
  absl::StatusOr<v1::SummaryResponse> LocalSummary(
      const v1::SummaryRequest& request,
      const std::function<bool()>& cancelled);
  // The whole fleet's, gathered from every member and merged.
  absl::StatusOr<FetchedReport> FanOutReport(
      grpc::ServerContext* context, const v1::ReportRequest& request,
      const std::function<bool()>& cancelled);
  absl::StatusOr<v1::JobsResponse> FanOutJobs(
      grpc::ServerContext* context, const v1::JobsRequest& request,
      const core::JobFilter& filter, const std::function<bool()>& cancelled);
  absl::StatusOr<v1::FleetResponse> FanOutFleet(
      grpc::ServerContext* context, const v1::FleetRequest& request,
      const std::function<bool()>& cancelled);
  absl::StatusOr<v1::SummaryResponse> FanOutSummary(
      grpc::ServerContext* context, const v1::SummaryRequest& request,
      const std::function<bool()>& cancelled);
  // Job from the owner of its partition (maybe this instance).
  absl::StatusOr<v1::JobResponse> OwnersJob(grpc::ServerContext* context,
                                            const v1::JobRequest& request);
  absl::StatusOr<v1::JobResponse> LocalJob(grpc::ServerContext* context,
                                           const v1::JobRequest& request);

  Ingestor* ingestor_;
  storage::EventStore* store_;
  Clock* clock_;
  QueryAdmission* admission_;
  QueryPool* pool_;
  Drilldown drilldown_;
  FaultHook fault_hook_;
  std::function<JobFilter()> make_job_filter_;
  Cluster cluster_;
  std::string capacity_hosts_;
};

}  // namespace goodput::server

#endif  // GOODPUT_SERVER_QUERY_SERVICE_H_
