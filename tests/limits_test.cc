// Limits and backpressure end to end, in process: goodputd (real gRPC,
// real RocksDB, FakeClock) and an agent uplink. An agent over its rate is
// told RESOURCE_EXHAUSTED with a retry hint, waits at least that long and
// loses nothing; oversized batches and jobs over --max_jobs are refused
// with errors naming the limit, and each hit is counted.
#include "grpcpp/create_channel.h"
#include "gtest/gtest.h"
#include "proto/service.grpc.pb.h"
#include "server/goodputd.h"
#include "tests/uplink_harness.h"

namespace goodput {
namespace {

constexpr int64_t kNow = 1717200000;  // 2024-06-01, the events' time
constexpr absl::Duration kTimeout = absl::Seconds(30);

class LimitsTest : public ::testing::Test {
 protected:
  void StartServer(server::IngestLimitOptions limits) {
    server::GoodputdOptions options;
    options.data_dir = data_.path();
    options.grpc_address = "127.0.0.1:0";
    options.limits = limits;
    auto started = server::Goodputd::Start(options, &clock_);
    ASSERT_TRUE(started.ok()) << started.status();
    server_ = *std::move(started);
  }
  std::string address() const {
    return "127.0.0.1:" + std::to_string(server_->port());
  }

  // Sends one batch on a fresh stream; returns its ack or the stream's end.
  grpc::Status SendOne(const std::vector<v1::Event>& events, v1::Ack* ack) {
    auto stub = v1::Ingest::NewStub(
        grpc::CreateChannel(address(), grpc::InsecureChannelCredentials()));
    grpc::ClientContext context;
    auto stream = stub->Stream(&context);
    v1::Batch batch;
    batch.set_agent_id("raw");
    batch.set_sequence(++sequence_);
    for (const v1::Event& e : events) *batch.add_events() = e;
    stream->Write(batch);
    stream->WritesDone();
    stream->Read(ack);
    return stream->Finish();
  }

  agent::testing::TempDir data_;
  FakeClock clock_{kNow * core::kNanosPerSecond};
  std::unique_ptr<server::Goodputd> server_;
  testing::UplinkHarness agent_;
  uint64_t sequence_ = 0;
};

TEST_F(LimitsTest, AgentOverItsRateWaitsForTheHintAndLosesNothing) {
  // 2 events/s with a bucket of 4: the first batch of 10 gets through
  // (down to -6), the next is told to retry after (1 + 6) / 2 = 3.5 s.
  StartServer({.max_batch_events = 100,
               .agent_events_per_second = 2,
               .agent_burst_events = 4});
  for (int b = 0; b < 5; ++b) {
    agent_.Spool(testing::StepEvents(10, "job-1", 1 + 10 * b, kNow));
  }
  agent::Uplink::Options options;
  options.server = address();
  agent_.Start(options);
  ASSERT_TRUE(agent_.uplink().AwaitStats(
      [](const agent::Uplink::Stats& s) { return s.retry_hints >= 1; },
      kTimeout));
  EXPECT_EQ(agent_.sleeper().delays().front(), absl::Milliseconds(3500));
  EXPECT_EQ(server_->ingestor()->stats().accepted_events, 10);
  EXPECT_GE(server_->limit_stats().rate_limited_batches, 1);
  // Time passes on the server's clock: everything else arrives, once.
  ASSERT_TRUE(agent::testing::WaitFor([&] {
    clock_.Advance(5 * core::kNanosPerSecond);
    return server_->ingestor()->stats().accepted_events == 50;
  }));
  ASSERT_TRUE(agent::testing::WaitFor([&] { return agent_.pending() == 0; }));
  EXPECT_EQ(server_->ingestor()->stats().accepted_events, 50);
  for (absl::Duration d : agent_.sleeper().delays()) {
    EXPECT_GE(d, absl::Seconds(1)) << "a retry came before the hint";
  }
}

TEST_F(LimitsTest, BatchOverMaxBatchEventsIsRefusedNamingTheLimit) {
  StartServer({.max_batch_events = 5});
  v1::Ack ack;
  grpc::Status s = SendOne(testing::StepEvents(6, "job-1", 1, kNow), &ack);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(s.error_message(), "batch: 6 events exceed --max_batch_events=5");
  EXPECT_EQ(server_->ingestor()->stats().batches, 0);
  EXPECT_EQ(server_->limit_stats().batches_too_large, 1);
  EXPECT_TRUE(SendOne(testing::StepEvents(5, "job-1", 1, kNow), &ack).ok());
  EXPECT_EQ(ack.accepted(), 5u);
}

TEST_F(LimitsTest, EventsOfJobsOverMaxJobsAreDeadLetteredNamingTheLimit) {
  StartServer({.max_jobs = 2});
  std::vector<v1::Event> events = testing::StepEvents(1, "job-1", 1, kNow);
  for (const char* job : {"job-2", "job-3", "job-1"}) {
    events.push_back(testing::StepEvents(1, job, 1, kNow)[0]);
  }
  v1::Ack ack;
  ASSERT_TRUE(SendOne(events, &ack).ok());
  EXPECT_EQ(ack.accepted(), 3u);
  ASSERT_EQ(ack.rejections_size(), 1);
  EXPECT_EQ(ack.rejections(0).index(), 2u);
  EXPECT_EQ(ack.rejections(0).reason(),
            "job_id: job \"job-3\" would exceed --max_jobs=2 jobs held by the "
            "server");
  EXPECT_EQ(server_->limit_stats().jobs_limited_events, 1);
  // Known jobs go on; new ones stay out in later batches too.
  ASSERT_TRUE(SendOne({testing::StepEvents(1, "job-2", 2, kNow)[0],
                       testing::StepEvents(1, "job-4", 1, kNow)[0]},
                      &ack)
                  .ok());
  EXPECT_EQ(ack.accepted(), 1u);
  EXPECT_EQ(server_->limit_stats().jobs_limited_events, 2);
}

TEST_F(LimitsTest, OversizedMessageIsRefusedByGrpc) {
  server::GoodputdOptions options;
  options.data_dir = data_.path();
  options.grpc_address = "127.0.0.1:0";
  options.max_batch_bytes = 1024;
  auto started = server::Goodputd::Start(options, &clock_);
  ASSERT_TRUE(started.ok()) << started.status();
  server_ = *std::move(started);
  v1::Ack ack;
  grpc::Status s = SendOne(testing::StepEvents(100, "job-1", 1, kNow), &ack);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_EQ(server_->ingestor()->stats().batches, 0);
}

}  // namespace
}  // namespace goodput
