// Query.Report/Jobs/Job/Fleet/Summary of goodputd over real gRPC
// (loopback, port 0) and real RocksDB: status codes and messages of bad
// requests, defaults (as-of from the server's clock, windows, --by), a
// custom window, limit and sort, the report streamed in chunks, the
// summary, and the cap on concurrent heavy queries
// (--max_concurrent_queries) and the query pool the heavy queries run on
// (--query_nice). Typed answers are rendered with report/'s
// JSON writers, as goodputctl does.
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <thread>

#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "clients/cpp/query_client.h"
#include "core/testing/timeline.h"
#include "gmock/gmock.h"
#include "google/protobuf/util/message_differencer.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/server_builder.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "proto/service.grpc.pb.h"
#include "report/drilldown_json.h"
#include "report/drilldown_table.h"
#include "report/query_proto.h"
#include "report/shard_report.h"
#include "server/goodputd.h"
#include "server/query_pool.h"
#include "server/query_service.h"
#include "storage/memory_event_store.h"
#include "util/grpc_status.h"

namespace goodput {
namespace {

using ::goodput::core::testing::ParseEvents;
using ::goodput::core::testing::T;
using ::goodput::core::testing::Timeline;
using Json = nlohmann::json;

constexpr char kFleet[] = R"(
10:00:00 {"job_id":"llm-7","job_submitted":{"chips":16,"workload":"TRAINING","accelerator":"tpu-v5p"}}
10:01:00 {"job_id":"llm-7","started":{}}
10:05:00 {"job_id":"llm-7","step":{"step":10}}
10:06:00 {"job_id":"llm-7","interruption":{"reason":"PREEMPTED"}}
10:07:00 {"job_id":"llm-7","started":{}}
10:09:00 {"job_id":"llm-7","step":{"step":20}}
10:00:00 {"job_id":"serve-1","job_submitted":{"chips":4,"workload":"SERVING","accelerator":"a100"}}
)";

class QueryGrpcTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = ::testing::TempDir() + "query_XXXXXX";
    dir_ = mkdtemp(tmpl.data());
    server::GoodputdOptions options;
    options.data_dir = dir_;
    options.grpc_address = "127.0.0.1:0";
    auto started = server::Goodputd::Start(options, &clock_);
    ASSERT_TRUE(started.ok()) << started.status();
    server_ = *std::move(started);
    auto channel =
        grpc::CreateChannel("127.0.0.1:" + std::to_string(server_->port()),
                            grpc::InsecureChannelCredentials());
    query_ = v1::Query::NewStub(channel);
    Send(v1::Ingest::NewStub(channel).get());
  }
  void TearDown() override {
    server_.reset();
    std::filesystem::remove_all(dir_);
  }

  void Send(v1::Ingest::Stub* ingest) {
    grpc::ClientContext context;
    auto stream = ingest->Stream(&context);
    v1::Batch batch;
    batch.set_agent_id("agent-1");
    batch.set_sequence(1);
    for (const auto& e : ParseEvents(Timeline(kFleet))) *batch.add_events() = e;
    ASSERT_TRUE(stream->Write(batch));
    v1::Ack ack;
    ASSERT_TRUE(stream->Read(&ack));
    ASSERT_EQ(ack.accepted(), static_cast<uint32_t>(batch.events_size()));
    stream->WritesDone();
    ASSERT_TRUE(stream->Finish().ok());
  }

  grpc::Status Job(const v1::JobRequest& request, Json* json = nullptr) {
    grpc::ClientContext context;
    v1::JobResponse response;
    grpc::Status s = query_->Job(&context, request, &response);
    if (s.ok() && json != nullptr) {
      *json = Json::parse(
          report::JobViewToJson(*report::JobViewFromProto(response)).dump());
    }
    return s;
  }
  grpc::Status Jobs(const v1::JobsRequest& request, Json* json = nullptr) {
    grpc::ClientContext context;
    v1::JobsResponse response;
    grpc::Status s = query_->Jobs(&context, request, &response);
    if (s.ok() && json != nullptr) {
      *json =
          Json::parse(report::JobsToJson(*report::JobsViewFromProto(response),
                                         *report::JobFilterFromRequest(request))
                          .dump());
    }
    return s;
  }
  grpc::Status Fleet(const v1::FleetRequest& request, Json* json = nullptr,
                     std::string* table = nullptr) {
    grpc::ClientContext context;
    v1::FleetResponse response;
    grpc::Status s = query_->Fleet(&context, request, &response);
    if (!s.ok()) return s;
    absl::StatusOr<core::FleetView> view = report::FleetViewFromProto(response);
    if (json != nullptr)
      *json = Json::parse(report::FleetViewToJson(*view).dump());
    if (table != nullptr) *table = report::FormatFleetViewTable(*view);
    return s;
  }

  std::string dir_;
  FakeClock clock_{T("2026-11-22T10:10:00Z")};
  std::unique_ptr<server::Goodputd> server_;
  std::unique_ptr<v1::Query::Stub> query_;
};

TEST_F(QueryGrpcTest, UnknownJobIsNotFoundNamingIt) {
  v1::JobRequest request;
  request.set_job_id("ghost");
  grpc::Status s = Job(request);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_NE(s.error_message().find("job 'ghost' not found"), std::string::npos)
      << s.error_message();
  request.clear_job_id();
  EXPECT_EQ(Job(request).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
}

TEST_F(QueryGrpcTest, BadDimensionOrStateIsInvalidArgumentNamingIt) {
  v1::FleetRequest fleet;
  fleet.set_by("colour");
  grpc::Status s = Fleet(fleet);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(s.error_message().find("'colour'"), std::string::npos);
  v1::JobsRequest jobs;
  jobs.set_state("running");
  s = Jobs(jobs);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(s.error_message().find("'running'"), std::string::npos);
  jobs.clear_state();
  (*jobs.mutable_segments())["team"] = "x";
  s = Jobs(jobs);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(s.error_message().find("'team'"), std::string::npos);
}

TEST_F(QueryGrpcTest, DefaultsComeFromTheClock) {
  v1::JobRequest request;
  request.set_job_id("llm-7");
  Json job;
  ASSERT_TRUE(Job(request, &job).ok());
  EXPECT_EQ(job["as_of"], "2026-11-22T10:10:00Z");
  std::vector<std::string> windows;
  for (const Json& w : job["windows"]) windows.push_back(w["window"]);
  EXPECT_EQ(windows, (std::vector<std::string>{"5m", "1h", "24h", "all"}));
  EXPECT_EQ(job["job"]["interruptions"], 1);
  Json fleet;
  std::string table;
  ASSERT_TRUE(Fleet(v1::FleetRequest(), &fleet, &table).ok());
  EXPECT_EQ(fleet["by"], "accelerator");
  EXPECT_EQ(fleet["segments"].size(), 2u);
  EXPECT_NE(table.find("next: goodputctl job llm-7"), std::string::npos)
      << table;
}

TEST_F(QueryGrpcTest, CustomWindowTimelineLimitAndJobsLimit) {
  v1::JobRequest request;
  request.set_job_id("llm-7");
  request.add_windows()->set_seconds(90);
  request.set_timeline_limit(2);
  Json job;
  ASSERT_TRUE(Job(request, &job).ok());
  ASSERT_EQ(job["windows"].size(), 2u);
  EXPECT_EQ(job["windows"][0]["window"], "1m30s");
  EXPECT_EQ(job["windows"][0]["since"], "2026-11-22T10:08:30Z");
  EXPECT_EQ(job["windows"][0]["seconds"]["total"], 90.0);
  EXPECT_EQ(job["timeline"].size(), 2u);
  EXPECT_GT(job["timeline_omitted"], 0);
  v1::JobsRequest jobs;
  jobs.set_limit(1);
  Json ranked;
  ASSERT_TRUE(Jobs(jobs, &ranked).ok());
  ASSERT_EQ(ranked["jobs"].size(), 1u);
  EXPECT_EQ(ranked["matched"], 2);
  EXPECT_EQ(ranked["jobs"][0]["job_id"], "llm-7");
}

TEST_F(QueryGrpcTest, JobsSortedAndCutOnTheServer) {
  v1::JobsRequest jobs;
  jobs.set_sort("job_id");
  jobs.set_limit(1);
  grpc::ClientContext context;
  v1::JobsResponse response;
  ASSERT_TRUE(query_->Jobs(&context, jobs, &response).ok());
  ASSERT_EQ(response.jobs_size(), 1);
  EXPECT_EQ(response.jobs(0).job_id(), "llm-7");
  EXPECT_EQ(response.matched(), 2);
  jobs.set_sort("chips");
  (*jobs.mutable_segments())["accelerator"] = "a100";
  grpc::ClientContext again;
  ASSERT_TRUE(query_->Jobs(&again, jobs, &response).ok());
  ASSERT_EQ(response.jobs_size(), 1);
  EXPECT_EQ(response.jobs(0).job_id(), "serve-1");
  EXPECT_EQ(response.matched(), 1);
  jobs.set_sort("size");
  grpc::Status s = Jobs(jobs);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(s.error_message().find("sort: unknown order 'size'"),
            std::string::npos)
      << s.error_message();
}

TEST_F(QueryGrpcTest, ReportIsStreamedInChunksAndAggregatesLikeOneServer) {
  v1::ReportRequest request;
  request.set_chunk_jobs(1);
  grpc::ClientContext context;
  auto reader = query_->Report(&context, request);
  std::vector<std::string> jobs;
  int chunks = 0;
  for (v1::ReportChunk chunk; reader->Read(&chunk); ++chunks) {
    if (chunks == 0) {
      EXPECT_EQ(chunk.as_of().seconds(),
                T("2026-11-22T10:10:00Z") / 1000000000);
      EXPECT_EQ(chunk.total_jobs(), 2);
    }
    for (const auto& j : chunk.part().jobs()) jobs.push_back(j.job_id());
  }
  ASSERT_TRUE(reader->Finish().ok());
  EXPECT_EQ(chunks, 2);
  EXPECT_EQ(jobs, (std::vector<std::string>{"llm-7", "serve-1"}));
  grpc::ClientContext whole;
  absl::StatusOr<core::FleetReport> report =
      FetchReport(query_.get(), &whole, v1::ReportRequest());
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->jobs.size(), 2u);
  EXPECT_EQ(report->fleet.jobs, 2);
  EXPECT_EQ(report->segments.at("accelerator").size(), 2u);
}

// The server writes each chunk's jobs straight into their wire form: one
// job a chunk or all in one, they parse to the replay's report of the same
// events, as protobuf's own messages would.
TEST_F(QueryGrpcTest, StreamedJobsParseToTheReplaysReport) {
  const core::FleetReport want = core::testing::Replay(
      ParseEvents(Timeline(kFleet)), core::Config(), T("2026-11-22T10:10:00Z"));
  for (int chunk_jobs : {1, 0}) {
    v1::ReportRequest request;
    request.set_chunk_jobs(chunk_jobs);
    grpc::ClientContext context;
    absl::StatusOr<FetchedReport> got =
        ReadReport(query_.get(), &context, request);
    ASSERT_TRUE(got.ok()) << got.status();
    ASSERT_EQ(got->shard.jobs_size(), 2);
    EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(
        got->shard, report::ToShardReport(want)))
        << chunk_jobs << ": " << got->shard.DebugString();
  }
}

TEST_F(QueryGrpcTest, SummaryHasTotalsStatesWorstJobsAndIngestCounters) {
  v1::SummaryRequest request;
  request.set_worst_jobs(1);
  grpc::ClientContext context;
  v1::SummaryResponse summary;
  ASSERT_TRUE(query_->Summary(&context, request, &summary).ok());
  EXPECT_EQ(summary.as_of().seconds(), T("2026-11-22T10:10:00Z") / 1000000000);
  EXPECT_EQ(summary.fleet().jobs(), 2);
  EXPECT_EQ(summary.jobs_by_state().at("RUNNING"), 1);
  EXPECT_EQ(summary.jobs_by_state().at("QUEUED"), 1);
  ASSERT_EQ(summary.worst_jobs_size(), 1);
  EXPECT_EQ(summary.worst_jobs(0).job_id(), "llm-7");
  ASSERT_GT(summary.badput_size(), 0);
  EXPECT_EQ(summary.ingest().accepted_events(), 7);
  EXPECT_EQ(summary.ingest().batches(), 1);
  EXPECT_EQ(summary.ingest().agents(), 1);
  EXPECT_TRUE(summary.ratios().has_sg());
}

// Serves `service` on a loopback port (0: any free one) and sets `query`
// to a stub calling it.
std::unique_ptr<grpc::Server> ServeOnLoopback(
    grpc::Service* service, std::unique_ptr<v1::Query::Stub>* query) {
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(),
                           &port);
  builder.RegisterService(service);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  *query = v1::Query::NewStub(grpc::CreateChannel(
      "127.0.0.1:" + std::to_string(port), grpc::InsecureChannelCredentials()));
  return server;
}

// QueryService alone over real gRPC with a cap of one heavy query, and a
// fault hook that holds the first admitted query until the test releases
// it.
class QueryCapTest : public ::testing::Test {
 protected:
  QueryCapTest() : admission_(1, [this] { ++refused_; }) {
    live_ = std::make_unique<server::LiveState>(&config_, 0, &store_);
    ingestor_ = std::make_unique<server::Ingestor>(
        &store_, live_.get(), &clock_, codec::ValidationLimits());
    EXPECT_TRUE(ingestor_->Recover().ok());
    service_ = std::make_unique<server::QueryService>(ingestor_.get(), &store_,
                                                      &clock_, &admission_);
    service_->set_fault_hook([this](const std::function<bool()>&) {
      if (admitted_++ > 0) return;
      entered_.Notify();
      release_.WaitForNotification();
    });
    Serve();
  }
  ~QueryCapTest() override {
    if (!release_.HasBeenNotified()) release_.Notify();
    server_->Shutdown();
  }

  void Serve() { server_ = ServeOnLoopback(service_.get(), &query_); }

  grpc::Status Report() {
    grpc::ClientContext context;
    return ToGrpc(
        ReadReport(query_.get(), &context, v1::ReportRequest()).status());
  }

  core::Config config_;
  storage::MemoryEventStore store_;
  FakeClock clock_{T("2026-11-22T10:10:00Z")};
  std::unique_ptr<server::LiveState> live_;
  std::unique_ptr<server::Ingestor> ingestor_;
  std::atomic<int> refused_{0};
  std::atomic<int> admitted_{0};
  server::QueryAdmission admission_;
  absl::Notification entered_, release_;
  std::unique_ptr<server::QueryService> service_;
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<v1::Query::Stub> query_;
};

TEST_F(QueryCapTest, HeavyQueriesBeyondTheCapAreRefusedAtOnce) {
  grpc::Status first;
  std::thread held([&] { first = Report(); });
  entered_.WaitForNotification();
  std::vector<grpc::Status> refused;
  refused.push_back(Report());
  {
    grpc::ClientContext context;
    v1::JobsResponse response;
    refused.push_back(query_->Jobs(&context, v1::JobsRequest(), &response));
  }
  {
    grpc::ClientContext context;
    v1::FleetResponse response;
    refused.push_back(query_->Fleet(&context, v1::FleetRequest(), &response));
  }
  {
    grpc::ClientContext context;
    v1::SummaryResponse response;
    refused.push_back(
        query_->Summary(&context, v1::SummaryRequest(), &response));
  }
  for (const grpc::Status& s : refused) {
    EXPECT_EQ(s.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
    EXPECT_NE(s.error_message().find("--max_concurrent_queries=1"),
              std::string::npos)
        << s.error_message();
  }
  EXPECT_EQ(refused_, 4);
  {  // One job's view is not capped: it runs (and finds no such job).
    grpc::ClientContext context;
    v1::JobRequest request;
    request.set_job_id("ghost");
    v1::JobResponse response;
    EXPECT_EQ(query_->Job(&context, request, &response).error_code(),
              grpc::StatusCode::NOT_FOUND);
  }
  release_.Notify();
  held.join();
  EXPECT_TRUE(first.ok()) << first.error_message();
  EXPECT_TRUE(Report().ok());  // the held query gave its slot back
  EXPECT_EQ(refused_, 4);
}

// Heavy queries run on the query pool's threads, below ingest's priority
// (--query_nice): each query's work sees its thread's nice value raised.
class QueryPoolGrpcTest : public ::testing::Test {
 protected:
  QueryPoolGrpcTest() : admission_(4, nullptr) {
    live_ = std::make_unique<server::LiveState>(&config_, 0, &store_);
    ingestor_ = std::make_unique<server::Ingestor>(
        &store_, live_.get(), &clock_, codec::ValidationLimits());
    EXPECT_TRUE(ingestor_->Recover().ok());
    auto pool = server::QueryPool::Start({.threads = 2, .nice = kNice});
    EXPECT_TRUE(pool.ok()) << pool.status();
    pool_ = *std::move(pool);
    service_ = std::make_unique<server::QueryService>(
        ingestor_.get(), &store_, &clock_, &admission_, pool_.get());
    service_->set_fault_hook([this](const std::function<bool()>&) {
      absl::MutexLock lock(&mu_);
      nices_.push_back(
          getpriority(PRIO_PROCESS, static_cast<id_t>(syscall(SYS_gettid))));
    });
    server_ = ServeOnLoopback(service_.get(), &query_);
  }
  ~QueryPoolGrpcTest() override { server_->Shutdown(); }

  static constexpr int kNice = 6;
  core::Config config_;
  storage::MemoryEventStore store_;
  FakeClock clock_{T("2026-11-22T10:10:00Z")};
  std::unique_ptr<server::LiveState> live_;
  std::unique_ptr<server::Ingestor> ingestor_;
  server::QueryAdmission admission_;
  std::unique_ptr<server::QueryPool> pool_;
  absl::Mutex mu_;
  std::vector<int> nices_ ABSL_GUARDED_BY(mu_);
  std::unique_ptr<server::QueryService> service_;
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<v1::Query::Stub> query_;
};

TEST_F(QueryPoolGrpcTest, ReportJobsFleetAndSummaryRunBelowIngestsPriority) {
  const int base =
      getpriority(PRIO_PROCESS, static_cast<id_t>(syscall(SYS_gettid)));
  {
    grpc::ClientContext context;
    ASSERT_TRUE(ReadReport(query_.get(), &context, v1::ReportRequest()).ok());
  }
  {
    grpc::ClientContext context;
    v1::JobsResponse response;
    ASSERT_TRUE(query_->Jobs(&context, v1::JobsRequest(), &response).ok());
  }
  {
    grpc::ClientContext context;
    v1::FleetResponse response;
    ASSERT_TRUE(query_->Fleet(&context, v1::FleetRequest(), &response).ok());
  }
  {
    grpc::ClientContext context;
    v1::SummaryResponse response;
    ASSERT_TRUE(
        query_->Summary(&context, v1::SummaryRequest(), &response).ok());
  }
  absl::MutexLock lock(&mu_);
  EXPECT_THAT(nices_, ::testing::ElementsAre(std::min(19, base + kNice),
                                             std::min(19, base + kNice),
                                             std::min(19, base + kNice),
                                             std::min(19, base + kNice)));
}

}  // namespace
}  // namespace goodput
