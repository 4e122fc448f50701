// A damaged WAL through the real goodputd (issue 15 item 6): acknowledged
// batches, kill -9, then the newest RocksDB WAL truncated mid-file.
// RocksDB opens the shorter prefix without an error; goodputd must refuse
// to start naming the missing batches and the repair, start degraded
// (log, goodput_store_damaged, goodput_store_lost_batches) only with
// --accept_store_loss, and start clean again after that. A kill -9 alone
// is no loss.
#include <signal.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "clients/cpp/query_client.h"
#include "grpcpp/create_channel.h"
#include "gtest/gtest.h"
#include "proto/service.grpc.pb.h"
#include "tests/subprocess.h"

namespace goodput {
namespace {

using ::goodput::testing::HttpGet;
using ::goodput::testing::Subprocess;
using ::goodput::testing::WaitForLogInt;
using ::goodput::testing::WaitForPort;

constexpr double kStartSeconds = 30;
constexpr int kBatches = 40;

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The value of the unlabelled series `name` on /metrics; -1 if absent.
double Metric(int port, const std::string& name) {
  const std::string body = HttpGet(port, "/metrics");
  const size_t at = body.find("\n" + name + " ");
  if (at == std::string::npos) return -1;
  return std::stod(body.substr(at + name.size() + 2));
}

class StoreLossTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = ::testing::TempDir() + "store_loss_XXXXXX";
    dir_ = mkdtemp(tmpl.data());
  }
  void TearDown() override {
    server_.reset();
    if (!HasFailure()) std::filesystem::remove_all(dir_);
  }

  // Starts goodputd with `flags`; returns its log path.
  std::string Launch(const std::vector<std::string>& flags) {
    std::vector<std::string> argv = {
        GOODPUTD_PATH, "--data_dir=" + dir_ + "/db",
        "--grpc_address=127.0.0.1:0", "--metrics_address=127.0.0.1:0"};
    argv.insert(argv.end(), flags.begin(), flags.end());
    std::string log = dir_ + "/goodputd-" + std::to_string(++starts_) + ".log";
    server_ = std::make_unique<Subprocess>(argv, log);
    return log;
  }

  // Launch, then waits until it serves; returns its metrics port.
  int Start(const std::vector<std::string>& flags) {
    const std::string log = Launch(flags);
    const int port = WaitForPort(log, kStartSeconds);
    EXPECT_GT(port, 0) << "goodputd did not start: " << ReadAll(log);
    channel_ = grpc::CreateChannel("127.0.0.1:" + std::to_string(port),
                                   grpc::InsecureChannelCredentials());
    return WaitForLogInt(log, "metrics on port (\\d+)", kStartSeconds);
  }

  // Batches 1..kBatches of agent "a", one new job each; true if all acked.
  bool SendBatches() {
    grpc::ClientContext context;
    auto stream = v1::Ingest::NewStub(channel_)->Stream(&context);
    bool acked = true;
    for (int i = 1; i <= kBatches && acked; ++i) {
      v1::Batch batch;
      batch.set_agent_id("a");
      batch.set_sequence(i);
      v1::Event* e = batch.add_events();
      e->set_job_id("job-" + std::to_string(i));
      e->mutable_time()->set_seconds(1795000000 + i);
      e->mutable_job_submitted()->set_chips(8);
      e->mutable_job_submitted()->set_workload(v1::JobSubmitted::TRAINING);
      v1::Ack ack;
      acked = stream->Write(batch) && stream->Read(&ack) && ack.accepted() == 1;
      EXPECT_TRUE(acked) << i << ": " << ack.ShortDebugString();
    }
    stream->WritesDone();
    grpc::Status finished = stream->Finish();
    EXPECT_TRUE(finished.ok()) << finished.error_message();
    return acked && finished.ok();
  }

  // How many of the jobs job-N a report lists.
  int ReportedJobs() {
    grpc::ClientContext context;
    auto stub = v1::Query::NewStub(channel_);
    absl::StatusOr<FetchedReport> report =
        ReadReport(stub.get(), &context, v1::ReportRequest());
    EXPECT_TRUE(report.ok()) << report.status();
    if (!report.ok()) return 0;
    int n = 0;
    for (const v1::JobReport& job : report->shard.jobs()) {
      n += absl::StartsWith(job.job_id(), "job-") ? 1 : 0;
    }
    return n;
  }

  void KillDashNine() {
    server_->Kill(SIGKILL);
    server_->Wait();
  }

  // Truncates the largest RocksDB WAL (*.log) of the store to half.
  void TruncateWal() {
    std::string wal;
    uintmax_t size = 0;
    for (const auto& f : std::filesystem::directory_iterator(dir_ + "/db")) {
      if (f.path().extension() == ".log" && f.file_size() > size) {
        wal = f.path().string();
        size = f.file_size();
      }
    }
    ASSERT_GT(size, 0u) << "no WAL with data in " << dir_ << "/db";
    std::filesystem::resize_file(wal, size / 2);
  }

  std::string dir_;
  int starts_ = 0;
  std::unique_ptr<Subprocess> server_;
  std::shared_ptr<grpc::Channel> channel_;
};

TEST_F(StoreLossTest, KillDashNineAloneLosesNothingAndStartsClean) {
  Start({});
  ASSERT_TRUE(SendBatches());
  KillDashNine();
  const int metrics = Start({});
  EXPECT_EQ(ReportedJobs(), kBatches);
  EXPECT_EQ(Metric(metrics, "goodput_store_damaged"), 0);
  EXPECT_EQ(Metric(metrics, "goodput_store_lost_batches"), 0);
}

TEST_F(StoreLossTest, TruncatedWalRefusesToStartThenStartsDegradedLoudly) {
  Start({});
  ASSERT_TRUE(SendBatches());
  KillDashNine();
  TruncateWal();

  const std::string refused = Launch({});
  EXPECT_EQ(server_->WaitFor(kStartSeconds), 1) << ReadAll(refused);
  const std::string err = ReadAll(refused);
  EXPECT_NE(err.find(" are missing: it holds batches 1.."), std::string::npos)
      << err;
  EXPECT_NE(err.find("but its ack marker says 40 were acknowledged"),
            std::string::npos)
      << err;
  EXPECT_NE(err.find("--accept_store_loss"), std::string::npos) << err;

  // Still refused: the refusal itself changed nothing.
  const std::string again = Launch({});
  EXPECT_EQ(server_->WaitFor(kStartSeconds), 1) << ReadAll(again);

  const int metrics = Start({"--accept_store_loss"});
  EXPECT_NE(ReadAll(dir_ + "/goodputd-" + std::to_string(starts_) + ".log")
                .find("starting DEGRADED"),
            std::string::npos);
  const int reported = ReportedJobs();
  EXPECT_LT(reported, kBatches);
  EXPECT_EQ(Metric(metrics, "goodput_store_damaged"), 1);
  EXPECT_EQ(Metric(metrics, "goodput_store_lost_batches"), kBatches - reported);

  // Accepted once: the next start is clean, and new batches are marked.
  server_->Kill(SIGTERM);
  EXPECT_EQ(server_->WaitFor(kStartSeconds), 0);
  const int clean = Start({});
  EXPECT_EQ(Metric(clean, "goodput_store_damaged"), 0);
  EXPECT_EQ(ReportedJobs(), reported);
}

}  // namespace
}  // namespace goodput
