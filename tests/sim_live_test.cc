// goodput-sim live into two real goodput-agents and a real goodputd: what
// the server reports equals an offline replay of exactly the events the
// simulator sent (its --out copy), and `goodputctl top --once` shows the
// fleet. Processes are synchronized on ports, sockets and the report
// itself, never on sleeps.

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/subprocess.h"

namespace goodput {
namespace {

using ::goodput::testing::Eventually;
using ::goodput::testing::IsUnixSocket;
using ::goodput::testing::RunCapture;
using ::goodput::testing::Subprocess;
using ::goodput::testing::WaitForPort;

class SimLiveTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = ::testing::TempDir() + "simlive_XXXXXX";
    dir_ = mkdtemp(tmpl.data());
  }
  void TearDown() override {
    agents_.clear();
    server_.reset();
    if (!HasFailure()) std::filesystem::remove_all(dir_);
  }

  void StartServer() {
    const std::string log = dir_ + "/goodputd.log";
    server_ = std::make_unique<Subprocess>(
        std::vector<std::string>{GOODPUTD_PATH, "--data_dir=" + dir_ + "/db",
                                 "--grpc_address=127.0.0.1:0"},
        log);
    port_ = WaitForPort(log, 30);
    ASSERT_GT(port_, 0) << "goodputd did not start; see " << log;
  }

  std::string StartAgent(int i) {
    const std::string socket = dir_ + "/agent-" + std::to_string(i) + ".sock";
    agents_.push_back(std::make_unique<Subprocess>(
        std::vector<std::string>{
            AGENT_PATH, "--server=127.0.0.1:" + std::to_string(port_),
            "--socket=" + socket,
            "--spool_dir=" + dir_ + "/spool-" + std::to_string(i),
            "--host=rack-" + std::to_string(i),
            "--metrics_address=", "--batch_delay=20ms"},
        dir_ + "/agent-" + std::to_string(i) + ".log"));
    return socket;
  }

  // goodputctl ARGS... with its stdout; expects exit code 0.
  std::string Ctl(std::vector<std::string> args) {
    args.insert(args.begin(), GOODPUTCTL_PATH);
    std::string out;
    EXPECT_EQ(RunCapture(args, dir_ + "/ctl.log", &out), 0)
        << "see " << dir_ << "/ctl.log";
    return out;
  }

  std::string dir_;
  int port_ = 0;
  std::unique_ptr<Subprocess> server_;
  std::vector<std::unique_ptr<Subprocess>> agents_;
};

// The parts of a report that must agree (as_of is given; `since` too).
nlohmann::json Comparable(const std::string& report) {
  nlohmann::json j = nlohmann::json::parse(report, nullptr, false);
  if (j.is_discarded()) return nullptr;
  return {j["jobs"], j["fleet"], j["segments"]};
}

TEST_F(SimLiveTest, LiveReportEqualsReplayOfWhatWasSent) {
  StartServer();
  const std::string a = StartAgent(0), b = StartAgent(1);
  ASSERT_TRUE(
      Eventually([&] { return IsUnixSocket(a) && IsUnixSocket(b); }, 30));
  const std::string sent = dir_ + "/sent.jsonl";
  Subprocess sim(
      {SIM_PATH, "--seed=3", "--hosts=16", "--jobs=12", "--duration=2h",
       "--mtbi=1h", "--mtbi_chips=0", "--elastic_jobs=0.5", "--speed=7200",
       "--sockets=" + a + "," + b, "--out=" + sent,
       "--truth=" + dir_ + "/truth.json"},
      dir_ + "/sim.log");
  ASSERT_EQ(sim.WaitFor(120), 0) << "see " << dir_ << "/sim.log";

  const std::string offline = Ctl({"replay", sent, "--json"});
  const nlohmann::json want = Comparable(offline);
  ASSERT_FALSE(want.is_null());
  ASSERT_GE(want[0].size(), 8u) << "jobs";
  // Issue 18 part 2: checkpoint advice is part of what must agree (the
  // live trackers count saves as the replay does), per job (own M or the
  // accelerator segment's rate) and for the fleet.
  int advised = 0;
  for (const auto& job : want[0]) {
    advised += job["checkpoint_advice"].is_null() ? 0 : 1;
  }
  EXPECT_GT(advised, 0) << offline;
  EXPECT_FALSE(want[1]["checkpoint_advice"].is_null()) << offline;
  const std::string as_of =
      "--as_of=" + nlohmann::json::parse(offline)["as_of"].get<std::string>();
  const std::string server = "--server=127.0.0.1:" + std::to_string(port_);
  std::string live;
  EXPECT_TRUE(Eventually(
      [&] {
        live = Ctl({server, "report", "--json", as_of});
        return Comparable(live) == want;  // to the last bit
      },
      60))
      << "live:\n"
      << live << "\noffline:\n"
      << offline;

  const std::string top = Ctl({server, "top", "--once", "--metrics_url="});
  EXPECT_NE(top.find("FLEET  " + std::to_string(want[0].size()) + " jobs"),
            std::string::npos)
      << top;
  EXPECT_NE(top.find("WORST JOBS"), std::string::npos) << top;
}

}  // namespace
}  // namespace goodput
