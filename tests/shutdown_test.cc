// goodputd's graceful shutdown through the real binary: with a query held
// in flight (--fault=hold_query:1) and --max_concurrent_queries=1, another
// report is refused RESOURCE_EXHAUSTED and counted on /metrics; SIGTERM
// then cancels the held query within --shutdown_grace and goodputd exits
// 0; an event acknowledged before the signal is in the store after a
// restart, and SIGINT stops that restarted goodputd with 0 too.
#include <signal.h>

#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "clients/cpp/query_client.h"
#include "core/testing/timeline.h"
#include "grpcpp/create_channel.h"
#include "gtest/gtest.h"
#include "proto/service.grpc.pb.h"
#include "tests/subprocess.h"
#include "util/grpc_status.h"

namespace goodput {
namespace {

using ::goodput::core::testing::ParseEvents;
using ::goodput::core::testing::Timeline;
using ::goodput::testing::HttpGet;
using ::goodput::testing::Subprocess;
using ::goodput::testing::WaitForLogInt;
using ::goodput::testing::WaitForPort;

// Outer bounds only, so that a broken shutdown fails instead of hanging.
constexpr double kStartSeconds = 30;
constexpr double kExitSeconds = 60;
constexpr int kCallSeconds = 120;

constexpr char kJob[] = R"(
10:00:00 {"job_id":"acked-1","job_submitted":{"chips":8,"workload":"TRAINING","accelerator":"tpu-v5p"}}
10:01:00 {"job_id":"acked-1","started":{}}
10:05:00 {"job_id":"acked-1","step":{"step":10}}
)";

class ShutdownTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = ::testing::TempDir() + "shutdown_XXXXXX";
    dir_ = mkdtemp(tmpl.data());
  }
  void TearDown() override {
    server_.reset();
    if (!HasFailure()) std::filesystem::remove_all(dir_);
  }

  // Starts goodputd on a free port with `flags`; returns its log path.
  std::string Start(const std::vector<std::string>& flags) {
    std::vector<std::string> argv = {
        GOODPUTD_PATH, "--data_dir=" + dir_ + "/db",
        "--grpc_address=127.0.0.1:0", "--metrics_address=127.0.0.1:0"};
    argv.insert(argv.end(), flags.begin(), flags.end());
    std::string log = dir_ + "/goodputd-" + std::to_string(++starts_) + ".log";
    server_ = std::make_unique<Subprocess>(argv, log);
    const int port = WaitForPort(log, kStartSeconds);
    EXPECT_GT(port, 0) << "goodputd did not start; see " << log;
    channel_ = grpc::CreateChannel("127.0.0.1:" + std::to_string(port),
                                   grpc::InsecureChannelCredentials());
    return log;
  }

  // Streams kJob as one batch; true once it is acknowledged.
  bool SendAcked() {
    grpc::ClientContext context;
    context.set_deadline(Deadline());
    auto stream = v1::Ingest::NewStub(channel_)->Stream(&context);
    v1::Batch batch;
    batch.set_agent_id("agent-1");
    batch.set_sequence(1);
    for (const auto& e : ParseEvents(Timeline(kJob))) *batch.add_events() = e;
    v1::Ack ack;
    const bool acked = stream->Write(batch) && stream->Read(&ack);
    stream->WritesDone();
    grpc::Status finished = stream->Finish();
    EXPECT_TRUE(finished.ok()) << finished.error_message();
    EXPECT_EQ(ack.rejections_size(), 0) << ack.ShortDebugString();
    return acked && finished.ok() &&
           ack.accepted() == static_cast<uint32_t>(batch.events_size());
  }

  // Query.Report, its jobs in `response`.
  grpc::Status Report(v1::ShardReport* response) {
    grpc::ClientContext context;
    context.set_deadline(Deadline());
    auto stub = v1::Query::NewStub(channel_);
    absl::StatusOr<FetchedReport> r =
        ReadReport(stub.get(), &context, v1::ReportRequest());
    if (r.ok()) *response = r->shard;
    return ToGrpc(r.status());
  }

  // goodput_limit_rejected_total{limit="`limit`"} on /metrics; -1 if absent.
  static double Rejected(int metrics_port, const std::string& limit) {
    const std::string body = HttpGet(metrics_port, "/metrics");
    const std::string series =
        "\ngoodput_limit_rejected_total{limit=\"" + limit + "\"} ";
    const size_t at = body.find(series);
    if (at == std::string::npos) return -1;
    return std::stod(body.substr(at + series.size()));
  }

  static std::chrono::system_clock::time_point Deadline() {
    return std::chrono::system_clock::now() +
           std::chrono::seconds(kCallSeconds);
  }

  std::string dir_;
  int starts_ = 0;
  std::unique_ptr<Subprocess> server_;
  std::shared_ptr<grpc::Channel> channel_;
};

TEST_F(ShutdownTest, SigtermCancelsTheQueryInFlightAndKeepsAckedEvents) {
  const std::string log =
      Start({"--fault=hold_query:1", "--max_concurrent_queries=1",
             "--shutdown_grace=500ms"});
  const int metrics_port =
      WaitForLogInt(log, "metrics on port (\\d+)", kStartSeconds);
  ASSERT_TRUE(SendAcked());
  grpc::Status held;
  std::thread query([&] {
    v1::ShardReport response;
    held = Report(&response);
  });
  EXPECT_EQ(WaitForLogInt(log, "holding query (\\d+)", kStartSeconds), 1)
      << "see " << log;

  v1::ShardReport refused_response;
  grpc::Status refused = Report(&refused_response);
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_NE(refused.error_message().find("--max_concurrent_queries=1"),
            std::string::npos)
      << refused.error_message();
  EXPECT_EQ(Rejected(metrics_port, "max_concurrent_queries"), 1);

  server_->Kill(SIGTERM);
  EXPECT_EQ(server_->WaitFor(kExitSeconds), 0) << "see " << log;
  query.join();
  EXPECT_TRUE(held.error_code() == grpc::StatusCode::CANCELLED ||
              held.error_code() == grpc::StatusCode::UNAVAILABLE)
      << held.error_code() << " " << held.error_message();

  Start({"--shutdown_grace=1s"});
  v1::ShardReport after;
  grpc::Status s = Report(&after);
  ASSERT_TRUE(s.ok()) << s.error_message();
  ASSERT_EQ(after.jobs_size(), 1) << after.ShortDebugString();
  EXPECT_EQ(after.jobs(0).job_id(), "acked-1");
  server_->Kill(SIGINT);
  EXPECT_EQ(server_->WaitFor(kExitSeconds), 0);
}

}  // namespace
}  // namespace goodput
