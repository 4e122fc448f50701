// The live pipeline through the real binaries: goodputctl send ->
// goodputd (gRPC, RocksDB) -> goodputctl report equals goodputctl replay of
// the same file, also when goodputd is killed with SIGKILL at the named
// fault points (after the RocksDB write and before the ack; before the
// write) and at seeded random batches, and restarted.
#include <signal.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "core/testing/random_fleet.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/subprocess.h"

namespace goodput {
namespace {

using ::goodput::testing::Eventually;
using ::goodput::testing::HttpGet;
using ::goodput::testing::RunCapture;
using ::goodput::testing::Subprocess;
using ::goodput::testing::WaitForLogInt;
using ::goodput::testing::WaitForPort;
using ::goodput::testing::WriteUnixSocket;

constexpr char kAsOf[] = "--as_of=2026-11-22T16:00:00Z";

class LivePipelineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = ::testing::TempDir() + "pipeline_XXXXXX";
    dir_ = mkdtemp(tmpl.data());
    port_ = goodput::testing::RestartablePort();
    ASSERT_GT(port_, 0);
  }
  void TearDown() override {
    agent_.reset();
    server_.reset();
    if (!HasFailure()) std::filesystem::remove_all(dir_);
  }

  // Starts goodputd on `port_` (a RestartablePort) with an optional fault
  // and more flags.
  void StartServer(const std::string& fault = "",
                   const std::vector<std::string>& flags = {}) {
    std::vector<std::string> argv = {
        GOODPUTD_PATH, "--data_dir=" + dir_ + "/data",
        "--grpc_address=127.0.0.1:" + std::to_string(port_)};
    if (!fault.empty()) argv.push_back("--fault=" + fault);
    argv.insert(argv.end(), flags.begin(), flags.end());
    std::string log = dir_ + "/server-" + std::to_string(++starts_) + ".log";
    server_ = std::make_unique<Subprocess>(argv, log);
    port_ = WaitForPort(log, 30);
    ASSERT_GT(port_, 0) << "goodputd did not start; see " << log;
  }

  std::string Server() const {
    return "--server=127.0.0.1:" + std::to_string(port_);
  }

  // goodputctl ARGS...; returns stdout, expects exit code `want`.
  std::string Ctl(std::vector<std::string> args, int want = 0) {
    args.insert(args.begin(), GOODPUTCTL_PATH);
    std::string out;
    int code = RunCapture(args, dir_ + "/ctl.log", &out);
    EXPECT_EQ(code, want) << "goodputctl " << args[1] << "; see " << dir_
                          << "/ctl.log";
    return out;
  }

  std::unique_ptr<Subprocess> Send(const std::string& file) {
    return std::make_unique<Subprocess>(
        std::vector<std::string>{GOODPUTCTL_PATH, Server(), "send", file,
                                 "--batch=40", "--timeout=120s"},
        dir_ + "/send.log");
  }

  // Starts goodput-agent on the spool in dir_/spool, streaming to port_.
  void StartAgent() {
    std::string log =
        dir_ + "/agent-" + std::to_string(++agent_starts_) + ".log";
    agent_ = std::make_unique<Subprocess>(
        std::vector<std::string>{
            AGENT_PATH, "--server=127.0.0.1:" + std::to_string(port_),
            "--socket=" + Socket(), "--spool_dir=" + dir_ + "/spool",
            "--metrics_address=127.0.0.1:0", "--batch_events=100",
            "--batch_delay=20ms"},
        log);
    agent_metrics_port_ = WaitForLogInt(log, "metrics port ([0-9]+)", 30);
    ASSERT_GT(agent_metrics_port_, 0) << "agent did not start; see " << log;
  }
  std::string Socket() const { return dir_ + "/agent.sock"; }

  // The value of the agent's metric `name` (no labels), or -1.
  double AgentMetric(const std::string& name) {
    std::istringstream in(HttpGet(agent_metrics_port_, "/metrics"));
    std::string line;
    while (std::getline(in, line)) {
      if (line.rfind(name + " ", 0) == 0)
        return std::stod(line.substr(name.size() + 1));
    }
    return -1;
  }

  void WriteFileToAgent(const std::string& file) {
    std::ifstream in(file);
    std::stringstream text;
    text << in.rdbuf();
    ASSERT_TRUE(WriteUnixSocket(Socket(), text.str()));
  }

  // Waits until the server's report equals the replay of `file`.
  void ExpectEventuallyLiveEqualsReplay(const std::string& file) {
    auto replay = nlohmann::json::parse(Ctl({"replay", file, "--json", kAsOf}));
    nlohmann::json live;
    EXPECT_TRUE(Eventually(
        [&] {
          live =
              nlohmann::json::parse(Ctl({Server(), "report", "--json", kAsOf}));
          return live == replay;
        },
        60))
        << "live and replay differ; see " << dir_;
    EXPECT_FALSE(live["jobs"].empty());
  }

  void ExpectLiveEqualsReplay(const std::string& file) {
    auto live =
        nlohmann::json::parse(Ctl({Server(), "report", "--json", kAsOf}));
    auto replay = nlohmann::json::parse(Ctl({"replay", file, "--json", kAsOf}));
    EXPECT_EQ(live, replay);
    EXPECT_FALSE(live["jobs"].empty());
  }

  // A random fleet as a JSON Lines file; with `late` > 0, that many of its
  // job events are moved to the end of the file, far beyond the lateness.
  std::string WriteFleet(uint32_t seed, int jobs, int events_per_job,
                         int late = 0) {
    std::string path = dir_ + "/fleet-" + std::to_string(seed) + ".jsonl";
    std::ofstream out(path);
    auto events = core::testing::RandomFleet(seed, jobs, events_per_job);
    std::mt19937 rng(seed);
    for (int i = 0; i < late; ++i) {
      size_t at = rng() % (events.size() / 2);
      if (events[at].has_heartbeat()) continue;  // hosts report in order
      std::rotate(events.begin() + at, events.begin() + at + 1, events.end());
    }
    for (const auto& e : events) {
      std::string line;
      (void)google::protobuf::util::MessageToJsonString(e, &line);
      out << line << "\n";
    }
    return path;
  }

  std::string dir_;
  int port_ = 0, starts_ = 0, agent_starts_ = 0, agent_metrics_port_ = 0;
  std::unique_ptr<Subprocess> server_, agent_;
};

TEST_F(LivePipelineTest, ExampleFleetLiveEqualsReplay) {
  StartServer();
  std::string example = std::string(GOODPUT_EXAMPLES) + "/fleet.jsonl";
  std::string summary = Ctl({Server(), "send", example});
  EXPECT_NE(summary.find(" 0 rejected"), std::string::npos) << summary;
  ExpectLiveEqualsReplay(example);
}

TEST_F(LivePipelineTest, RestartedServerReportsTheSame) {
  StartServer();
  std::string fleet = WriteFleet(31, 20, 60);
  Ctl({Server(), "send", fleet});
  server_->Kill(SIGTERM);
  EXPECT_EQ(server_->WaitFor(30), 0);
  StartServer();
  ExpectLiveEqualsReplay(fleet);
}

TEST_F(LivePipelineTest, ThroughTheAgentLiveEqualsReplay) {
  StartServer();
  StartAgent();
  std::string example = std::string(GOODPUT_EXAMPLES) + "/fleet.jsonl";
  WriteFileToAgent(example);
  ExpectEventuallyLiveEqualsReplay(example);
  EXPECT_EQ(AgentMetric("goodput_agent_rejected_lines_total"), -1)
      << "no line should be rejected";
}

TEST_F(LivePipelineTest, AgentSpoolsWhileServerDownSurvivesKill9) {
  StartServer();  // learn a port, then take the server down
  server_->Kill(SIGKILL);
  server_->Wait();
  StartAgent();
  std::string fleet = WriteFleet(34, 20, 60);
  WriteFileToAgent(fleet);
  const double events = static_cast<double>(
      std::count(std::istreambuf_iterator<char>(std::ifstream(fleet).rdbuf()),
                 std::istreambuf_iterator<char>(), '\n'));
  ASSERT_TRUE(Eventually(
      [&] {
        return AgentMetric("goodput_agent_spooled_events_total") == events;
      },
      60))
      << "the agent did not spool every event";
  EXPECT_GT(AgentMetric("goodput_agent_spool_pending_batches"), 0);
  agent_->Kill(SIGKILL);  // with everything spooled and nothing sent
  agent_->Wait();
  StartServer();
  StartAgent();  // the same spool: it drains into the server
  ExpectEventuallyLiveEqualsReplay(fleet);
}

TEST_F(LivePipelineTest, ServerKilledWhileAgentStreams) {
  StartServer("after_store:3");
  StartAgent();
  std::string fleet = WriteFleet(35, 30, 60);
  WriteFileToAgent(fleet);
  EXPECT_EQ(server_->WaitFor(60), 128 + SIGKILL) << "the fault did not fire";
  StartServer();
  ExpectEventuallyLiveEqualsReplay(fleet);
}

TEST_F(LivePipelineTest, LateEventsBeyondTheLatenessEqualReplay) {
  StartServer("", {"--lateness=1s"});
  std::string fleet = WriteFleet(36, 20, 60, /*late=*/40);
  Ctl({Server(), "send", fleet});
  ExpectLiveEqualsReplay(fleet);
  server_->Kill(SIGKILL);  // recovery: snapshots of ended jobs + the rest
  server_->Wait();
  StartServer("", {"--lateness=1s"});
  ExpectLiveEqualsReplay(fleet);
}

TEST_F(LivePipelineTest, RetentionKeepsFinalReportsAndRefusesCutReports) {
  // The fleet ran on 2026-11-22 from 10:00; with a retention of 1 s every
  // ended job's raw events are deleted as soon as the server checks.
  StartServer("", {"--retention=1s"});
  std::string fleet = WriteFleet(37, 20, 60);
  Ctl({Server(), "send", fleet});
  ExpectLiveEqualsReplay(fleet);
  server_->Kill(SIGKILL);
  server_->Wait();
  StartServer("", {"--retention=1s"});
  ExpectLiveEqualsReplay(fleet);
  std::string out;
  int code = RunCapture({GOODPUTCTL_PATH, Server(), "report", "--json",
                         "--as_of=2026-11-22T10:00:30Z"},
                        dir_ + "/cut.log", &out);
  EXPECT_NE(code, 0) << out;
  std::ifstream log(dir_ + "/cut.log");
  std::string text((std::istreambuf_iterator<char>(log)),
                   std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("deleted by --retention"), std::string::npos) << text;
}

// A bad state-record flag is one clear line naming the flag and the value,
// and a non-zero exit before anything is opened.
TEST_F(LivePipelineTest, BadStateFlagsNameTheFlag) {
  for (const auto& [flag, want] :
       {std::pair<std::string, std::string>("--state_every_events=0",
                                            "--state_every_events"),
        std::pair<std::string, std::string>("--state_every_events=many",
                                            "\"many\""),
        std::pair<std::string, std::string>("--state_every=-5s",
                                            "--state_every"),
        std::pair<std::string, std::string>("--state_every=soon",
                                            "--state_every")}) {
    const std::string log = dir_ + "/bad_flag.log";
    std::string out;
    EXPECT_NE(RunCapture({GOODPUTD_PATH, "--data_dir=" + dir_ + "/bad", flag},
                         log, &out),
              0)
        << flag;
    std::ifstream in(log);
    std::string text((std::istreambuf_iterator<char>(in)),
                     std::istreambuf_iterator<char>());
    EXPECT_NE(text.find(want), std::string::npos) << flag << ": " << text;
  }
}

class KillTest : public LivePipelineTest,
                 public ::testing::WithParamInterface<std::string> {};

// Frequent state records, so that restarts restore jobs from them and the
// kills land between, before and after record writes too.
const std::vector<std::string> kStateFlags = {"--state_every_events=4"};

TEST_P(KillTest, KilledAtFaultPointLosesAndDoublesNothing) {
  std::string fleet = WriteFleet(32, 30, 80);
  StartServer(GetParam(), kStateFlags);
  auto send = Send(fleet);
  EXPECT_EQ(server_->WaitFor(60), 128 + SIGKILL) << "the fault did not fire";
  StartServer("", kStateFlags);  // same port and data; the sender resends
  EXPECT_EQ(send->WaitFor(120), 0) << "see " << dir_ << "/send.log";
  ExpectLiveEqualsReplay(fleet);
}

INSTANTIATE_TEST_SUITE_P(Points, KillTest,
                         ::testing::Values("after_store:1", "after_store:7",
                                           "before_store:1", "before_store:7",
                                           "before_states:3", "after_states:5"),
                         [](const auto& info) {
                           std::string name = info.param;
                           name.replace(name.find(':'), 1, "_");
                           return name;
                         });

TEST_F(LivePipelineTest, KilledAtSeededRandomBatchesRepeatedly) {
  // Repeated kills are nightly (.ci/nightly sets GOODPUT_NIGHTLY=1); CI's
  // smoke of them is KillTest, one kill at each fault point.
  if (std::getenv("GOODPUT_NIGHTLY") == nullptr) {
    GTEST_SKIP() << "nightly only: set GOODPUT_NIGHTLY=1";
  }
  // Each round kills the server at a seeded batch count, before or after
  // the write, while the sender is mid-stream; the sender reconnects to the
  // next server and resends what was not acknowledged.
  std::mt19937 rng(20261122);
  std::string fleet = WriteFleet(33, 40, 80);  // about 80 batches of 40
  std::vector<std::string> faults;
  const char* points[] = {
      "after_store:", "before_store:", "before_states:", "after_states:"};
  for (int round = 0; round < 6; ++round) {
    faults.push_back(points[rng() % 4] + std::to_string(1 + rng() % 8));
  }
  StartServer(faults[0], kStateFlags);
  auto send = Send(fleet);
  for (size_t round = 0; round < faults.size(); ++round) {
    EXPECT_EQ(server_->WaitFor(60), 128 + SIGKILL) << faults[round];
    StartServer(round + 1 < faults.size() ? faults[round + 1] : "",
                kStateFlags);
  }
  EXPECT_EQ(send->WaitFor(120), 0) << "see " << dir_ << "/send.log";
  ExpectLiveEqualsReplay(fleet);
}

// The nightly soak (.ci/nightly sets GOODPUT_SOAK=1; too long for CI):
// about 1M events sent while goodputd is killed with SIGKILL at seeded
// batch counts, before and after the write, then a last restart.
TEST_F(LivePipelineTest, SoakMillionEventsKilledAtSeededPoints) {
  if (std::getenv("GOODPUT_SOAK") == nullptr) {
    GTEST_SKIP() << "nightly only: set GOODPUT_SOAK=1";
  }
  // RandomFleet's jobs end after about 60 events: 16000 jobs ~ 1M events.
  const char* jobs_env = std::getenv("GOODPUT_SOAK_JOBS");
  const int jobs = jobs_env != nullptr ? std::atoi(jobs_env) : 16000;
  std::mt19937 rng(1122);
  std::string fleet = WriteFleet(38, jobs, 1000, /*late=*/jobs / 20);
  std::ifstream lines(fleet);
  const int64_t events = std::count(std::istreambuf_iterator<char>(lines),
                                    std::istreambuf_iterator<char>(), '\n');
  const int batches = static_cast<int>(events / 500);  // 8 kills use half
  std::vector<std::string> faults;
  for (int round = 0; round < 8; ++round) {
    faults.push_back((rng() % 2 ? "after_store:" : "before_store:") +
                     std::to_string(1 + rng() % std::max(1, batches / 16)));
  }
  StartServer(faults[0]);
  auto send = std::make_unique<Subprocess>(
      std::vector<std::string>{GOODPUTCTL_PATH, Server(), "send", fleet,
                               "--batch=500", "--timeout=600s"},
      dir_ + "/send.log");
  for (size_t round = 0; round < faults.size(); ++round) {
    EXPECT_EQ(server_->WaitFor(600), 128 + SIGKILL) << faults[round];
    StartServer(round + 1 < faults.size() ? faults[round + 1] : "");
  }
  EXPECT_EQ(send->WaitFor(1200), 0) << "see " << dir_ << "/send.log";
  server_->Kill(SIGKILL);
  server_->Wait();
  StartServer();
  ExpectLiveEqualsReplay(fleet);
}

}  // namespace
}  // namespace goodput
