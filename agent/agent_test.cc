// In-process tests of the whole agent: socket -> batcher -> spool -> uplink
// -> a real gRPC server, plus /metrics and /healthz.
#include "agent/agent.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <memory>
#include <string>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "agent/testing/test_ingest_server.h"
#include "agent/testing/test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "util/fault_injecting_file_system.h"
#include "util/posix_file_system.h"

namespace goodput::agent {
namespace {

using testing::ConnectUnix;
using ::testing::HasSubstr;
using testing::HttpGet;
using testing::SendAll;
using ::testing::StartsWith;
using testing::StepLine;
using testing::TestIngestServer;
using testing::WaitFor;
using Stats = TestIngestServer::Stats;
using Fault = FaultInjectingFileSystem::Fault;

constexpr absl::Duration kTimeout = absl::Seconds(30);

class AgentTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(server_.Start().ok()); }

  AgentFlags Flags() {
    AgentFlags f;
    f.server = server_.address();
    f.socket_path = tmp_.File("agent.sock");
    f.spool_dir = tmp_.File("spool");
    f.metrics_address = "127.0.0.1:0";
    f.host = "host-7";
    f.batch_delay = absl::Milliseconds(20);
    return f;
  }

  void Send(const std::string& data) {
    auto fd = ConnectUnix(tmp_.File("agent.sock"));
    ASSERT_TRUE(fd.ok()) << fd.status();
    ASSERT_TRUE(SendAll(*fd, data));
    ::close(*fd);
  }

  std::unique_ptr<Agent> StartAgent(const AgentFlags& flags) {
    auto agent = Agent::Start(flags, &clock_, &sleeper_);
    EXPECT_TRUE(agent.ok()) << agent.status();
    return agent.ok() ? *std::move(agent) : nullptr;
  }

  testing::TempDir tmp_;
  TestIngestServer server_;
  RealClock clock_;
  testing::RecordingSleeper sleeper_;
};

TEST_F(AgentTest, RunAgentDeliversSocketEventsAndServesMetrics) {
  AgentFlags flags = Flags();
  flags.chips = 4;
  flags.accelerator = "tpu-v5p";
  absl::Notification stop, started;
  Agent* agent = nullptr;
  absl::Status result;
  std::thread run([&] {
    result = RunAgent(flags, &stop, [&](Agent* a) {
      agent = a;
      started.Notify();
    });
  });
  ASSERT_TRUE(started.WaitForNotificationWithTimeout(kTimeout));
  std::string lines;
  for (int i = 1; i <= 10; ++i) lines += StepLine("job-a", i);
  Send(lines + "garbage\n{\"time\":\"2024-06-01T00:00:00Z\"}\n");
  ASSERT_TRUE(server_.Await(
      [](const Stats& s) { return s.events.size() >= 11; }, kTimeout));
  const Stats s = server_.stats();
  int steps = 0, heartbeats = 0;
  for (const v1::Event& e : s.events) {
    EXPECT_EQ(e.host(), "host-7");
    if (e.has_step()) ++steps;
    if (e.has_heartbeat()) {
      ++heartbeats;
      EXPECT_EQ(e.heartbeat().chips(), 4);
      EXPECT_EQ(e.heartbeat().accelerator(), "tpu-v5p");
    }
  }
  EXPECT_EQ(steps, 10);
  EXPECT_EQ(heartbeats, 1);
  EXPECT_EQ(s.high_water.count(agent->agent_id()), 1u);

  ASSERT_TRUE(WaitFor([&] { return agent->spool().Pending().empty(); }));
  ASSERT_TRUE(WaitFor([&] { return agent->uplink().connected(); }));
  // The two bad lines come after the ten steps on the socket: the intake
  // may still be on them when the server has the steps.
  ASSERT_TRUE(
      WaitFor([&] { return agent->intake().stats().rejected_lines() == 2; }));
  auto metrics = HttpGet(agent->metrics_port(), "/metrics");
  ASSERT_TRUE(metrics.ok()) << metrics.status();
  EXPECT_EQ(metrics->status, 200);
  for (const char* name :
       {"goodput_agent_accepted_lines_total 10",
        "goodput_agent_rejected_lines_total{reason=\"invalid\"} 2",
        "goodput_agent_dropped_events_total 0", "goodput_agent_spool_bytes 0",
        "goodput_agent_spool_pending_batches 0",
        "goodput_agent_oldest_unsent_event_age_seconds 0",
        "goodput_agent_connected 1", "goodput_agent_acked_batches_total",
        "goodput_agent_server_rejected_events_total 0",
        "goodput_agent_heartbeats_total 1", "goodput_agent_spool_full 0"}) {
    EXPECT_THAT(metrics->body, HasSubstr(name));
  }
  auto health = HttpGet(agent->metrics_port(), "/healthz");
  ASSERT_TRUE(health.ok());
  EXPECT_EQ(health->status, 200);
  ASSERT_THAT(health->body, StartsWith("ok\n"));
  auto json = nlohmann::json::parse(health->body.substr(3));
  EXPECT_EQ(json["rejected_lines"], 2);
  EXPECT_EQ(json["pending_batches"], 0);
  EXPECT_EQ(json["spool_bytes"], 0);
  EXPECT_EQ(json["oldest_unsent_age_seconds"], 0.0);
  EXPECT_EQ(json["connected"], true);
  EXPECT_EQ(json["agent_id"], agent->agent_id());
  EXPECT_EQ(HttpGet(agent->metrics_port(), "/nope")->status, 404);

  stop.Notify();
  run.join();
  EXPECT_TRUE(result.ok()) << result;
  EXPECT_NE(::access(flags.socket_path.c_str(), F_OK), 0);  // removed
}

// --tail: a Megatron-LM log followed across an agent restart, a line cut
// in the middle by the restart, with every step delivered exactly once.
TEST_F(AgentTest, TailFollowsATrainingLogAcrossARestart) {
  AgentFlags flags = Flags();
  const std::string dir = tmp_.File("logs");
  ASSERT_EQ(::mkdir(dir.c_str(), 0755), 0);
  flags.tail = dir + "/*.log";
  flags.log_profile = "megatron";
  const std::string log = dir + "/llm-7.log";
  auto iteration = [](int second, int it) {
    return absl::StrFormat(
        " [2026-11-22 10:00:%02d.000000] iteration %8d/     100 | consumed "
        "samples: %12d |\n",
        second, it, it * 64);
  };
  auto append = [&](const std::string& text) {
    FILE* f = std::fopen(log.c_str(), "a");
    ASSERT_NE(f, nullptr);
    std::fputs(text.c_str(), f);
    std::fclose(f);
  };
  append(
      "[after in-process setup and before initialize_megatron] datetime: "
      "2026-11-22 10:00:00.000000 \n" +
      iteration(10, 10) + iteration(20, 20));
  auto steps = [this] {
    std::vector<int64_t> out;
    for (const v1::Event& e : server_.stats().events) {
      if (e.has_step()) out.push_back(e.step().step());
    }
    return out;
  };
  auto agent = StartAgent(flags);
  ASSERT_NE(agent, nullptr);
  ASSERT_TRUE(server_.Await([](const Stats& s) { return s.events.size() >= 4; },
                            kTimeout));
  agent->Stop();
  agent.reset();
  std::string last = iteration(50, 50);
  append(iteration(30, 30) + iteration(40, 40) + last.substr(0, 20));
  agent = StartAgent(flags);
  ASSERT_NE(agent, nullptr);
  ASSERT_TRUE(server_.Await([](const Stats& s) { return s.events.size() >= 6; },
                            kTimeout));
  append(last.substr(20));
  ASSERT_TRUE(server_.Await([](const Stats& s) { return s.events.size() >= 7; },
                            kTimeout));
  agent->Stop();
  EXPECT_THAT(steps(), ::testing::ElementsAre(10, 20, 30, 40, 50));
  for (const v1::Event& e : server_.stats().events) {
    EXPECT_EQ(e.job_id(), "llm-7");
    EXPECT_EQ(e.attempt(), "1");
  }
}

TEST_F(AgentTest, TailNeedsAProfileAndAKnownFormat) {
  AgentFlags flags = Flags();
  flags.tail = tmp_.File("*.log");
  flags.log_profile = "no-such-profile";
  auto agent = Agent::Start(flags, &clock_, &sleeper_);
  ASSERT_FALSE(agent.ok());
  EXPECT_THAT(agent.status().message(),
              HasSubstr("--log_profile=no-such-profile"));
}

TEST_F(AgentTest, StopSpoolsTheWaitingBatchAndTheNextRunSendsIt) {
  const int port = server_.port();
  server_.Stop();
  AgentFlags flags = Flags();
  flags.batch_delay = absl::Hours(1);
  flags.batch_events = 1000;
  std::string id;
  {
    auto agent = StartAgent(flags);
    ASSERT_NE(agent, nullptr);
    id = agent->agent_id();
    Send(StepLine("job-b", 1) + StepLine("job-b", 2) + StepLine("job-b", 3));
    ASSERT_TRUE(agent->intake().AwaitStats(
        [](const Intake::Stats& s) { return s.accepted_lines == 3; },
        kTimeout));
    EXPECT_TRUE(agent->spool().Pending().empty());  // still in the batcher
    auto health = HttpGet(agent->metrics_port(), "/healthz");
    ASSERT_TRUE(health.ok());
    EXPECT_EQ(nlohmann::json::parse(health->body.substr(3))["connected"],
              false);
    agent->Stop();  // what SIGTERM does
    ASSERT_EQ(agent->spool().Pending().size(), 1u);
    EXPECT_EQ(agent->spool().Read(1)->events_size(), 3);
  }
  ASSERT_TRUE(server_.Start(port).ok());
  auto agent = StartAgent(flags);
  ASSERT_NE(agent, nullptr);
  EXPECT_EQ(agent->agent_id(), id);
  ASSERT_TRUE(server_.Await([](const Stats& s) { return s.events.size() >= 3; },
                            kTimeout));
  EXPECT_EQ(server_.stats().stored_sequences, std::vector<uint64_t>{1});
  EXPECT_TRUE(WaitFor([&] { return agent->spool().Pending().empty(); }));
}

TEST_F(AgentTest, HealthzIs503AndEventsAreCountedWhenTheSpoolIsFull) {
  server_.Stop();
  AgentFlags flags = Flags();
  flags.batch_events = 1;
  flags.max_spool_bytes = 400;
  auto agent = StartAgent(flags);
  ASSERT_NE(agent, nullptr);
  std::string lines;
  for (int i = 1; i <= 20; ++i) lines += StepLine("job-c", i);
  Send(lines);
  ASSERT_TRUE(agent->intake().AwaitStats(
      [](const Intake::Stats& s) { return s.accepted_lines == 20; }, kTimeout));
  auto health = HttpGet(agent->metrics_port(), "/healthz");
  ASSERT_TRUE(health.ok());
  EXPECT_EQ(health->status, 503);
  ASSERT_THAT(health->body, StartsWith("spool full\n"));
  auto json = nlohmann::json::parse(health->body.substr(11));
  EXPECT_EQ(json["spool_full"], true);
  const int dropped = json["dropped_events"];
  const int pending = json["pending_batches"];
  EXPECT_GT(dropped, 0);
  EXPECT_EQ(dropped + pending, 20);  // every accepted event is accounted for
  EXPECT_LE(json["spool_bytes"].get<int>(), 400);
  EXPECT_GE(json["oldest_unsent_age_seconds"].get<double>(), 0.0);
}

// The JSON after /healthz's first line.
nlohmann::json HealthJson(const testing::HttpResult& health) {
  return nlohmann::json::parse(health.body.substr(health.body.find('\n') + 1));
}

// Issue 15 item 7: a full disk used to drop events with /healthz 200 and
// spool_full false.
TEST_F(AgentTest, FullDiskIsSpoolFullInHealthzMetricsAndClearsWhenItHasRoom) {
  PosixFileSystem posix;
  FaultInjectingFileSystem disk(&posix);
  AgentFlags flags = Flags();
  flags.batch_events = 1;
  auto agent = Agent::Start(flags, &clock_, &sleeper_, &disk);
  ASSERT_TRUE(agent.ok()) << agent.status();
  disk.Inject(Fault::kNoSpace, -1);
  ::testing::internal::CaptureStderr();
  Send(StepLine("job-d", 1) + StepLine("job-d", 2) + StepLine("job-d", 3));
  ASSERT_TRUE((*agent)->intake().AwaitStats(
      [](const Intake::Stats& s) { return s.accepted_lines == 3; }, kTimeout));
  auto health = HttpGet((*agent)->metrics_port(), "/healthz");
  ASSERT_TRUE(health.ok());
  EXPECT_EQ(health->status, 503);
  EXPECT_THAT(health->body, StartsWith("spool full\n"));
  EXPECT_THAT(::testing::internal::GetCapturedStderr(),
              HasSubstr("spool: dropped 1 events since the last message: "
                        "RESOURCE_EXHAUSTED: spool full: no space left on the "
                        "disk: write "));
  nlohmann::json json = HealthJson(*health);
  EXPECT_EQ(json["spool_full"], true);
  EXPECT_EQ(json["dropped_events"], 3);
  EXPECT_EQ(json["spool_write_errors"], 3);
  EXPECT_THAT(json["spool_last_error"].get<std::string>(),
              HasSubstr("No space left on device"));
  auto metrics = HttpGet((*agent)->metrics_port(), "/metrics");
  ASSERT_TRUE(metrics.ok());
  EXPECT_THAT(metrics->body, HasSubstr("goodput_agent_spool_full 1"));
  EXPECT_THAT(
      metrics->body,
      HasSubstr(
          "goodput_agent_spool_write_errors_total{reason=\"no_space\"} 3"));
  disk.Clear();  // room again: the next event is spooled and delivered
  Send(StepLine("job-d", 4));
  ASSERT_TRUE(server_.Await([](const Stats& s) { return s.events.size() == 1; },
                            kTimeout));
  health = HttpGet((*agent)->metrics_port(), "/healthz");
  EXPECT_EQ(health->status, 200);
  EXPECT_EQ(HealthJson(*health)["spool_full"], false);
}

TEST_F(AgentTest, FailingDiskIsReportedAndLosesNothingSpooled) {
  PosixFileSystem posix;
  FaultInjectingFileSystem disk(&posix);
  server_.HoldAcks(true);
  AgentFlags flags = Flags();
  flags.batch_events = 1;
  auto agent = Agent::Start(flags, &clock_, &sleeper_, &disk);
  ASSERT_TRUE(agent.ok()) << agent.status();
  Send(StepLine("job-e", 1));
  ASSERT_TRUE(WaitFor([&] { return (*agent)->spool().Pending().size() == 1; }));
  disk.Inject(Fault::kRenameFails, -1);
  ::testing::internal::CaptureStderr();
  Send(StepLine("job-e", 2));
  ASSERT_TRUE((*agent)->intake().AwaitStats(
      [](const Intake::Stats& s) { return s.accepted_lines == 2; }, kTimeout));
  auto health = HttpGet((*agent)->metrics_port(), "/healthz");
  ASSERT_TRUE(health.ok());
  EXPECT_EQ(health->status, 503);
  EXPECT_THAT(health->body, StartsWith("spool failing\n"));
  EXPECT_THAT(::testing::internal::GetCapturedStderr(),
              HasSubstr("spool: dropped 1 events since the last message: "
                        "UNKNOWN: rename "));
  nlohmann::json json = HealthJson(*health);
  EXPECT_EQ(json["spool_failing"], true);
  EXPECT_EQ(json["spool_full"], false);
  EXPECT_EQ(json["dropped_events"], 1);
  EXPECT_THAT(json["spool_last_error"].get<std::string>(), HasSubstr("rename"));
  auto metrics = HttpGet((*agent)->metrics_port(), "/metrics");
  EXPECT_THAT(metrics->body, HasSubstr("goodput_agent_spool_failing 1"));
  EXPECT_THAT(
      metrics->body,
      HasSubstr("goodput_agent_spool_write_errors_total{reason=\"io\"} 1"));
  disk.Clear();
  server_.HoldAcks(false);  // the batch spooled before the fault is delivered
  ASSERT_TRUE(server_.Await([](const Stats& s) { return s.events.size() == 1; },
                            kTimeout));
  EXPECT_EQ(server_.stats().events[0].step().step(), 1);
}

// Issue 15 item 3 (agent half): two agents on one spool dir would share an
// identity and the server would drop one's batches as duplicates.
TEST_F(AgentTest, SecondAgentOnTheSameSpoolDirIsRefused) {
  auto first = StartAgent(Flags());
  ASSERT_NE(first, nullptr);
  AgentFlags flags = Flags();
  flags.socket_path = tmp_.File("other.sock");
  auto second = Agent::Start(flags, &clock_, &sleeper_);
  ASSERT_FALSE(second.ok());
  EXPECT_TRUE(absl::IsFailedPrecondition(second.status())) << second.status();
  EXPECT_THAT(second.status().message(),
              HasSubstr(absl::StrCat("spool_dir ", flags.spool_dir,
                                     " is in use by another agent")));
  EXPECT_THAT(second.status().message(),
              HasSubstr(absl::StrCat("locked by pid ", ::getpid())));
  first.reset();
  EXPECT_NE(StartAgent(flags), nullptr);
}

TEST_F(AgentTest, StartFailsWithAClearErrorAndLeavesNothingRunning) {
  AgentFlags flags = Flags();
  flags.metrics_address = "no-port-here";
  auto agent = Agent::Start(flags, &clock_, &sleeper_);
  ASSERT_FALSE(agent.ok());
  EXPECT_THAT(agent.status().message(), HasSubstr("--metrics_address"));
  EXPECT_NE(::access(flags.socket_path.c_str(), F_OK), 0);  // cleaned up

  AgentFlags on_file = Flags();
  on_file.socket_path = tmp_.File("spool/agent_id");  // a regular file
  ASSERT_TRUE(StartAgent(Flags()) != nullptr);        // creates spool/agent_id
  auto refused = Agent::Start(on_file, &clock_, &sleeper_);
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.status().message(), HasSubstr("not a socket"));
}

}  // namespace
}  // namespace goodput::agent
