// Three goodputd shards on loopback, two goodput-agents with the three-entry
// --server list, a goodput-sim fleet streamed through them, and one shard
// killed (SIGKILL) mid-stream and restarted on the same data dir and port.
// At the end `goodputctl --server=a,b,c report` equals the replay of every
// event (nothing lost, nothing counted twice; capacity the sum of the
// shards'), and each shard holds exactly the jobs the shard map gives it
// and only some hosts' capacity. Synchronized on ports, sockets and
// reports, never on sleeps.
#include <signal.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/json_near.h"
#include "tests/subprocess.h"
#include "util/shard_map.h"

namespace goodput {
namespace {

using ::goodput::testing::Eventually;
using ::goodput::testing::HttpGet;
using ::goodput::testing::IsUnixSocket;
using ::goodput::testing::JsonNear;
using ::goodput::testing::RestartablePort;
using ::goodput::testing::RunCapture;
using ::goodput::testing::Subprocess;
using ::goodput::testing::WaitForLogInt;
using ::goodput::testing::WaitForPort;
using ::goodput::testing::WriteUnixSocket;
using Json = nlohmann::json;

constexpr int kShards = 3;
constexpr int kAgents = 2;

class ShardTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = ::testing::TempDir() + "shard_XXXXXX";
    dir_ = mkdtemp(tmpl.data());
  }
  void TearDown() override {
    agents_.clear();
    for (auto& s : shards_) s.reset();
    if (!HasFailure()) std::filesystem::remove_all(dir_);
  }

  // Starts shard `i` on `port` (0: any) with its own data dir and, if
  // `shard_flag`, --shard=i/3; each start logs to a new file so the port
  // read is this run's.
  void StartShard(int i, int port, bool shard_flag = true) {
    const std::string log =
        absl::StrCat(dir_, "/goodputd-", i, "-", ++starts_, ".log");
    std::vector<std::string> args = {
        GOODPUTD_PATH, absl::StrCat("--data_dir=", dir_, "/db-", i),
        absl::StrCat("--grpc_address=127.0.0.1:", port),
        "--metrics_address=127.0.0.1:0"};
    if (shard_flag) args.push_back(absl::StrCat("--shard=", i, "/", kShards));
    shards_[i] = std::make_unique<Subprocess>(args, log);
    ports_[i] = WaitForPort(log, 30);
    ASSERT_GT(ports_[i], 0) << "goodputd did not start; see " << log;
    metrics_ports_[i] = WaitForLogInt(log, "metrics on port ([0-9]+)", 30);
    if (port != 0) {
      ASSERT_EQ(ports_[i], port);
    }
  }

  std::string Address(int i) const {
    return absl::StrCat("127.0.0.1:", ports_[i]);
  }
  std::string List() const {
    return absl::StrCat(Address(0), ",", Address(1), ",", Address(2));
  }

  std::string StartAgent(int i) {
    const std::string socket = absl::StrCat(dir_, "/agent-", i, ".sock");
    agents_.push_back(std::make_unique<Subprocess>(
        std::vector<std::string>{
            AGENT_PATH, "--server=" + List(), "--socket=" + socket,
            absl::StrCat("--spool_dir=", dir_, "/spool-", i),
            absl::StrCat("--host=agent-", i),
            "--metrics_address=", "--batch_delay=20ms", "--batch_events=50"},
        absl::StrCat(dir_, "/agent-", i, ".log")));
    return socket;
  }

  // goodputctl ARGS... with its stdout; `ok` says whether to expect exit 0.
  std::string Ctl(std::vector<std::string> args, bool ok = true) {
    args.insert(args.begin(), GOODPUTCTL_PATH);
    std::string out;
    const int code = RunCapture(args, dir_ + "/ctl.log", &out);
    if (ok) {
      EXPECT_EQ(code, 0) << "see " << dir_ << "/ctl.log";
    }
    return code == 0 ? out : "";
  }

  // The job_ids of shard `i`'s own report as of `as_of`.
  std::set<std::string> ShardJobs(int i, const std::string& as_of) {
    std::set<std::string> jobs;
    const std::string out =
        Ctl({"--server=" + Address(i), "report", "--json", as_of});
    const Json j = Json::parse(out, nullptr, false);
    if (j.is_discarded()) return jobs;
    for (const Json& job : j["jobs"]) jobs.insert(job["job_id"]);
    return jobs;
  }

  // The fleet capacity of `report` (--json), in its chip-time unit:
  // allocated over capacity SG (core::ComputeRatios); -1 if none.
  static double Capacity(const Json& report) {
    if (report.is_discarded() || report["fleet"]["sg_capacity"].is_null()) {
      return -1;
    }
    const Json& c = report["fleet"]["chip_seconds"];
    const double allocated =
        c["total"].get<double>() - c["excluded"].get<double>() -
        c["queued"].get<double>() - c["recovery"].get<double>();
    return allocated / report["fleet"]["sg_capacity"].get<double>();
  }

  // Each shard has some hosts' capacity, none every host's, and the
  // shards' add up to `want`'s (the replay's).
  void ExpectCapacityAddsUp(const Json& want, const std::string& as_of) {
    const double fleet = Capacity(want);
    double sum = 0;
    for (int i = 0; i < kShards; ++i) {
      const double c = Capacity(Json::parse(
          Ctl({"--server=" + Address(i), "report", "--json", as_of}), nullptr,
          false));
      EXPECT_GT(c, 0) << "shard " << i;
      EXPECT_LT(c, 0.9 * fleet) << "shard " << i << " has every host's";
      sum += c;
    }
    EXPECT_NEAR(sum, fleet, 1e-6 * fleet);
  }

  // The events shard `i` accepted (stored) since it started, from its
  // goodput_ingest_events_total{result="accepted"}; -1 if none.
  double Accepted(int i) {
    const std::string text = HttpGet(metrics_ports_[i], "/metrics");
    const std::string name =
        "goodput_ingest_events_total{result=\"accepted\"} ";
    const size_t at = text.find(name);
    if (at == std::string::npos) return -1;
    return std::strtod(text.c_str() + at + name.size(), nullptr);
  }

  // Batch files waiting in the agents' spools for shard `i`.
  int SpooledFor(int i) const {
    int n = 0;
    for (int a = 0; a < kAgents; ++a) {
      const std::string dir = absl::StrCat(dir_, "/spool-", a, "/shard-", i);
      std::error_code ec;
      for (const auto& f : std::filesystem::directory_iterator(dir, ec)) {
        if (f.path().filename().string().rfind("batch-", 0) == 0) ++n;
      }
    }
    return n;
  }

  std::string dir_;
  int starts_ = 0;
  int ports_[kShards] = {};
  int metrics_ports_[kShards] = {};
  std::unique_ptr<Subprocess> shards_[kShards];
  std::vector<std::unique_ptr<Subprocess>> agents_;
};

// The fleet's lines split over the agents: a job's events all through one
// agent (in order), a host's heartbeats through one.
std::vector<std::vector<std::string>> ByAgent(const std::string& file) {
  std::vector<std::vector<std::string>> out(kAgents);
  std::ifstream in(file);
  for (std::string line; std::getline(in, line);) {
    const Json j = Json::parse(line);
    const std::string key = j.value("job_id", j.value("host", ""));
    out[Fnv1a64(key) % kAgents].push_back(line + "\n");
  }
  return out;
}

// Lines [begin, end) of each agent's share, as fractions of it.
std::string Part(const std::vector<std::string>& lines, double begin,
                 double end) {
  const size_t b = static_cast<size_t>(lines.size() * begin);
  const size_t e = static_cast<size_t>(lines.size() * end);
  std::string out;
  for (size_t i = b; i < e; ++i) out += lines[i];
  return out;
}

TEST_F(ShardTest, MergedReportEqualsReplayAcrossAShardRestart) {
  const std::string fleet = dir_ + "/fleet.jsonl";
  Subprocess sim({SIM_PATH, "--seed=11", "--hosts=24", "--jobs=30",
                  "--duration=2h", "--mtbi=1h", "--mtbi_chips=0",
                  "--start=2025-01-01T00:00:00Z", "--out=" + fleet},
                 dir_ + "/sim.log");
  ASSERT_EQ(sim.WaitFor(120), 0) << "see " << dir_ << "/sim.log";
  const std::string offline = Ctl({"replay", fleet, "--json"});
  const Json want = Json::parse(offline);
  ASSERT_GE(want["jobs"].size(), 20u);
  const std::string as_of = "--as_of=" + want["as_of"].get<std::string>();

  // Shard 1 restarts on its port: one from below the ephemeral range, which
  // another test's outgoing connection cannot take while it is down.
  const int restart_port = RestartablePort();
  ASSERT_GT(restart_port, 0);
  for (int i = 0; i < kShards; ++i) StartShard(i, i == 1 ? restart_port : 0);
  std::vector<std::string> sockets;
  for (int i = 0; i < kAgents; ++i) sockets.push_back(StartAgent(i));
  ASSERT_TRUE(Eventually(
      [&] { return IsUnixSocket(sockets[0]) && IsUnixSocket(sockets[1]); },
      30));
  const std::vector<std::vector<std::string>> lines = ByAgent(fleet);

  // The first half; shard 1 dies (SIGKILL) once it holds some of it.
  for (int a = 0; a < kAgents; ++a) {
    ASSERT_TRUE(WriteUnixSocket(sockets[a], Part(lines[a], 0, 0.5)));
  }
  ASSERT_TRUE(Eventually([&] { return !ShardJobs(1, as_of).empty(); }, 60));
  shards_[1]->Kill(SIGKILL);
  EXPECT_EQ(shards_[1]->Wait(), 128 + SIGKILL);
  // The second half while it is down: its events wait in the spools, the
  // other shards go on.
  for (int a = 0; a < kAgents; ++a) {
    ASSERT_TRUE(WriteUnixSocket(sockets[a], Part(lines[a], 0.5, 1)));
  }
  ASSERT_TRUE(Eventually([&] { return SpooledFor(1) > 0; }, 60))
      << "no batch waits for the dead shard";
  EXPECT_EQ(Ctl({"--server=" + List(), "report", "--json", as_of}, false), "");
  StartShard(1, ports_[1]);

  std::string merged;
  EXPECT_TRUE(Eventually(
      [&] {
        merged = Ctl({"--server=" + List(), "report", "--json", as_of}, false);
        const Json got = Json::parse(merged, nullptr, false);
        return !got.is_discarded() && JsonNear(got["jobs"], want["jobs"]) &&
               JsonNear(got["fleet"], want["fleet"]) &&
               JsonNear(got["segments"], want["segments"]);
      },
      120))
      << "merged:\n"
      << merged << "\nreplay:\n"
      << offline;

  // Each shard holds exactly its jobs; together, every job once.
  const ShardMap map = *ShardMap::Parse(List(), "--server");
  size_t total = 0;
  for (int i = 0; i < kShards; ++i) {
    const std::set<std::string> jobs = ShardJobs(i, as_of);
    EXPECT_FALSE(jobs.empty()) << "shard " << i;
    for (const std::string& job : jobs) {
      EXPECT_EQ(map.ShardOf(job), static_cast<size_t>(i)) << job;
    }
    total += jobs.size();
  }
  EXPECT_EQ(total, want["jobs"].size());
  ExpectCapacityAddsUp(want, as_of);

  // The drill-downs over the list agree with the merged report.
  const Json jobs = Json::parse(
      Ctl({"--server=" + List(), "jobs", "--json", "--limit=0", as_of}));
  EXPECT_EQ(jobs["matched"], want["jobs"].size());
  const Json fleet_view =
      Json::parse(Ctl({"--server=" + List(), "fleet", "--json", as_of}));
  EXPECT_TRUE(JsonNear(fleet_view["fleet"], want["fleet"]));
  const std::string some_job = want["jobs"][0]["job_id"];
  const Json job = Json::parse(
      Ctl({"--server=" + List(), "job", some_job, "--json", as_of}));
  EXPECT_EQ(job["job"]["job_id"], some_job);
  const std::string top =
      Ctl({"--server=" + List(), "top", "--once", "--metrics_url="});
  EXPECT_NE(top.find("WORST JOBS"), std::string::npos) << top;
}

// `goodputctl send` over the list routes like the agents: the merged
// report equals the replay, and each shard holds only its jobs.
TEST_F(ShardTest, SendRoutesByJob) {
  for (int i = 0; i < kShards; ++i) StartShard(i, 0);
  const std::string fleet = GOODPUT_EXAMPLES "/fleet.jsonl";
  const std::string offline = Ctl({"replay", fleet, "--json"});
  const Json want = Json::parse(offline);
  const std::string as_of = "--as_of=" + want["as_of"].get<std::string>();
  EXPECT_NE(Ctl({"--server=" + List(), "send", fleet}).find(" 0 rejected"),
            std::string::npos);
  const Json got =
      Json::parse(Ctl({"--server=" + List(), "report", "--json", as_of}));
  EXPECT_TRUE(JsonNear(got["jobs"], want["jobs"]));
  EXPECT_TRUE(JsonNear(got["fleet"], want["fleet"]));
  EXPECT_TRUE(JsonNear(got["segments"], want["segments"]));
  const ShardMap map = *ShardMap::Parse(List(), "--server");
  size_t total = 0;
  for (int i = 0; i < kShards; ++i) {
    for (const std::string& job : ShardJobs(i, as_of)) {
      EXPECT_EQ(map.ShardOf(job), static_cast<size_t>(i)) << job;
      ++total;
    }
  }
  EXPECT_EQ(total, want["jobs"].size());
  // Each shard stored exactly its jobs' events, its hosts' heartbeats and
  // every HOSTS or FLEET exclusion: each heartbeat once in the fleet.
  std::vector<double> want_stored(kShards);
  int heartbeats = 0;
  std::ifstream in(fleet);
  for (std::string line; std::getline(in, line);) {
    const Json e = Json::parse(line);
    const std::string job = e.value("job_id", "");
    const bool beat = e.contains("heartbeat");
    heartbeats += beat;
    for (size_t s :
         beat ? map.ShardsFor(job, e.value("host", "")) : map.ShardsFor(job)) {
      ++want_stored[s];
    }
  }
  ASSERT_GT(heartbeats, 100);
  for (int i = 0; i < kShards; ++i) {
    EXPECT_EQ(Accepted(i), want_stored[i]) << "shard " << i;
  }
  const std::string letters = Ctl({"--server=" + List(), "dead-letters"});
  EXPECT_NE(letters.find("# " + Address(2) + "\n0 dead letters"),
            std::string::npos)
      << letters;
}

// A shard started without --shard (it may hold any host's heartbeats, e.g.
// from agents that send them to every shard) fails the merge, naming it
// and the flag: a sum could count hosts twice.
TEST_F(ShardTest, AShardWithoutItsShardFlagIsNamed) {
  for (int i = 0; i < kShards; ++i) StartShard(i, 0, /*shard_flag=*/i != 1);
  for (const char* command : {"report", "fleet"}) {
    std::string out;
    const int code =
        RunCapture({GOODPUTCTL_PATH, "--server=" + List(), command, "--json"},
                   dir_ + "/ctl.log", &out);
    EXPECT_NE(code, 0) << command;
    std::ifstream log(dir_ + "/ctl.log");
    const std::string text((std::istreambuf_iterator<char>(log)),
                           std::istreambuf_iterator<char>());
    EXPECT_NE(text.find(Address(1) + " (entry 2 of the 3-shard list)"),
              std::string::npos)
        << command << ": " << text;
    EXPECT_NE(text.find("--shard=I/N"), std::string::npos) << text;
  }
}

}  // namespace
}  // namespace goodput
