// Limits and backpressure end to end, in process: goodputd (real gRPC,
// real RocksDB, FakeClock) and an agent uplink. An agent over its rate is
// told RESOURCE_EXHAUSTED with a retry hint, waits at least that long and
// loses nothing; oversized batches and jobs over --max_jobs are refused
// with errors naming the limit, and each hit is counted in
// goodput_limit_rejected_total on a real scrape of goodputd's /metrics.
#include "absl/strings/match.h"
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
    options.limits = limits;
    StartWith(std::move(options));
  }
  // goodputd with `options`, gRPC and /metrics on port 0, data in data_.
  void StartWith(server::GoodputdOptions options) {
    options.data_dir = data_.path();
    options.grpc_address = "127.0.0.1:0";
    options.metrics_address = "127.0.0.1:0";
    auto started = server::Goodputd::Start(options, &clock_);
    ASSERT_TRUE(started.ok()) << started.status();
    server_ = *std::move(started);
  }

  // goodput_limit_rejected_total{limit="`limit`"} in a scrape; -1 if absent.
  double Rejected(const std::string& limit) {
    auto scrape = agent::testing::HttpGet(server_->metrics_port(), "/metrics");
    EXPECT_TRUE(scrape.ok()) << scrape.status();
    if (!scrape.ok()) return -1;
    const std::string series =
        "\ngoodput_limit_rejected_total{limit=\"" + limit + "\"} ";
    const size_t at = scrape->body.find(series);
    if (at == std::string::npos) return -1;
    return std::stod(scrape->body.substr(at + series.size()));
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
  // The hint is counted before the uplink sleeps on it.
  ASSERT_TRUE(agent::testing::WaitFor(
      [&] { return !agent_.sleeper().delays().empty(); }));
  EXPECT_EQ(agent_.sleeper().delays().front(), absl::Milliseconds(3500));
  EXPECT_EQ(server_->ingestor()->stats().accepted_events, 10);
  EXPECT_GE(server_->limit_stats().rate_limited_batches, 1);
  EXPECT_GE(Rejected("agent_rate"), 1);
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
  EXPECT_EQ(Rejected("max_batch_events"), 1);
  EXPECT_EQ(Rejected("agent_rate"), 0);
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
  EXPECT_EQ(Rejected("max_jobs"), 2);
}

TEST_F(LimitsTest, EventsOverTheSizeLimitsAreDeadLetteredAndCounted) {
  server::GoodputdOptions options;
  options.validation.max_labels = 1;
  options.validation.max_string_bytes = 12;
  StartWith(std::move(options));
  v1::Event submitted = testing::StepEvents(1, "job-1", 1, kNow)[0];
  submitted.mutable_job_submitted()->set_chips(1);
  submitted.mutable_job_submitted()->set_workload(v1::JobSubmitted::TRAINING);
  (*submitted.mutable_job_submitted()->mutable_labels())["a"] = "1";
  v1::Event two_labels = submitted;
  (*two_labels.mutable_job_submitted()->mutable_labels())["b"] = "2";
  v1::Event long_id = testing::StepEvents(1, "job-with-a-long-id", 1, kNow)[0];
  v1::Ack ack;
  ASSERT_TRUE(SendOne({submitted, two_labels, long_id}, &ack).ok());
  EXPECT_EQ(ack.accepted(), 1u);
  ASSERT_EQ(ack.rejections_size(), 2);
  EXPECT_EQ(ack.rejections(0).reason(),
            "job_submitted.labels: must have at most 1 labels, got 2");
  EXPECT_EQ(Rejected("max_labels"), 1);
  EXPECT_EQ(Rejected("max_string_bytes"), 1);
  EXPECT_EQ(Rejected("max_jobs"), 0);
}

// Each stream holds one of the quota's threads while its agent keeps it
// open; once they are all busy gRPC refuses the next call itself.
TEST_F(LimitsTest, CallsOverMaxStreamsAreRefusedAndCounted) {
  server::GoodputdOptions options;
  options.max_streams = 1;
  // gRPC's own refusal: goodputd's ingest cap (by default below
  // --max_streams, idle_streams_test) must not come first.
  options.max_ingest_streams = 100;
  StartWith(std::move(options));
  auto stub = v1::Ingest::NewStub(
      grpc::CreateChannel(address(), grpc::InsecureChannelCredentials()));
  struct Open {
    grpc::ClientContext context;
    std::unique_ptr<grpc::ClientReaderWriter<v1::Batch, v1::Ack>> stream;
  };
  std::vector<std::unique_ptr<Open>> open;
  grpc::Status refused;
  for (int i = 0; i < 16 && refused.ok(); ++i) {
    auto& o = open.emplace_back(std::make_unique<Open>());
    o->stream = stub->Stream(&o->context);
    v1::Batch batch;
    batch.set_agent_id("agent-" + std::to_string(i));
    batch.set_sequence(1);
    *batch.add_events() = testing::StepEvents(1, "job-1", 1 + i, kNow)[0];
    v1::Ack ack;
    if (o->stream->Write(batch) && o->stream->Read(&ack)) continue;
    refused = o->stream->Finish();
  }
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_EQ(refused.error_message(), "Server Threadpool Exhausted");
  EXPECT_EQ(Rejected("max_streams"), 1) << open.size() << " streams";
  for (auto& o : open) o->context.TryCancel();
}

TEST_F(LimitsTest, BatchOverMaxBatchBytesIsRefusedAndCounted) {
  StartServer({.max_batch_bytes = 1024});
  // A batch just over 1 KiB, under gRPC's 2 KiB: goodputd's own check.
  std::vector<v1::Event> events;
  v1::Batch probe;
  for (const v1::Event& e : testing::StepEvents(100, "job-1", 1, kNow)) {
    if (probe.ByteSizeLong() > 1024) break;
    *probe.add_events() = e;
    events.push_back(e);
  }
  v1::Ack ack;
  grpc::Status s = SendOne(events, &ack);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_TRUE(absl::StrContains(s.error_message(), "--max_batch_bytes=1024"))
      << s.error_message();
  EXPECT_EQ(Rejected("max_batch_bytes"), 1);
  // Over twice the flag gRPC's transport drops the message before goodputd
  // sees it: refused, not counted (docs/security.md).
  s = SendOne(testing::StepEvents(100, "job-1", 1, kNow), &ack);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_EQ(Rejected("max_batch_bytes"), 1);
  EXPECT_EQ(server_->ingestor()->stats().batches, 0);
}

}  // namespace
}  // namespace goodput
