// The metrics windows survive a restart (issue 12): the real goodputd on a
// RocksDB temp dir takes a random fleet (running, ended and evicted jobs,
// heartbeats), is scraped, killed with SIGKILL and restarted on the same
// data dir; scraped again with no new events (the same event time), every
// `goodput_*_ratio` series with a `window` label (fleet, capacity, segment,
// job) exists and has the same value as before the kill. Restarted under
// other --windows, the stored state is refused and said so.
#include <signal.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "core/testing/random_fleet.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
#include "tests/subprocess.h"

namespace goodput {
namespace {

using ::goodput::testing::HttpGet;
using ::goodput::testing::RunCapture;
using ::goodput::testing::Subprocess;
using ::goodput::testing::WaitForLogInt;
using ::goodput::testing::WaitForPort;

constexpr double kTimeoutS = 30;

// series (name and labels) -> value text, of the sample lines of `metrics`
// (Prometheus text) whose name ends in `_ratio` and that have a window.
std::map<std::string, std::string> WindowRatios(const std::string& metrics) {
  std::map<std::string, std::string> out;
  std::istringstream in(metrics);
  for (std::string line; std::getline(in, line);) {
    const size_t brace = line.find('{');
    if (line.rfind("goodput_", 0) != 0 || brace == std::string::npos ||
        line.compare(brace - 6, 6, "_ratio") != 0 ||
        line.find("window=\"") == std::string::npos) {
      continue;
    }
    const size_t space = line.rfind(' ');
    out[line.substr(0, space)] = line.substr(space + 1);
  }
  return out;
}

// The value of the sample line that starts with `series`, or "".
std::string Sample(const std::string& metrics, const std::string& series) {
  std::istringstream in(metrics);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(series + " ", 0) == 0) return line.substr(series.size() + 1);
  }
  return "";
}

// Expects the same series with the same values in both; names each that
// differs.
void ExpectSameRatios(const std::map<std::string, std::string>& after,
                      const std::map<std::string, std::string>& before) {
  for (const auto& [series, value] : before) {
    auto it = after.find(series);
    EXPECT_TRUE(it != after.end() && it->second == value)
        << series << ": " << value << " before, "
        << (it == after.end() ? "missing" : it->second) << " after";
  }
  for (const auto& [series, value] : after) {
    EXPECT_EQ(before.count(series), 1u) << series << " is new: " << value;
  }
}

class WindowsRestartTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = ::testing::TempDir() + "windows_XXXXXX";
    dir_ = mkdtemp(tmpl.data());
  }
  void TearDown() override {
    server_.reset();
    if (!HasFailure()) std::filesystem::remove_all(dir_);
  }

  // Starts goodputd on the data dir with `flags`; its log is `*log`.
  void StartServer(const std::vector<std::string>& flags = {}) {
    std::vector<std::string> argv = {
        GOODPUTD_PATH, "--data_dir=" + dir_ + "/data",
        "--grpc_address=127.0.0.1:0", "--metrics_address=127.0.0.1:0"};
    argv.insert(argv.end(), flags.begin(), flags.end());
    log_ = dir_ + "/server-" + std::to_string(++starts_) + ".log";
    server_ = std::make_unique<Subprocess>(argv, log_);
    port_ = WaitForPort(log_, kTimeoutS);
    metrics_port_ =
        WaitForLogInt(log_, "goodputd: metrics on port ([0-9]+)", kTimeoutS);
    ASSERT_GT(port_, 0) << "goodputd did not start; see " << log_;
    ASSERT_GT(metrics_port_, 0) << "no metrics port; see " << log_;
  }

  void Kill9() {
    server_->Kill(SIGKILL);
    EXPECT_EQ(server_->Wait(), 128 + SIGKILL);
  }

  // Sends a random fleet (every batch acknowledged, so applied).
  void SendFleet(uint32_t seed) {
    const std::string path = dir_ + "/fleet.jsonl";
    std::ofstream out(path);
    for (const v1::Event& e : core::testing::RandomFleet(seed, 20, 60)) {
      std::string line;
      ASSERT_TRUE(google::protobuf::util::MessageToJsonString(e, &line).ok());
      out << line << "\n";
    }
    out.close();
    std::string summary;
    ASSERT_EQ(RunCapture(
                  {GOODPUTCTL_PATH,
                   "--server=127.0.0.1:" + std::to_string(port_), "send", path},
                  dir_ + "/send.log", &summary),
              0)
        << summary;
  }

  // /metrics, also kept in the test's dir as scrape-N.txt.
  std::string Scrape() {
    std::string text = HttpGet(metrics_port_, "/metrics");
    std::ofstream(dir_ + "/scrape-" + std::to_string(++scrapes_) + ".txt")
        << text;
    return text;
  }

  std::string LogText() const {
    std::ifstream in(log_);
    return std::string(std::istreambuf_iterator<char>(in),
                       std::istreambuf_iterator<char>());
  }

  std::string dir_, log_;
  int port_ = 0, metrics_port_ = 0, starts_ = 0, scrapes_ = 0;
  std::unique_ptr<Subprocess> server_;
};

// Fleet, capacity, segment and job ratios over all three windows.
void ExpectEveryKind(const std::map<std::string, std::string>& ratios) {
  for (const char* series :
       {"goodput_fleet_goodput_ratio{window=\"1h\"}",
        "goodput_fleet_goodput_ratio{window=\"24h\"}",
        "goodput_fleet_capacity_sg_ratio{window=\"5m\"}",
        "goodput_fleet_capacity_sg_ratio{window=\"24h\"}"}) {
    EXPECT_EQ(ratios.count(series), 1u) << series;
  }
  int jobs = 0, segments = 0;
  for (const auto& [series, value] : ratios) {
    jobs += series.rfind("goodput_job_", 0) == 0;
    segments += series.rfind("goodput_segment_", 0) == 0;
  }
  EXPECT_GT(jobs, 10);
  EXPECT_GT(segments, 10);
}

// The test. No job is evicted (the grace is longer than the
// fleet): a restart evicts the ended jobs that are due, which a server
// that runs on does at its next eviction check (see the next test).
TEST_F(WindowsRestartTest, EveryWindowGaugeIsTheSameAfterKill9) {
  const std::vector<std::string> flags = {"--ended_job_grace=24h"};
  StartServer(flags);
  SendFleet(41);
  const std::string before = Scrape();
  const auto ratios = WindowRatios(before);
  ExpectEveryKind(ratios);
  Kill9();
  StartServer(flags);
  const std::string after = Scrape();
  EXPECT_NE(LogText().find("metrics windows restored"), std::string::npos)
      << LogText();
  ExpectSameRatios(WindowRatios(after), ratios);
  // Counters go on too (not from zero), and the state loaded.
  for (const char* series :
       {"goodput_duplicate_events_total",
        "goodput_capacity_chip_seconds_total{accelerator=\"h100\"}",
        "goodput_job_series_suppressed_total"}) {
    EXPECT_EQ(Sample(after, series), Sample(before, series)) << series;
  }
  EXPECT_EQ(Sample(after, "goodput_windows_state_failures_total{op=\"load\"}"),
            "0");
}

// With evicted jobs (the default grace): the first restart evicts the
// ended jobs that are due; from then on restarts change nothing. (Both
// scrapes follow a restart, so this one guards the loading of evicted
// groups' ledgers next to loaded windows, not the history of the windows:
// server/metrics_state_test evicts within one process.)
TEST_F(WindowsRestartTest, EvictedGroupsKeepTheirWindowsToo) {
  StartServer();
  SendFleet(42);
  Kill9();
  StartServer();
  const std::string before = Scrape();
  const auto ratios = WindowRatios(before);
  ExpectEveryKind(ratios);
  EXPECT_NE(Sample(before, "goodput_jobs_in_memory{held=\"evicted\"}"), "0");
  Kill9();
  StartServer();
  ExpectSameRatios(WindowRatios(Scrape()), ratios);
}

TEST_F(WindowsRestartTest, AGracefulRestartKeepsThemToo) {
  const std::vector<std::string> flags = {"--ended_job_grace=24h"};
  StartServer(flags);
  SendFleet(43);
  const auto ratios = WindowRatios(Scrape());
  server_->Kill(SIGTERM);
  EXPECT_EQ(server_->WaitFor(kTimeoutS), 0);
  StartServer(flags);
  EXPECT_FALSE(ratios.empty());
  ExpectSameRatios(WindowRatios(Scrape()), ratios);
}

TEST_F(WindowsRestartTest, OtherWindowsStartEmptyAndSaySo) {
  StartServer();
  SendFleet(44);
  (void)Scrape();
  Kill9();
  StartServer({"--windows=5m,1h"});
  const std::string after = Scrape();
  EXPECT_NE(LogText().find("metrics windows not restored"), std::string::npos)
      << LogText();
  EXPECT_NE(LogText().find("windows"), std::string::npos);
  EXPECT_EQ(Sample(after, "goodput_windows_state_failures_total{op=\"load\"}"),
            "1");
  // A scrape writes the state under the new windows: the next start loads
  // it.
  Kill9();
  StartServer({"--windows=5m,1h"});
  EXPECT_NE(LogText().find("metrics windows restored"), std::string::npos)
      << LogText();
}

}  // namespace
}  // namespace goodput
