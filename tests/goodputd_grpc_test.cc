// goodputd over real gRPC (loopback, port 0) and real RocksDB (temp dir):
// batches streamed in, acks only after durable, duplicates acknowledged
// again, the report equals replay, and a restart recovers it.
#include <cstdlib>
#include <filesystem>
#include <thread>

#include "clients/cpp/query_client.h"
#include "core/testing/random_fleet.h"
#include "core/testing/timeline.h"
#include "grpcpp/create_channel.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "proto/service.grpc.pb.h"
#include "report/report_json.h"
#include "server/goodputd.h"

namespace goodput {
namespace {

constexpr int64_t kAsOf = (1795341600LL + 5 * 3600) * core::kNanosPerSecond;

class GoodputdTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = ::testing::TempDir() + "goodputd_XXXXXX";
    dir_ = mkdtemp(tmpl.data());
    Start();
  }
  void TearDown() override {
    server_.reset();
    std::filesystem::remove_all(dir_);
  }
  void Start() {
    server::GoodputdOptions options;
    options.data_dir = dir_;
    options.grpc_address = "127.0.0.1:0";
    auto started = server::Goodputd::Start(options, &clock_);
    ASSERT_TRUE(started.ok()) << started.status();
    server_ = *std::move(started);
    channel_ =
        grpc::CreateChannel("127.0.0.1:" + std::to_string(server_->port()),
                            grpc::InsecureChannelCredentials());
  }
  void Restart() {
    server_.reset();
    Start();
  }

  // Streams `events` in batches of `size` as `agent`, starting at `seq`;
  // returns the acks.
  std::vector<v1::Ack> Stream(const std::vector<v1::Event>& events, size_t size,
                              uint64_t seq = 1,
                              const std::string& agent = "agent-1") {
    auto stub = v1::Ingest::NewStub(channel_);
    grpc::ClientContext context;
    auto stream = stub->Stream(&context);
    std::vector<v1::Ack> acks;
    for (size_t i = 0; i < events.size(); i += size, ++seq) {
      v1::Batch batch;
      batch.set_agent_id(agent);
      batch.set_sequence(seq);
      for (size_t j = i; j < std::min(events.size(), i + size); ++j) {
        *batch.add_events() = events[j];
      }
      EXPECT_TRUE(stream->Write(batch));
      EXPECT_TRUE(stream->Read(&acks.emplace_back()));
    }
    stream->WritesDone();
    EXPECT_TRUE(stream->Finish().ok());
    return acks;
  }

  // Query.Report as of `as_of`, streamed in chunks of `chunk_jobs` jobs
  // (0: the server's default).
  nlohmann::json Report(int64_t as_of, uint32_t chunk_jobs = 0) {
    auto stub = v1::Query::NewStub(channel_);
    grpc::ClientContext context;
    v1::ReportRequest request;
    request.mutable_as_of()->set_seconds(as_of / core::kNanosPerSecond);
    request.set_chunk_jobs(chunk_jobs);
    absl::StatusOr<core::FleetReport> report =
        FetchReport(stub.get(), &context, request);
    EXPECT_TRUE(report.ok()) << report.status();
    if (!report.ok()) return nullptr;
    return nlohmann::json::parse(report::ReportToJson(*report).dump());
  }

  std::string dir_;
  FakeClock clock_{kAsOf};
  std::unique_ptr<server::Goodputd> server_;
  std::shared_ptr<grpc::Channel> channel_;
};

nlohmann::json ReplayJson(const std::vector<v1::Event>& events, int64_t as_of) {
  core::Config config;
  return nlohmann::json::parse(
      *report::WriteReportJson(core::testing::Replay(events, config, as_of)));
}

TEST_F(GoodputdTest, StreamedEventsReportLikeReplay) {
  auto events = core::testing::RandomFleet(21, 25, 60);
  auto acks = Stream(events, 64);
  uint32_t accepted = 0;
  for (const auto& ack : acks) accepted += ack.accepted();
  EXPECT_EQ(accepted, events.size());
  EXPECT_EQ(Report(kAsOf), ReplayJson(events, kAsOf));
}

// Each chunk is converted on its own (on an arena reset per chunk): the
// jobs of every chunk, the last one short, make the same report.
TEST_F(GoodputdTest, ReportInUnevenChunksIsTheReplay) {
  auto events = core::testing::RandomFleet(24, 25, 60);
  Stream(events, 64);
  const nlohmann::json replay = ReplayJson(events, kAsOf);
  EXPECT_EQ(Report(kAsOf, 7), replay);  // 7 + 7 + 7 + 4 jobs
  EXPECT_EQ(Report(kAsOf, 1), replay);
  EXPECT_EQ(Report(kAsOf, 25), replay);
}

TEST_F(GoodputdTest, RedeliveryIsAcknowledgedAndCountedOnce) {
  auto events = core::testing::RandomFleet(22, 5, 30);
  Stream(events, 20);
  auto again = Stream(events, 20);  // every ack was "lost": all resent
  for (const auto& ack : again) EXPECT_TRUE(ack.duplicate());
  EXPECT_EQ(Report(kAsOf), ReplayJson(events, kAsOf));
}

TEST_F(GoodputdTest, RestartRecoversTheSameReport) {
  auto events = core::testing::RandomFleet(23, 10, 60);
  Stream(events, 50);
  nlohmann::json before = Report(kAsOf);
  Restart();
  EXPECT_EQ(Report(kAsOf), before);
  // The dedupe marks survived too.
  auto again = Stream(events, 50);
  EXPECT_TRUE(again.front().duplicate());
}

TEST_F(GoodputdTest, BadEventsAreAnsweredAndDeadLettered) {
  auto events = core::testing::ParseEvents(core::testing::Timeline(R"(
10:00:00 {"started":{}}
10:00:01 {"allocation":{"chips":-1}}
)"));
  auto acks = Stream(events, 10);
  ASSERT_EQ(acks[0].rejections_size(), 1);
  EXPECT_EQ(acks[0].rejections(0).index(), 1u);
  auto stub = v1::Query::NewStub(channel_);
  grpc::ClientContext context;
  v1::DeadLettersResponse response;
  ASSERT_TRUE(stub->DeadLetters(&context, {}, &response).ok());
  EXPECT_EQ(response.total(), 1u);
  EXPECT_EQ(response.dead_letters(0).reason(), acks[0].rejections(0).reason());
}

TEST_F(GoodputdTest, FiftyConcurrentAgents) {
  std::vector<std::vector<v1::Event>> per_agent(50);
  std::vector<v1::Event> all;
  for (int a = 0; a < 50; ++a) {
    per_agent[a] = core::testing::RandomFleet(100 + a, 2, 20);
    for (auto& e : per_agent[a]) {  // distinct jobs and hosts per agent
      if (e.has_heartbeat())
        e.set_host(e.host() + "-a" + std::to_string(a));
      else
        e.set_job_id(e.job_id() + "-a" + std::to_string(a));
    }
    all.insert(all.end(), per_agent[a].begin(), per_agent[a].end());
  }
  std::vector<std::thread> threads;
  for (int a = 0; a < 50; ++a) {
    threads.emplace_back(
        [&, a] { Stream(per_agent[a], 16, 1, "agent-" + std::to_string(a)); });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(Report(kAsOf), ReplayJson(all, kAsOf));
}

}  // namespace
}  // namespace goodput
