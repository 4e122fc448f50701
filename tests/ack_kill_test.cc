// Issue 15 item 12, "nothing lost in silence": a client streams events to
// the real goodput-agent in ack mode while the agent is killed with SIGKILL
// again and again (restarted each time on the same spool); at the end
// goodputd's report equals the replay of everything the client sent. Run
// with the Python client (a separate process) and the C++ Recorder (in
// this process; the agent is another). CI kills the agent twice per
// client; .ci/nightly (GOODPUT_NIGHTLY=1) 20 times.
#include <signal.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "clients/cpp/recorder.h"
#include "core/testing/random_fleet.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/subprocess.h"
#include "util/clock.h"

namespace goodput {
namespace {

using ::goodput::testing::Eventually;
using ::goodput::testing::HttpGet;
using ::goodput::testing::RunCapture;
using ::goodput::testing::Subprocess;
using ::goodput::testing::WaitForLogInt;
using ::goodput::testing::WaitForPort;

constexpr char kAsOf[] = "--as_of=2026-11-22T16:00:00Z";

// GOODPUT_ACK_KILLS, else 20 under GOODPUT_NIGHTLY (.ci/nightly), else 2.
int Kills() {
  const char* env = std::getenv("GOODPUT_ACK_KILLS");
  if (env != nullptr) return std::atoi(env);
  return std::getenv("GOODPUT_NIGHTLY") != nullptr ? 20 : 2;
}

class AckKillTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = ::testing::TempDir() + "ackkill_XXXXXX";
    dir_ = mkdtemp(tmpl.data());
    std::vector<std::string> argv = {
        GOODPUTD_PATH, "--data_dir=" + dir_ + "/data",
        "--grpc_address=127.0.0.1:0", "--metrics_address=127.0.0.1:0"};
    server_ = std::make_unique<Subprocess>(argv, dir_ + "/server.log");
    port_ = WaitForPort(dir_ + "/server.log", 30);
    ASSERT_GT(port_, 0) << "goodputd did not start; see " << dir_;
  }
  void TearDown() override {
    agent_.reset();
    server_.reset();
    if (!HasFailure()) std::filesystem::remove_all(dir_);
  }

  std::string Socket() const { return dir_ + "/agent.sock"; }
  std::string ClientSpool() const { return dir_ + "/client-spool"; }

  // Starts goodput-agent on dir_/spool; it also ingests the client spool.
  void StartAgent() {
    const std::string log =
        dir_ + "/agent-" + std::to_string(++agent_starts_) + ".log";
    agent_ = std::make_unique<Subprocess>(
        std::vector<std::string>{
            AGENT_PATH, "--server=127.0.0.1:" + std::to_string(port_),
            "--socket=" + Socket(), "--spool_dir=" + dir_ + "/spool",
            "--client_spool_dir=" + ClientSpool(),
            "--metrics_address=127.0.0.1:0", "--batch_delay=50ms"},
        log);
    metrics_port_ = WaitForLogInt(log, "metrics port ([0-9]+)", 30);
    ASSERT_GT(metrics_port_, 0) << "agent did not start; see " << log;
  }

  double AgentMetric(const std::string& name) {
    std::istringstream in(HttpGet(metrics_port_, "/metrics"));
    std::string line;
    while (std::getline(in, line)) {
      if (line.rfind(name + " ", 0) == 0) {
        return std::stod(line.substr(name.size() + 1));
      }
    }
    return -1;
  }

  // Kills the agent once it took `lines` events (socket lines, or from
  // the client spool file; or after 10 s), then starts it again on the
  // same spool.
  void KillAgentAfter(int lines) {
    (void)Eventually(
        [&] {
          return AgentMetric("goodput_agent_accepted_lines_total") >= lines ||
                 AgentMetric("goodput_agent_spooled_events_total") >= lines;
        },
        10);
    duplicates_ +=
        std::max(0.0, AgentMetric("goodput_agent_duplicate_events_total"));
    agent_->Kill(SIGKILL);
    EXPECT_EQ(agent_->Wait(), 128 + SIGKILL);
    StartAgent();
  }

  std::vector<v1::Event> Fleet(bool heartbeats) {
    std::vector<v1::Event> out;
    const int jobs = Kills() > 5 ? 60 : 20;
    for (v1::Event& e : core::testing::RandomFleet(15, jobs, 80)) {
      if (!heartbeats && e.has_heartbeat()) continue;
      out.push_back(std::move(e));
    }
    return out;
  }

  std::string WriteJsonl(const std::vector<v1::Event>& events,
                         const std::string& name) {
    const std::string path = dir_ + "/" + name;
    std::ofstream out(path);
    for (const v1::Event& e : events) {
      std::string line;
      (void)google::protobuf::util::MessageToJsonString(e, &line);
      out << line << "\n";
    }
    return path;
  }

  std::string Ctl(std::vector<std::string> args) {
    args.insert(args.begin(), GOODPUTCTL_PATH);
    std::string out;
    EXPECT_EQ(RunCapture(args, dir_ + "/ctl.log", &out), 0)
        << "goodputctl " << args[1] << "; see " << dir_ << "/ctl.log";
    return out;
  }

  void ExpectEventuallyLiveEqualsReplay(const std::string& file) {
    auto replay = nlohmann::json::parse(Ctl({"replay", file, "--json", kAsOf}));
    const std::string server = "--server=127.0.0.1:" + std::to_string(port_);
    nlohmann::json live;
    EXPECT_TRUE(Eventually(
        [&] {
          live =
              nlohmann::json::parse(Ctl({server, "report", "--json", kAsOf}));
          return live == replay;
        },
        120))
        << "live and replay differ after " << Kills() << " agent kills; see "
        << dir_;
    EXPECT_FALSE(live["jobs"].empty());
  }

  std::string dir_;
  int port_ = 0, metrics_port_ = 0, agent_starts_ = 0;
  double duplicates_ = 0;
  std::unique_ptr<Subprocess> server_, agent_;
  std::mt19937 rng_{20261126};
};

TEST_F(AckKillTest, PythonClientLosesNothingAcrossAgentKills) {
  StartAgent();
  // Job events only: what a kill sends to the client spool file arrives
  // after later events, and goodputd drops a host heartbeat older than the
  // host's last (docs/delivery.md); heartbeats come from agents, not
  // training processes.
  const std::string events =
      WriteJsonl(Fleet(/*heartbeats=*/false), "sent.jsonl");
  const int chunks = Kills() + 1;
  const std::string go = dir_ + "/go-";
  Subprocess client(
      {"/usr/bin/python3", ACK_STREAM_CLIENT, PYTHON_CLIENT_DIR, Socket(),
       ClientSpool(), events, std::to_string(chunks), go},
      dir_ + "/client.log");
  for (int k = 1; k < chunks; ++k) {
    KillAgentAfter(1 + static_cast<int>(rng_() % 150));
    std::ofstream(go + std::to_string(k)).put('\n');  // the next chunk
  }
  EXPECT_EQ(client.WaitFor(180), 0) << "see " << dir_ << "/client.log";
  ExpectEventuallyLiveEqualsReplay(events);
  std::cerr << "agent duplicates dropped before the kills: " << duplicates_
            << "\n";
}

TEST_F(AckKillTest, CppRecorderLosesNothingAcrossAgentKills) {
  StartAgent();
  // The Recorder stamps its attempt on events without one and its job on
  // events without one: send only job events, each with its attempt.
  std::vector<v1::Event> events = Fleet(/*heartbeats=*/false);
  for (v1::Event& e : events) {
    if (e.attempt().empty() && !e.has_job_submitted()) e.set_attempt("a0");
  }
  const std::string sent = WriteJsonl(events, "sent.jsonl");
  RealClock clock;
  client::RecorderOptions options;
  options.job_id = "unused";
  options.attempt = "a0";
  options.socket_path = Socket();
  options.spool_dir = ClientSpool();
  options.queue_capacity = events.size() + 10;
  options.reconnect_interval = absl::Milliseconds(50);
  options.max_unacked = 500;
  client::Recorder rec(options, &clock);
  const int chunks = Kills() + 1;
  const size_t size = (events.size() + chunks - 1) / chunks;
  for (int k = 0; k < chunks; ++k) {
    if (k > 0) KillAgentAfter(1 + static_cast<int>(rng_() % 150));
    for (size_t i = k * size; i < std::min(events.size(), (k + 1) * size);
         ++i) {
      ASSERT_TRUE(rec.Send(events[i]));
    }
  }
  EXPECT_TRUE(rec.Flush(absl::Seconds(120)));
  rec.Close(absl::Seconds(10));
  EXPECT_EQ(rec.counts().dropped, 0);
  EXPECT_EQ(rec.counts().rejected, 0);
  ExpectEventuallyLiveEqualsReplay(sent);
}

}  // namespace
}  // namespace goodput
