#include "clients/cpp/recorder.h"

#include <stdlib.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"
#include "codec/line_decoder.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace goodput::client {
namespace {

using ::testing::SizeIs;

// A Unix socket server collecting what one client writes (or, with
// `read` false, accepting and never reading, so writers block).
class LineServer {
 public:
  LineServer(const std::string& path, bool read) {
    fd_ = ::socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    path.copy(addr.sun_path, sizeof(addr.sun_path) - 1);
    EXPECT_EQ(::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
    EXPECT_EQ(::listen(fd_, 4), 0);
    thread_ = std::thread([this, read] { Serve(read); });
  }
  ~LineServer() {
    ::shutdown(fd_, SHUT_RDWR);
    ::close(fd_);
    thread_.join();
    for (int c : conns_) ::close(c);
  }
  // Waits until `n` lines arrived and returns them.
  std::vector<std::string> WaitForLines(size_t n) {
    absl::MutexLock lock(&mu_);
    auto enough = [&]() ABSL_SHARED_LOCKS_REQUIRED(mu_) {
      return static_cast<size_t>(
                 std::count(data_.begin(), data_.end(), '\n')) >= n;
    };
    mu_.AwaitWithTimeout(absl::Condition(&enough), absl::Seconds(20));
    return absl::StrSplit(data_, '\n', absl::SkipEmpty());
  }
  size_t Connections() {
    absl::MutexLock lock(&mu_);
    return conns_.size();
  }
  // Shuts the connections for reading, as the agent does before it closes
  // an idle one: the client's next write fails with EPIPE.
  void ShutReads() {
    absl::MutexLock lock(&mu_);
    for (int c : conns_) ::shutdown(c, SHUT_RD);
  }

 private:
  // Connections one after another (the next once the last ends).
  void Serve(bool read) {
    while (true) {
      const int conn = ::accept(fd_, nullptr, nullptr);
      if (conn < 0) return;
      {
        absl::MutexLock lock(&mu_);
        conns_.push_back(conn);
      }
      if (!read) continue;
      char buf[4096];
      ssize_t n;
      while ((n = ::read(conn, buf, sizeof(buf))) > 0) {
        absl::MutexLock lock(&mu_);
        data_.append(buf, static_cast<size_t>(n));
      }
    }
  }
  int fd_ = -1;
  std::thread thread_;
  absl::Mutex mu_;
  std::vector<int> conns_ ABSL_GUARDED_BY(mu_);
  std::string data_ ABSL_GUARDED_BY(mu_);
};

class RecorderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = ::testing::TempDir() + "/recorder_XXXXXX";
    dir_ = mkdtemp(tmpl.data());
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  RecorderOptions Options() {
    RecorderOptions o;
    o.job_id = "job-1";
    o.attempt = "att-1";
    o.socket_path = dir_ + "/agent.sock";
    o.spool_dir = dir_ + "/spool";
    o.ack = false;  // LineServer is a plain agent; ack mode: AckWindow's
                    // test, tests/ack_kill_test.cc with a real agent
    return o;
  }
  std::vector<std::string> SpoolFiles(const std::string& ext) {
    std::vector<std::string> out;
    if (!std::filesystem::exists(dir_ + "/spool")) return out;
    for (const auto& f : std::filesystem::directory_iterator(dir_ + "/spool")) {
      if (f.path().extension() == ext) out.push_back(f.path());
    }
    return out;
  }
  std::string dir_;
  FakeClock clock_{int64_t{1795000000123} * 1000000};
};

TEST_F(RecorderTest, LinesAreValidEventsForTheAgentDecoder) {
  LineServer server(dir_ + "/agent.sock", /*read=*/true);
  Recorder rec(Options(), &clock_);
  rec.Started();
  rec.Activity(v1::Activity::RESTORE, "", 40);
  rec.Activity(v1::Activity::CUSTOM, "eval");
  rec.Step(41, 1e12, 0, 0.5);
  rec.Checkpoint(41);
  rec.Ended(v1::JobEnded::SUCCEEDED);
  std::vector<std::string> lines = server.WaitForLines(6);
  ASSERT_THAT(lines, SizeIs(6))
      << "sent " << rec.counts().sent << " spooled " << rec.counts().spooled
      << " dropped " << rec.counts().dropped;
  codec::LineDecoder decoder;
  std::vector<v1::Event> events(6);
  for (size_t i = 0; i < lines.size(); ++i) {
    ASSERT_TRUE(decoder.DecodeLine(lines[i], &events[i]).ok()) << lines[i];
    EXPECT_EQ(events[i].job_id(), "job-1");
    EXPECT_EQ(events[i].attempt(), "att-1");
  }
  EXPECT_EQ(nlohmann::json::parse(lines[0])["time"],
            "2026-11-18T11:06:40.123Z");
  EXPECT_EQ(events[1].activity().step(), 40);
  EXPECT_EQ(events[2].activity().name(), "eval");
  EXPECT_EQ(events[3].step().input_wait_seconds(), 0.5);
  EXPECT_EQ(events[5].job_ended().outcome(), v1::JobEnded::SUCCEEDED);
  ASSERT_TRUE(rec.Flush(absl::Seconds(20)));  // counts follow the writes
  EXPECT_EQ(rec.counts().sent, 6);
}

// SPEC rule 14: an elastic job's job_submitted (min_chips) and activity
// RESHARD reach the agent as valid events.
TEST_F(RecorderTest, ElasticFieldsReachTheAgent) {
  LineServer server(dir_ + "/agent.sock", /*read=*/true);
  Recorder rec(Options(), &clock_);
  v1::Event submitted;
  submitted.mutable_job_submitted()->set_chips(8);
  submitted.mutable_job_submitted()->set_min_chips(4);
  submitted.mutable_job_submitted()->set_workload(v1::JobSubmitted::TRAINING);
  rec.Send(submitted);
  rec.Activity(v1::Activity::RESHARD);
  std::vector<std::string> lines = server.WaitForLines(2);
  ASSERT_THAT(lines, SizeIs(2));
  codec::LineDecoder decoder;
  v1::Event e0, e1;
  ASSERT_TRUE(decoder.DecodeLine(lines[0], &e0).ok()) << lines[0];
  ASSERT_TRUE(decoder.DecodeLine(lines[1], &e1).ok()) << lines[1];
  EXPECT_TRUE(
      nlohmann::json::parse(lines[0])["job_submitted"].contains("min_chips"))
      << lines[0];
  EXPECT_TRUE(e0.job_submitted().has_min_chips());
  EXPECT_EQ(e0.job_submitted().min_chips(), 4);
  EXPECT_EQ(e0.job_id(), "job-1");
  EXPECT_EQ(e1.activity().kind(), v1::Activity::RESHARD);
  EXPECT_EQ(nlohmann::json::parse(lines[1])["activity"]["kind"], "RESHARD");
}

// The agent closes idle connections, and the longest idle one for a new
// client at --max_connections (agent/README.md): the next event goes on a
// new connection instead of to the spool.
TEST_F(RecorderTest, AConnectionTheAgentClosedIsReplacedNotSpooled) {
  LineServer server(dir_ + "/agent.sock", /*read=*/true);
  Recorder rec(Options(), &clock_);
  rec.Started();
  ASSERT_THAT(server.WaitForLines(1), SizeIs(1));
  server.ShutReads();
  rec.Checkpoint(1);
  EXPECT_THAT(server.WaitForLines(2), SizeIs(2));
  ASSERT_TRUE(rec.Flush(absl::Seconds(20)));
  EXPECT_EQ(rec.counts().sent, 2);
  EXPECT_EQ(rec.counts().spooled, 0);
  EXPECT_THAT(SpoolFiles(".jsonl"), SizeIs(0));
  EXPECT_THAT(SpoolFiles(".open"), SizeIs(0));
}

TEST_F(RecorderTest, WithoutAgentSpoolsEachEventWithItsOwnId) {
  {
    Recorder rec(Options(), &clock_);
    for (int i = 1; i <= 3; ++i) rec.Step(i);
    ASSERT_TRUE(rec.Flush(absl::Seconds(20)));
    EXPECT_THAT(SpoolFiles(".open"), SizeIs(1));
    EXPECT_EQ(rec.counts().spooled, 3);
  }
  std::vector<std::string> files = SpoolFiles(".jsonl");
  ASSERT_THAT(files, SizeIs(1));
  std::ifstream in(files[0]);
  std::string line;
  std::set<std::string> ids;
  codec::LineDecoder decoder;
  while (std::getline(in, line)) {
    auto record = nlohmann::json::parse(line);
    ids.insert(record["id"].get<std::string>());
    v1::Event e;
    EXPECT_TRUE(decoder.DecodeLine(record["event"].dump(), &e).ok()) << line;
  }
  EXPECT_THAT(ids, SizeIs(3));
}

TEST_F(RecorderTest, FullQueueDropsAndCountsInsteadOfBlocking) {
  LineServer server(dir_ + "/agent.sock", /*read=*/false);
  RecorderOptions o = Options();
  o.queue_capacity = 4;
  Recorder rec(o, &clock_);
  int dropped = 0;
  for (int i = 0; i < 20000; ++i) dropped += rec.Step(i + 1) ? 0 : 1;
  EXPECT_GT(dropped, 0);
  EXPECT_GE(rec.counts().dropped, dropped);
}

TEST_F(RecorderTest, AnAgentWithoutTheAckModeGetsPlainLines) {
  LineServer server(dir_ + "/agent.sock", /*read=*/true);
  RecorderOptions o = Options();
  o.ack = true;
  o.hello_timeout = absl::Milliseconds(100);  // it never answers
  Recorder rec(o, &clock_);
  rec.Step(1);
  std::vector<std::string> lines = server.WaitForLines(2);
  ASSERT_THAT(lines, SizeIs(2));
  EXPECT_EQ(lines[0], kAckHello);
  v1::Event e;
  EXPECT_TRUE(codec::LineDecoder().DecodeLine(lines[1], &e).ok()) << lines[1];
  ASSERT_TRUE(rec.Flush(absl::Seconds(20)));
  EXPECT_EQ(rec.counts().sent, 1);
  // Not on the hello's connection: an agent that answers it late (busy,
  // it accepts late) holds that one in ack mode and rejects plain lines.
  // LineServer reads the next connection once the last one ended.
  EXPECT_EQ(server.Connections(), 2u);
}

TEST_F(RecorderTest, DisabledRecorderSendsNothing) {
  RecorderOptions o = Options();
  o.enabled = false;
  Recorder rec(o, &clock_);
  EXPECT_FALSE(rec.Started());
  EXPECT_TRUE(rec.Flush(absl::Seconds(1)));
  EXPECT_THAT(SpoolFiles(".open"), SizeIs(0));
}

}  // namespace
}  // namespace goodput::client
