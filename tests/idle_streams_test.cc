// Idle gRPC streams and reserved query capacity (issue 15 item 5), over
// real gRPC (loopback, port 0) into a real goodputd and RocksDB: agent
// streams beyond --max_ingest_streams are refused RESOURCE_EXHAUSTED naming
// the flag, so streams that send nothing cannot take the threads a report
// needs; and a stream with no batch for --stream_idle_timeout (on the fake
// clock) is ended and counted.
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "agent/testing/test_util.h"
#include "clients/cpp/query_client.h"
#include "grpcpp/create_channel.h"
#include "gtest/gtest.h"
#include "proto/service.grpc.pb.h"
#include "server/goodputd.h"
#include "util/grpc_status.h"

namespace goodput {
namespace {

constexpr int64_t kNow = 1717200000;  // 2024-06-01, the events' time
constexpr int64_t kSecond = 1000000000;

// One open Ingest.Stream of its own agent id.
class Stream {
 public:
  // A stream that is not ended within `deadline_s` fails the test with
  // DEADLINE_EXCEEDED instead of hanging it.
  Stream(const std::shared_ptr<grpc::Channel>& channel, std::string agent,
         int deadline_s = 60)
      : agent_(std::move(agent)),
        stub_(v1::Ingest::NewStub(channel)),
        rw_(Open(stub_.get(), &context_, deadline_s)) {}

  // Sends batch `sequence` (one event); true once it is acknowledged.
  bool Send(uint64_t sequence) {
    v1::Batch batch;
    batch.set_agent_id(agent_);
    batch.set_sequence(sequence);
    v1::Event* e = batch.add_events();
    e->mutable_time()->set_seconds(kNow);
    e->set_job_id(agent_ + "-job");
    e->mutable_started();
    v1::Ack ack;
    return rw_->Write(batch) && rw_->Read(&ack);
  }
  // Waits for the server to end the stream (nothing is sent) and returns
  // how it ended.
  grpc::Status AwaitEnd() {
    v1::Ack ack;
    EXPECT_FALSE(rw_->Read(&ack));
    return rw_->Finish();
  }

 private:
  static std::unique_ptr<grpc::ClientReaderWriter<v1::Batch, v1::Ack>> Open(
      v1::Ingest::Stub* stub, grpc::ClientContext* context, int deadline_s) {
    context->set_deadline(std::chrono::system_clock::now() +
                          std::chrono::seconds(deadline_s));
    return stub->Stream(context);
  }

  std::string agent_;
  std::unique_ptr<v1::Ingest::Stub> stub_;
  grpc::ClientContext context_;
  std::unique_ptr<grpc::ClientReaderWriter<v1::Batch, v1::Ack>> rw_;
};

class IdleStreamsTest : public ::testing::Test {
 protected:
  void Start(int max_streams, int max_ingest_streams, int64_t idle_ns) {
    server::GoodputdOptions options;
    options.data_dir = data_.path();
    options.grpc_address = "127.0.0.1:0";
    options.max_streams = max_streams;
    options.max_ingest_streams = max_ingest_streams;
    options.stream_idle_timeout_ns = idle_ns;
    auto started = server::Goodputd::Start(options, &clock_);
    ASSERT_TRUE(started.ok()) << started.status();
    server_ = *std::move(started);
    channel_ = grpc::CreateChannel(absl::StrCat("127.0.0.1:", server_->port()),
                                   grpc::InsecureChannelCredentials());
  }

  grpc::Status Report() {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() +
                         std::chrono::seconds(60));
    auto stub = v1::Query::NewStub(channel_);
    return ToGrpc(
        ReadReport(stub.get(), &context, v1::ReportRequest()).status());
  }

  agent::testing::TempDir data_;
  FakeClock clock_{kNow * kSecond};
  std::unique_ptr<server::Goodputd> server_;
  std::shared_ptr<grpc::Channel> channel_;
};

TEST_F(IdleStreamsTest, IdleStreamsBeyondTheCapAreRefusedAndReportsStillRun) {
  Start(/*max_streams=*/8, /*max_ingest_streams=*/4, /*idle_ns=*/0);
  std::vector<std::unique_ptr<Stream>> streams;
  for (int i = 0; i < 4; ++i) {  // the cap: each acknowledged, then idle
    streams.push_back(
        std::make_unique<Stream>(channel_, absl::StrCat("agent-", i)));
    ASSERT_TRUE(streams.back()->Send(1)) << "stream " << i;
  }
  // Twice --max_streams more that send nothing, one after another (a
  // burst of new calls can briefly use every thread just to be refused:
  // docs/security.md). Each is refused at once; without the cap each would
  // hold a gRPC thread until its deadline.
  std::vector<std::unique_ptr<Stream>> idle;
  for (int i = 4; i < 20; ++i) {
    idle.push_back(std::make_unique<Stream>(channel_, absl::StrCat("agent-", i),
                                            /*deadline_s=*/2));
    grpc::Status ended = idle.back()->AwaitEnd();
    EXPECT_EQ(ended.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << i;
    EXPECT_NE(ended.error_message().find("--max_ingest_streams=4"),
              std::string::npos)
        << ended.error_message();
  }
  grpc::Status report = Report();  // 4 agent streams still held
  EXPECT_TRUE(report.ok()) << report.error_message();
  EXPECT_EQ(server_->stream_stats().open, 4);
  EXPECT_GE(server_->stream_stats().refused, 16);
}

TEST_F(IdleStreamsTest, AStreamWithNoBatchForTheIdleTimeoutIsEnded) {
  Start(/*max_streams=*/16, /*max_ingest_streams=*/0, /*idle_ns=*/kSecond);
  Stream stream(channel_, "quiet-agent");
  ASSERT_TRUE(stream.Send(1));
  EXPECT_EQ(server_->stream_stats().open, 1);
  clock_.Advance(2 * kSecond);
  grpc::Status ended = stream.AwaitEnd();  // the reaper ends it
  EXPECT_EQ(ended.error_code(), grpc::StatusCode::CANCELLED)
      << ended.error_message();
  EXPECT_EQ(server_->stream_stats().idle_closed, 1);
  EXPECT_TRUE(Report().ok());
}

}  // namespace
}  // namespace goodput
