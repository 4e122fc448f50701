// goodputd --cluster end to end (issue 20), all real processes: a 3-node
// NATS JetStream cluster on loopback ports, goodputd instances in cluster
// mode, one goodput-agent streaming a goodput-sim fleet to one of them.
// The fleet's report from the cluster equals `goodputctl replay` of every
// event sent: through one instance, and through two instances sharing the
// partitions when the one the agent does not talk to is killed (SIGKILL)
// mid-stream and the survivor takes its partitions over from the partition
// snapshots the dead one published (nothing lost,
// nothing counted twice; while the dead one is still a member, a report
// fails naming it); and when one joins mid-stream: asked alone, either
// instance answers for the whole fleet (it fans the query out to the
// other), `job ID` reaches the job's owner through either, and goodputctl's
// merge over both still works (each then answers, and exports /metrics,
// only for the partitions it holds; the jobs come back to the first once
// the joiner stops); and through one instance when every NATS node dies
// mid-stream and returns.
// Synchronized on logs, metrics and reports, never on sleeps.
#include <signal.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/json_near.h"
#include "tests/nats_cluster.h"
#include "tests/subprocess.h"
#include "tests/test_pki.h"

namespace goodput {
namespace {

using ::goodput::testing::Eventually;
using ::goodput::testing::HttpGet;
using ::goodput::testing::IsUnixSocket;
using ::goodput::testing::JsonNear;
using ::goodput::testing::NatsCluster;
using ::goodput::testing::RunCapture;
using ::goodput::testing::Subprocess;
using ::goodput::testing::TestPki;
using ::goodput::testing::WaitForLogInt;
using ::goodput::testing::WaitForPort;
using ::goodput::testing::WriteUnixSocket;
using Json = nlohmann::json;

constexpr int kPartitions = 8;
constexpr int kMaxInstances = 2;

struct Instance {
  std::unique_ptr<Subprocess> process;
  int port = 0, metrics_port = 0;
  std::string log;  // of its last start
  std::string Address() const { return absl::StrCat("127.0.0.1:", port); }
};

class ClusterModeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = ::testing::TempDir() + "cluster_mode_XXXXXX";
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
    auto nats = NatsCluster::Start(dir_, 3);
    ASSERT_TRUE(nats.ok()) << nats.status();
    nats_ = *std::move(nats);
    MakeFleet();
  }
  void TearDown() override {
    agent_.reset();
    for (Instance& i : instances_) i.process.reset();
    nats_.reset();
    if (!HasFailure() && !dir_.empty()) std::filesystem::remove_all(dir_);
  }

  // The simulated fleet and its offline replay (`want_`).
  void MakeFleet() {
    fleet_ = dir_ + "/fleet.jsonl";
    Subprocess sim({SIM_PATH, "--seed=7", "--hosts=12", "--jobs=16",
                    "--duration=1h", "--mtbi=30m", "--mtbi_chips=0",
                    "--start=2025-01-01T00:00:00Z", "--out=" + fleet_},
                   dir_ + "/sim.log");
    ASSERT_EQ(sim.WaitFor(120), 0) << "see " << dir_ << "/sim.log";
    offline_ = Ctl({"replay", fleet_, "--json"});
    want_ = Json::parse(offline_);
    ASSERT_GE(want_["jobs"].size(), 10u);
    as_of_ = "--as_of=" + want_["as_of"].get<std::string>();
    std::ifstream in(fleet_);
    for (std::string line; std::getline(in, line);) lines_.push_back(line);
  }

  // Starts goodputd instance `i` in cluster mode.
  void StartInstance(int i) {
    const std::string log =
        absl::StrCat(dir_, "/goodputd-", i, "-", ++starts_, ".log");
    std::vector<std::string> argv = {
        GOODPUTD_PATH,
        absl::StrCat("--data_dir=", dir_, "/db-", i),
        "--grpc_address=127.0.0.1:0",
        "--metrics_address=127.0.0.1:0",
        "--cluster=" + absl::StrJoin(nats_->urls(), ","),
        absl::StrCat("--cluster_id=gp-", i),
        absl::StrCat("--cluster_partitions=", kPartitions),
        "--cluster_lease_ttl=3s"};
    argv.insert(argv.end(), extra_flags_.begin(), extra_flags_.end());
    if (pki_) {  // mutual TLS and tokens, also between the instances
      argv.insert(
          argv.end(),
          {"--tls_cert=" + pki_->server_cert, "--tls_key=" + pki_->server_key,
           "--tls_client_ca=" + pki_->ca, "--auth_tokens=" + dir_ + "/tokens"});
    }
    instances_[i].process = std::make_unique<Subprocess>(argv, log);
    instances_[i].log = log;
    instances_[i].port = WaitForPort(log, 60);
    ASSERT_GT(instances_[i].port, 0) << "goodputd did not start; see " << log;
    instances_[i].metrics_port =
        WaitForLogInt(log, "metrics on port ([0-9]+)", 30);
    ASSERT_GT(instances_[i].metrics_port, 0) << log;
  }

  // goodput-agent streaming to instance `i`; returns its socket.
  std::string StartAgent(int i) {
    const std::string socket = dir_ + "/agent.sock";
    std::vector<std::string> argv = {
        AGENT_PATH,           "--server=" + instances_[i].Address(),
        "--socket=" + socket, "--spool_dir=" + dir_ + "/spool",
        "--host=agent-0",     "--metrics_address=",
        "--batch_delay=20ms", "--batch_events=50"};
    const std::vector<std::string> tls = ClientTls();
    argv.insert(argv.end(), tls.begin(), tls.end());
    agent_ = std::make_unique<Subprocess>(argv, dir_ + "/agent.log");
    EXPECT_TRUE(Eventually([&] { return IsUnixSocket(socket); }, 30))
        << "see " << dir_ << "/agent.log";
    return socket;
  }

  // Lines [begin, end) of the fleet, as fractions of it.
  std::string Part(double begin, double end) const {
    std::string out;
    for (size_t k = lines_.size() * begin; k < lines_.size() * end; ++k) {
      out += lines_[k] + "\n";
    }
    return out;
  }

  // Mutual TLS and tokens from here on (certificates for 127.0.0.1, one
  // token), for the instances, the agent and goodputctl.
  void Secure() {
    auto pki = TestPki::Generate(dir_);
    ASSERT_TRUE(pki.ok()) << pki.status();
    pki_ = *std::move(pki);
    std::ofstream(dir_ + "/tokens") << "ops tok-ops\n";
    std::ofstream(dir_ + "/token") << "tok-ops\n";
  }
  // The client flags of Secure(); none before it.
  std::vector<std::string> ClientTls() const {
    if (!pki_) return {};
    return {"--tls_ca=" + pki_->ca, "--tls_cert=" + pki_->client_cert,
            "--tls_key=" + pki_->client_key,
            "--auth_token_file=" + dir_ + "/token"};
  }

  std::string Ctl(std::vector<std::string> args) {
    const std::vector<std::string> tls = ClientTls();
    args.insert(args.begin(), tls.begin(), tls.end());
    args.insert(args.begin(), GOODPUTCTL_PATH);
    std::string out;
    return RunCapture(args, dir_ + "/ctl.log", &out) == 0 ? out : "";
  }

  // The value of instance `i`'s unlabelled metric `name`, or -99.
  double Metric(int i, const std::string& name) {
    std::istringstream in(HttpGet(instances_[i].metrics_port, "/metrics"));
    for (std::string line; std::getline(in, line);) {
      if (line.rfind(name + " ", 0) == 0) {
        return std::strtod(line.c_str() + name.size() + 1, nullptr);
      }
    }
    return -99;
  }

  // The lines of instance `i`'s log that contain `text`.
  int LogLines(int i, const std::string& text) {
    std::ifstream in(instances_[i].log);
    int n = 0;
    for (std::string line; std::getline(in, line);) {
      n += line.find(text) != std::string::npos;
    }
    return n;
  }

  // Instance `i`'s goodput metrics by job: the job ids of its
  // goodput_job_info series, and the sum of goodput_jobs over the states.
  struct JobMetrics {
    std::set<std::string> ids;
    double jobs = 0;
  };
  JobMetrics ScrapeJobs(int i) {
    JobMetrics out;
    const std::regex info("^goodput_job_info\\{.*job_id=\"([^\"]*)\"");
    std::istringstream in(HttpGet(instances_[i].metrics_port, "/metrics"));
    for (std::string line; std::getline(in, line);) {
      std::smatch m;
      if (std::regex_search(line, m, info)) out.ids.insert(m[1]);
      if (line.rfind("goodput_jobs{", 0) == 0) {
        out.jobs += std::strtod(line.c_str() + line.rfind(' ') + 1, nullptr);
      }
    }
    return out;
  }

  // Waits until `servers`' report equals the replay; false if it never
  // does (the last report is kept in `got_`).
  bool ReportEqualsReplay(const std::string& servers, double timeout_s) {
    return Eventually(
        [&] {
          got_ = Ctl({"--server=" + servers, "report", "--json", as_of_});
          const Json got = Json::parse(got_, nullptr, false);
          return !got.is_discarded() && JsonNear(got["jobs"], want_["jobs"]) &&
                 JsonNear(got["fleet"], want_["fleet"]) &&
                 JsonNear(got["segments"], want_["segments"]);
        },
        timeout_s);
  }

  std::string dir_, fleet_, offline_, as_of_, got_;
  std::vector<std::string> extra_flags_;  // of every goodputd started
  int starts_ = 0;
  std::vector<std::string> lines_;
  Json want_;
  std::unique_ptr<NatsCluster> nats_;
  Instance instances_[kMaxInstances];
  std::unique_ptr<Subprocess> agent_;
  std::optional<TestPki> pki_;  // set by Secure()
};

TEST_F(ClusterModeTest, OneInstanceReportEqualsReplay) {
  StartInstance(0);
  // Alone, it takes every partition, and none is left unowned.
  EXPECT_TRUE(Eventually(
      [&] {
        return Metric(0, "goodput_cluster_partitions_held") == kPartitions &&
               Metric(0, "goodput_cluster_partitions_unowned") == 0;
      },
      60));
  const std::string socket = StartAgent(0);
  ASSERT_TRUE(WriteUnixSocket(socket, Part(0, 1)));
  EXPECT_TRUE(ReportEqualsReplay(instances_[0].Address(), 120))
      << "cluster:\n"
      << got_ << "\nreplay:\n"
      << offline_;
  EXPECT_GT(Metric(0, "goodput_cluster_applied_messages_total"), 0);
}

TEST_F(ClusterModeTest, SurvivorTakesOverAKilledInstancesPartitions) {
  // A partition snapshot after every pump that applied something: the
  // survivor takes the dead one's partitions over from their snapshots.
  extra_flags_ = {"--cluster_snapshot_events=1"};
  StartInstance(0);
  StartInstance(1);
  // They share the partitions: each holds some, together all of them.
  ASSERT_TRUE(Eventually(
      [&] {
        const double a = Metric(0, "goodput_cluster_partitions_held");
        const double b = Metric(1, "goodput_cluster_partitions_held");
        return a > 0 && b > 0 && a + b == kPartitions &&
               Metric(0, "goodput_cluster_partitions_unowned") == 0 &&
               Metric(1, "goodput_cluster_partitions_unowned") == 0;
      },
      60))
      << "held: " << Metric(0, "goodput_cluster_partitions_held") << " + "
      << Metric(1, "goodput_cluster_partitions_held");
  const std::string socket = StartAgent(0);
  // The first half; instance 1 dies once it applied some of its share.
  ASSERT_TRUE(WriteUnixSocket(socket, Part(0, 0.5)));
  ASSERT_TRUE(Eventually([&] { return ScrapeJobs(1).jobs > 0; }, 60));
  ASSERT_TRUE(Eventually(
      [&] {
        return Metric(1, "goodput_cluster_snapshots_published_total") > 0;
      },
      60));
  instances_[1].process->Kill(SIGKILL);
  EXPECT_EQ(instances_[1].process->Wait(), 128 + SIGKILL);
  // Until its membership expires (the 3 s TTL), the dead instance is still
  // a member: a report through the survivor fails and says why, rather
  // than leave its partitions out.
  std::string out;
  const int code =
      RunCapture({GOODPUTCTL_PATH, "--server=" + instances_[0].Address(),
                  "report", "--json", as_of_},
                 dir_ + "/ctl-dead.log", &out);
  std::ifstream dead_log(dir_ + "/ctl-dead.log");
  const std::string why((std::istreambuf_iterator<char>(dead_log)),
                        std::istreambuf_iterator<char>());
  EXPECT_NE(code, 0) << out;
  EXPECT_TRUE(why.find("cluster member gp-1 (127.0.0.1:") !=
                  std::string::npos ||
              why.find("have no owner now") != std::string::npos)
      << why;
  ASSERT_TRUE(WriteUnixSocket(socket, Part(0.5, 1)));
  // The survivor holds every partition once the dead one's leases expire,
  // and applies what the dead one had not: the report equals the replay.
  EXPECT_TRUE(ReportEqualsReplay(instances_[0].Address(), 120))
      << "survivor:\n"
      << got_ << "\nreplay:\n"
      << offline_;
  EXPECT_EQ(Metric(0, "goodput_cluster_partitions_held"), kPartitions);
  EXPECT_EQ(Metric(0, "goodput_cluster_partitions_unowned"), 0);
  EXPECT_GT(Metric(0, "goodput_cluster_snapshots_imported_total"), 0);
  EXPECT_EQ(Metric(0, "goodput_cluster_snapshot_import_errors_total"), 0);
}

// P is stored in the stream when the cluster is created: a goodputd given
// another --cluster_partitions refuses to start, naming the flag and both
// values (the cluster's stays as it was: instance 0 still holds all 8).
TEST_F(ClusterModeTest, AnotherPartitionCountRefusesToStart) {
  StartInstance(0);
  const std::string log = dir_ + "/goodputd-other-p.log";
  Subprocess other(
      {GOODPUTD_PATH, "--data_dir=" + dir_ + "/db-other",
       "--grpc_address=127.0.0.1:0", "--metrics_address=",
       "--cluster=" + absl::StrJoin(nats_->urls(), ","), "--cluster_id=gp-9",
       absl::StrCat("--cluster_partitions=", 2 * kPartitions)},
      log);
  EXPECT_NE(other.WaitFor(60), 0);
  std::ifstream in(log);
  const std::string text((std::istreambuf_iterator<char>(in)),
                         std::istreambuf_iterator<char>());
  EXPECT_NE(text.find(absl::StrCat(
                "--cluster_partitions=", 2 * kPartitions,
                " but the cluster (stream GOODPUT_EVENTS) was created with "
                "--cluster_partitions=",
                kPartitions)),
            std::string::npos)
      << text;
  EXPECT_TRUE(Eventually(
      [&] {
        return Metric(0, "goodput_cluster_partitions_held") == kPartitions;
      },
      30));
}

// Every NATS node is killed mid-stream: goodputd says why on /readyz, in
// goodput_cluster_nats_connected and in one log line; the agent keeps the
// batches it sends meanwhile (their acks wait for JetStream), and once NATS
// is back every event arrives: the report equals the replay.
TEST_F(ClusterModeTest, NatsUnreachableIsSaidAndEverythingArrivesOnItsReturn) {
  StartInstance(0);
  ASSERT_TRUE(Eventually(
      [&] {
        return Metric(0, "goodput_cluster_partitions_held") == kPartitions;
      },
      60));
  EXPECT_EQ(Metric(0, "goodput_cluster_nats_connected"), 1);
  EXPECT_EQ(HttpGet(instances_[0].metrics_port, "/readyz"), "ready\n");
  const std::string socket = StartAgent(0);
  ASSERT_TRUE(WriteUnixSocket(socket, Part(0, 0.5)));
  ASSERT_TRUE(Eventually(
      [&] {
        const Json mine =
            Json::parse(Ctl({"--server=" + instances_[0].Address(), "report",
                             "--json", as_of_}),
                        nullptr, false);
        return !mine.is_discarded() && !mine["jobs"].empty();
      },
      60));
  for (int n = 0; n < 3; ++n) nats_->Kill(n);
  std::string ready;
  EXPECT_TRUE(Eventually(
      [&] {
        ready = HttpGet(instances_[0].metrics_port, "/readyz");
        return ready.rfind("not ready: NATS unreachable (nats://", 0) == 0;
      },
      30))
      << ready;
  EXPECT_EQ(Metric(0, "goodput_cluster_nats_connected"), 0);
  ASSERT_TRUE(WriteUnixSocket(socket, Part(0.5, 1)));
  EXPECT_TRUE(Eventually(
      [&] { return LogLines(0, "NATS unreachable (nats://") == 1; }, 30));
  ASSERT_TRUE(nats_->RestartAll().ok());
  EXPECT_TRUE(ReportEqualsReplay(instances_[0].Address(), 180))
      << "after NATS returned:\n"
      << got_ << "\nreplay:\n"
      << offline_;
  EXPECT_EQ(HttpGet(instances_[0].metrics_port, "/readyz"), "ready\n");
  EXPECT_EQ(Metric(0, "goodput_cluster_nats_connected"), 1);
  EXPECT_EQ(LogLines(0, "NATS unreachable (nats://"), 1);  // rate-limited
  EXPECT_EQ(LogLines(0, "cluster log reachable again after"), 1);
}

// Under mutual TLS and tokens, instance 1 joins after instance 0 applied
// the first half alone: half of the partitions move to it, and it applies
// them from their first message. Instance 0 keeps the moved partitions'
// jobs in its store but answers only for the partitions it holds, so
// either instance alone (fanning out to the other over TLS with the
// caller's token) and goodputctl's merge over both equal the replay (each
// job from one instance, none twice).
TEST_F(ClusterModeTest, AJoinerTakesItsShareAndTheMergeEqualsReplay) {
  // With mutual TLS and tokens: the instances call each other with the
  // deployment's TLS and the caller's token.
  Secure();
  StartInstance(0);
  const std::string socket = StartAgent(0);
  ASSERT_TRUE(WriteUnixSocket(socket, Part(0, 0.5)));
  ASSERT_TRUE(Eventually(
      [&] {
        const Json mine =
            Json::parse(Ctl({"--server=" + instances_[0].Address(), "report",
                             "--json", as_of_}),
                        nullptr, false);
        return !mine.is_discarded() && mine["jobs"].size() >= 8;
      },
      60));
  StartInstance(1);
  ASSERT_TRUE(Eventually(
      [&] {
        const double a = Metric(0, "goodput_cluster_partitions_held");
        const double b = Metric(1, "goodput_cluster_partitions_held");
        return a > 0 && b > 0 && a + b == kPartitions;
      },
      60));
  ASSERT_TRUE(WriteUnixSocket(socket, Part(0.5, 1)));
  // One instance answers for the whole fleet, whichever is asked: the one
  // the agent does not stream to first.
  for (int i : {1, 0}) {
    EXPECT_TRUE(ReportEqualsReplay(instances_[i].Address(), 120))
        << "instance " << i << " alone:\n"
        << got_ << "\nreplay:\n"
        << offline_;
  }
  // goodputctl's own merge over both: each answers for its part only.
  const std::string both =
      instances_[0].Address() + "," + instances_[1].Address();
  EXPECT_TRUE(ReportEqualsReplay(both, 30)) << "merged:\n"
                                            << got_ << "\nreplay:\n"
                                            << offline_;
  // The jobs and fleet drill-downs through one instance agree: every job
  // once.
  const Json jobs = Json::parse(Ctl({"--server=" + instances_[1].Address(),
                                     "jobs", "--json", "--limit=0", as_of_}),
                                nullptr, false);
  ASSERT_FALSE(jobs.is_discarded());
  EXPECT_EQ(jobs["matched"], want_["jobs"].size());
  const Json fleet = Json::parse(
      Ctl({"--server=" + instances_[1].Address(), "fleet", "--json", as_of_}),
      nullptr, false);
  ASSERT_FALSE(fleet.is_discarded());
  EXPECT_TRUE(JsonNear(fleet["fleet"], want_["fleet"]));
  // `job ID` through either instance: the owner of the job's partition
  // answers (locally on one, forwarded by the other), the same job.
  const std::string job_id = want_["jobs"][0]["job_id"];
  const std::string via0 = Ctl(
      {"--server=" + instances_[0].Address(), "job", job_id, "--json", as_of_});
  const Json job = Json::parse(via0, nullptr, false);
  ASSERT_FALSE(job.is_discarded()) << via0;
  EXPECT_EQ(job["job"]["job_id"], job_id) << via0;
  EXPECT_EQ(Ctl({"--server=" + instances_[1].Address(), "job", job_id, "--json",
                 as_of_}),
            via0);
  // /metrics too: each instance exports only the jobs of the partitions it
  // holds, so every job is counted by one instance (goodput_jobs sums to
  // the fleet's jobs, no job has series on both).
  const double fleet_jobs = static_cast<double>(want_["jobs"].size());
  JobMetrics a, b;
  EXPECT_TRUE(Eventually(
      [&] {
        a = ScrapeJobs(0);
        b = ScrapeJobs(1);
        return a.jobs + b.jobs == fleet_jobs;
      },
      30))
      << a.jobs << " + " << b.jobs << " jobs, want " << fleet_jobs;
  EXPECT_GT(a.jobs, 0);
  EXPECT_GT(b.jobs, 0);
  std::set<std::string> twice;
  std::set_intersection(a.ids.begin(), a.ids.end(), b.ids.begin(), b.ids.end(),
                        std::inserter(twice, twice.end()));
  EXPECT_TRUE(twice.empty()) << *twice.begin() << " exported by both";
  // Instance 1 stops (giving its leases back): its partitions' jobs come
  // back into instance 0's metrics.
  instances_[1].process->Kill(SIGTERM);
  EXPECT_EQ(instances_[1].process->Wait(), 0);
  std::set<std::string> all = a.ids;
  all.insert(b.ids.begin(), b.ids.end());
  EXPECT_TRUE(Eventually(
      [&] {
        a = ScrapeJobs(0);
        return a.jobs == fleet_jobs && std::includes(a.ids.begin(), a.ids.end(),
                                                     all.begin(), all.end());
      },
      60))
      << a.jobs << " jobs, want " << fleet_jobs;
}

// The long variant (.ci/nightly sets GOODPUT_CLUSTER_KILLS=5; skipped
// otherwise): instance 1 is killed (SIGKILL) and started again on its store
// and id that many times, one part of the fleet each time. Its partitions
// go to instance 0 and come back; each instance applies a partition from
// its own last applied message, and the merge over both equals the replay.
class ClusterModeLongTest : public ClusterModeTest {
 protected:
  void SetUp() override {  // skipped before any process starts
    const char* env = std::getenv("GOODPUT_CLUSTER_KILLS");
    kills_ = env != nullptr ? std::atoi(env) : 0;
    if (kills_ <= 0) GTEST_SKIP() << "set GOODPUT_CLUSTER_KILLS (.ci/nightly)";
    ClusterModeTest::SetUp();
  }
  int kills_ = 0;
};

TEST_F(ClusterModeLongTest, RepeatedKillsAndRestartsKeepTheMergeEqualToReplay) {
  const int kills = kills_;
  StartInstance(0);
  StartInstance(1);
  const std::string socket = StartAgent(0);
  auto shared = [&] {
    return Eventually(
        [&] {
          const double a = Metric(0, "goodput_cluster_partitions_held");
          const double b = Metric(1, "goodput_cluster_partitions_held");
          return a > 0 && b > 0 && a + b == kPartitions;
        },
        120);
  };
  for (int k = 0; k < kills; ++k) {
    ASSERT_TRUE(shared()) << "kill " << k;
    ASSERT_TRUE(WriteUnixSocket(
        socket, Part(double(k) / (kills + 1), double(k + 1) / (kills + 1))));
    const double applied = Metric(1, "goodput_cluster_applied_messages_total");
    ASSERT_TRUE(Eventually(
        [&] {
          return Metric(1, "goodput_cluster_applied_messages_total") > applied;
        },
        60));
    instances_[1].process->Kill(SIGKILL);
    EXPECT_EQ(instances_[1].process->Wait(), 128 + SIGKILL);
    StartInstance(1);
  }
  ASSERT_TRUE(shared());
  ASSERT_TRUE(WriteUnixSocket(socket, Part(double(kills) / (kills + 1), 1)));
  const std::string both =
      instances_[0].Address() + "," + instances_[1].Address();
  EXPECT_TRUE(ReportEqualsReplay(both, 300)) << "merged:\n"
                                             << got_ << "\nreplay:\n"
                                             << offline_;
}

}  // namespace
}  // namespace goodput
