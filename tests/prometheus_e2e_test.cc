// End to end with a real Prometheus: goodputd (RocksDB in a temp dir, gRPC
// and /metrics on port 0), two goodput-agents, and Prometheus scraping all
// three every second with the project's recording and alert rules. The
// scripted fleet tests/testdata/e2e_fleet.jsonl (a preemption and a host
// failure that lose work, a slow program with low PG), its times moved to
// just before now, streams through the agents. Once every job has ended and
// Prometheus has scraped the final state:
//  - the counters' totals by category (fleet and per job) and the ratios
//    they give equal the server's report (`goodputctl report --json`);
//  - the fleet dashboard's stat panels MPG/SG/RG/PG (1h) equal the report's
//    fleet ratios, and so do the exporter's 24h window gauges (see
//    FleetPanelsEqualReport for why both comparisons are exact);
//  - every dashboard panel query returns series with the labels its legend
//    names (dashboards/check_dashboards.py --prometheus);
//  - every alert's `command` annotation, as Prometheus loaded it, runs
//    against the live server.
// The scenario runs once for the suite (SetUpTestSuite); each test checks
// one of the above on it.
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/prometheus_server.h"
#include "tests/subprocess.h"
#include "util/time_format.h"

namespace goodput {
namespace {

using ::goodput::testing::Eventually;
using ::goodput::testing::HttpGet;
using ::goodput::testing::PrometheusServer;
using ::goodput::testing::RunCapture;
using ::goodput::testing::Subprocess;
using ::goodput::testing::WaitForLogInt;
using ::goodput::testing::WaitForPort;
using ::goodput::testing::WriteUnixSocket;
using json = nlohmann::json;

constexpr double kTimeoutS = 30;
constexpr const char* kRatios[] = {"sg", "rg", "pg", "mpg", "goodput"};

// The scripted fleet split by agent (hosts "a-..." to agent 0, "b-..." to
// agent 1) and phase, with times moved so the last event is `end_ns`.
// Phase 0 creates every counter series at zero: each job's first two
// events (its job_submitted is applied once a later event is past the
// lateness; nothing is counted yet) and each host's first heartbeat
// (capacity holds from it on). Phase 1 is the rest.
struct Script {
  std::string lines[2][2];  // [agent][phase], JSON Lines
  int events = 0;
  std::set<std::string> jobs;
};

Script LoadScript(const std::string& path, int64_t end_ns) {
  std::vector<json> events;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) events.push_back(json::parse(line));
  }
  auto time_of = [](const json& e) {
    return *ParseRfc3339(e["time"].get<std::string>());
  };
  const int64_t shift = end_ns - time_of(events.back());
  Script script;
  std::map<std::string, int> seen;  // events per job or host so far
  for (json& e : events) {
    e["time"] = FormatRfc3339(time_of(e) + shift);
    const int agent = e["host"].get<std::string>().rfind("a-", 0) == 0 ? 0 : 1;
    const std::string key = e.contains("job_id")
                                ? e["job_id"].get<std::string>()
                                : "host " + e["host"].get<std::string>();
    if (e.contains("job_id")) script.jobs.insert(key);
    const int phase = seen[key]++ < (e.contains("job_id") ? 2 : 1) ? 0 : 1;
    script.lines[agent][phase] += e.dump() + "\n";
    ++script.events;
  }
  return script;
}

// The value of the first sample line of `metrics` (Prometheus text) that
// starts with `prefix`, or NaN.
double ScrapedValue(const std::string& metrics, const std::string& prefix) {
  std::istringstream in(metrics);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(prefix, 0) == 0) {
      return std::stod(line.substr(line.rfind(' ') + 1));
    }
  }
  return NAN;
}

int CountLines(const std::string& text, const std::string& prefix) {
  std::istringstream in(text);
  int n = 0;
  for (std::string line; std::getline(in, line);) {
    n += line.rfind(prefix, 0) == 0;
  }
  return n;
}

// Expects `got` within a relative 1e-9 of `want` (sums of doubles in
// another order).
void ExpectClose(double got, double want, const std::string& what) {
  EXPECT_NEAR(got, want, 1e-9 * std::max(1.0, std::fabs(want))) << what;
}

// The running processes of the scenario and what it observed. Owns every
// process; destroying it stops them all.
struct Scenario {
  std::string dir;
  std::unique_ptr<Subprocess> goodputd;
  int grpc_port = 0, metrics_port = 0;
  std::unique_ptr<Subprocess> agents[2];
  int agent_ports[2] = {0, 0};
  std::unique_ptr<PrometheusServer> prometheus;
  json report;        // goodputctl report --json after the stream
  std::string error;  // the first setup step that failed

  ~Scenario() {
    prometheus.reset();
    for (auto& a : agents) {
      if (a) a->Kill(SIGTERM), a->WaitFor(10);
    }
    if (goodputd) goodputd->Kill(SIGTERM), goodputd->WaitFor(10);
  }

  std::string Server() const {
    return "127.0.0.1:" + std::to_string(grpc_port);
  }
  std::string Metrics() const { return HttpGet(metrics_port, "/metrics"); }
  std::string Socket(int i) const {
    return dir + "/agent" + std::to_string(i) + ".sock";
  }

  // goodputctl ARGS... with stdout in `*out`; the exit code.
  int Ctl(std::vector<std::string> args, std::string* out) const {
    args.insert(args.begin(), GOODPUTCTL_PATH);
    out->clear();
    return RunCapture(args, dir + "/goodputctl.log", out);
  }

  bool StartGoodputd() {
    const std::string log = dir + "/goodputd.log";
    goodputd = std::make_unique<Subprocess>(
        std::vector<std::string>{GOODPUTD_PATH, "--data_dir=" + dir + "/data",
                                 "--grpc_address=127.0.0.1:0",
                                 "--metrics_address=127.0.0.1:0"},
        log);
    grpc_port = WaitForPort(log, kTimeoutS);
    metrics_port =
        WaitForLogInt(log, "goodputd: metrics on port ([0-9]+)", kTimeoutS);
    return Fail(grpc_port <= 0 || metrics_port <= 0, "goodputd start", log);
  }

  bool StartAgent(int i) {
    const std::string log = dir + "/agent" + std::to_string(i) + ".log";
    agents[i] = std::make_unique<Subprocess>(
        std::vector<std::string>{
            AGENT_PATH, "--server=" + Server(), "--socket=" + Socket(i),
            "--spool_dir=" + dir + "/spool" + std::to_string(i),
            "--metrics_address=127.0.0.1:0", "--batch_events=100",
            "--batch_delay=20ms"},
        log);
    agent_ports[i] = WaitForLogInt(log, "metrics port ([0-9]+)", kTimeoutS);
    return Fail(agent_ports[i] <= 0, "agent start", log);
  }

  bool Stream(const Script& script, int phase) {
    for (int i = 0; i < 2; ++i) {
      if (!WriteUnixSocket(Socket(i), script.lines[i][phase])) {
        return Fail(true, "write to agent socket", Socket(i));
      }
    }
    return true;
  }

  // Phase 0 is in: every job has series in its real segment, all zero.
  bool WaitForSegments(const Script& script) {
    const bool ok = Eventually(
        [&] {
          std::istringstream in(Metrics());
          std::set<std::string> known;
          for (std::string line; std::getline(in, line);) {
            if (line.rfind("goodput_job_info{", 0) != 0 ||
                line.find("accelerator=\"unknown\"") != std::string::npos) {
              continue;
            }
            for (const std::string& job : script.jobs) {
              if (line.find("job_id=\"" + job + "\"") != std::string::npos) {
                known.insert(job);
              }
            }
          }
          return known == script.jobs;
        },
        kTimeoutS);
    return Fail(!ok, "segments of phase 0 in /metrics", dir);
  }

  std::string PrometheusConfig(const std::string& rules) const {
    std::ostringstream c;
    c << "global: {scrape_interval: 1s, evaluation_interval: 1s,"
      << " external_labels: {goodputd_grpc: '" << Server() << "'}}\n"
      << "rule_files:\n";
    for (const char* f :
         {"recording_fleet.yml", "recording_segments.yml", "alerts.yml"}) {
      c << "  - " << rules << "/" << f << "\n";
    }
    c << "scrape_configs:\n"
      << "  - job_name: goodputd\n    static_configs:\n"
      << "      - targets: ['127.0.0.1:" << metrics_port << "']\n"
      << "        labels: {goodputd_grpc: '" << Server() << "'}\n"
      << "  - job_name: goodput-agent\n    static_configs:\n"
      << "      - targets: ['127.0.0.1:" << agent_ports[0]
      << "', '127.0.0.1:" << agent_ports[1] << "']\n";
    return c.str();
  }

  // Prometheus has scraped goodputd's series of phase 0 (all zero) and
  // both agents.
  bool StartPrometheus() {
    std::filesystem::create_directories(dir + "/prometheus");
    prometheus = PrometheusServer::Start(
        PROMETHEUS_PATH, dir + "/prometheus",
        PrometheusConfig(
            std::filesystem::absolute(DASHBOARDS_DIR "/rules").string()),
        kTimeoutS, &error);
    if (!prometheus) return false;
    const int series = CountLines(Metrics(), "goodput_chip_seconds_total{");
    const bool ok = Eventually(
        [&] {
          return prometheus->Value("count(goodput_chip_seconds_total)") ==
                     series &&
                 prometheus->Value("sum(up)") == 3;
        },
        kTimeoutS);
    return Fail(!ok, "first scrape", dir + "/prometheus/prometheus.log");
  }

  // Every event is accepted and every job has ended.
  bool WaitForServer(const Script& script) {
    const bool ok = Eventually(
        [&] {
          if (ScrapedValue(Metrics(),
                           "goodput_ingest_events_total{result="
                           "\"accepted\"}") != script.events) {
            return false;
          }
          std::string out;
          if (Ctl({"--server=" + Server(), "report", "--json"}, &out) != 0) {
            return false;
          }
          report = json::parse(out);
          for (const json& j : report["jobs"]) {
            if (j["state"] != "ENDED") return false;
          }
          return report["jobs"].size() == script.jobs.size();
        },
        kTimeoutS);
    return Fail(!ok, "every event accepted and every job ended", dir);
  }

  // Prometheus scraped the final counters, and the fleet and segment rate1h
  // rule groups were evaluated after that scrape.
  bool WaitForPrometheus() {
    const double total = report["fleet"]["chip_seconds"]["total"];
    double scraped_at = 0;
    bool ok = Eventually(
        [&] {
          if (std::fabs(prometheus->Value("sum(goodput_chip_seconds_total)") -
                        total) > 1e-6 * total) {
            return false;
          }
          scraped_at =
              prometheus->Value("max(timestamp(goodput_chip_seconds_total))");
          return true;
        },
        kTimeoutS);
    for (const char* rule : {"fleet:goodput_mpg:ratio_rate1h",
                             "accelerator:goodput_mpg:ratio_rate1h"}) {
      const std::string evaluated = "min(timestamp(" + std::string(rule) + "))";
      ok = ok &&
           Eventually([&] { return prometheus->Value(evaluated) > scraped_at; },
                      kTimeoutS);
    }
    return Fail(!ok, "final state in Prometheus", dir);
  }

  // Records the first failure; returns !failed.
  bool Fail(bool failed, const std::string& what, const std::string& see) {
    if (failed && error.empty()) error = what + " failed; see " + see;
    return !failed;
  }

  void Run() {
    char tmpl[] = "/tmp/goodput_e2e_XXXXXX";  // short: Unix socket paths
    dir = mkdtemp(tmpl);
    const int64_t now_ns =
        std::chrono::duration_cast<std::chrono::nanoseconds>(
            std::chrono::system_clock::now().time_since_epoch())
            .count();
    const Script script =
        LoadScript(std::string(TESTDATA_DIR) + "/e2e_fleet.jsonl",
                   now_ns - 60'000'000'000);
    (void)(StartGoodputd() && StartAgent(0) && StartAgent(1) &&
           Stream(script, 0) && WaitForSegments(script) && StartPrometheus() &&
           Stream(script, 1) && WaitForServer(script) && WaitForPrometheus());
  }
};

class PrometheusE2eTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    scenario_ = new Scenario();
    scenario_->Run();
  }
  static void TearDownTestSuite() {
    const bool keep = !scenario_->error.empty();
    const std::string dir = scenario_->dir;
    delete scenario_;
    if (!keep && !::testing::UnitTest::GetInstance()->Failed()) {
      std::filesystem::remove_all(dir);
    }
  }
  void SetUp() override { ASSERT_TRUE(s().error.empty()) << s().error; }

  static const Scenario& s() { return *scenario_; }
  static const PrometheusServer& prom() { return *scenario_->prometheus; }
  static const json& fleet() { return scenario_->report["fleet"]; }

  // label value -> value of each series of `expr`.
  static std::map<std::string, double> ByLabel(const std::string& expr,
                                               const std::string& label) {
    std::map<std::string, double> out;
    for (const json& r : prom().Query(expr)) {
      out[r["metric"].value(label, "")] =
          std::stod(r["value"][1].get<std::string>());
    }
    return out;
  }

  static Scenario* scenario_;
};

Scenario* PrometheusE2eTest::scenario_ = nullptr;

TEST_F(PrometheusE2eTest, CounterTotalsEqualReport) {
  const auto by_category =
      ByLabel("sum by (category) (goodput_chip_seconds_total)", "category");
  for (const auto& [category, want] : fleet()["chip_seconds"].items()) {
    if (category == "total") continue;
    ASSERT_TRUE(by_category.count(category)) << category;
    ExpectClose(by_category.at(category), want.get<double>(), category);
  }
  const auto by_job =
      ByLabel("sum by (job_id) (goodput_job_chip_seconds_total)", "job_id");
  int interruptions = 0;
  for (const json& job : s().report["jobs"]) {
    const std::string id = job["job_id"];
    const double want =
        job["seconds"]["total"].get<double>() * job["chips"].get<double>();
    ASSERT_TRUE(by_job.count(id)) << id;
    ExpectClose(by_job.at(id), want, id);
    interruptions += job["interruptions"].get<int>();
  }
  EXPECT_GT(fleet()["chip_seconds"]["lost"].get<double>(), 0);
  EXPECT_EQ(prom().Value("sum(goodput_interruptions_total)"), interruptions);
}

// The ratios of the counters' totals, in PromQL (SPEC rule 10).
TEST_F(PrometheusE2eTest, CounterRatiosEqualReport) {
  const std::string c = "sum(goodput_chip_seconds_total";
  const std::string total = c + ")";
  const std::string unallocated = c + "{category=~\"queued|recovery\"})";
  const std::string productive = c + "{category=\"productive\"})";
  const std::string pg =
      "sum(goodput_ideal_chip_seconds_total) / "
      "sum(goodput_costed_productive_chip_seconds_total)";
  const std::map<std::string, std::string> exprs = {
      {"sg", "1 - " + unallocated + " / " + total},
      {"rg", productive + " / (" + total + " - " + unallocated + ")"},
      {"pg", pg},
      {"goodput", productive + " / " + total}};
  for (const auto& [ratio, expr] : exprs) {
    ExpectClose(prom().Value(expr), fleet()[ratio].get<double>(), ratio);
  }
  EXPECT_LT(fleet()["pg"].get<double>(), 0.6) << "the slow program";
}

// The fleet dashboard's stat panels (fleet:goodput_*:ratio_rate1h) and the
// exporter's 24h window gauges equal the report exactly:
//  - Prometheus's 1h range covers the whole test, so the rate1h rules are
//    the counters' total increases over it times one extrapolation factor
//    (rate() extrapolates to the window's end). The factor is the same for
//    every series because goodputd served all of them first in one scrape,
//    at zero (the script's phase 0 has no counted time; checked below), so
//    it cancels in every ratio.
//  - The exporter's windows are in event time; the script spans 44 minutes
//    of it, so the 24h window holds all of it.
TEST_F(PrometheusE2eTest, FleetPanelsEqualReport) {
  const json series = prom().Query("goodput_chip_seconds_total[1h]");
  ASSERT_FALSE(series.empty());
  json first;  // the first sample's time of the series that grew
  for (const json& s : series) {
    if (s["values"].back()[1] == "0") continue;  // adds nothing
    if (first.is_null()) first = s["values"][0][0];
    EXPECT_EQ(s["values"][0][0], first) << s["metric"].dump();
    EXPECT_EQ(s["values"][0][1], "0") << s["metric"].dump();
  }
  for (const char* r : kRatios) {
    const double want = fleet()[r].get<double>();
    ExpectClose(
        prom().Value(std::string("fleet:goodput_") + r + ":ratio_rate1h"), want,
        std::string(r) + " panel (1h)");
    ExpectClose(prom().Value(std::string("goodput_fleet_") + r +
                             "_ratio{window=\"24h\"}"),
                want, std::string(r) + " exporter gauge (24h)");
  }
}

TEST_F(PrometheusE2eTest, SegmentPanelsEqualReport) {
  const auto panel =
      ByLabel("accelerator:goodput_mpg:ratio_rate1h", "accelerator");
  const json& segments = s().report["segments"]["accelerator"];
  ASSERT_EQ(panel.size(), segments.size());
  for (const auto& [accelerator, report] : segments.items()) {
    ASSERT_TRUE(panel.count(accelerator)) << accelerator;
    ExpectClose(panel.at(accelerator), report["mpg"].get<double>(),
                accelerator);
  }
}

TEST_F(PrometheusE2eTest, EveryPanelQueryReturnsSeries) {
  std::string out;
  const int code = RunCapture(
      {"/usr/bin/python3", std::string(DASHBOARDS_DIR) + "/check_dashboards.py",
       "--promtool=" + std::string(PROMTOOL_PATH),
       "--prometheus=" + prom().url(), "--wait_seconds=30"},
      s().dir + "/check_dashboards.log", &out);
  EXPECT_EQ(code, 0) << out << "see " << s().dir << "/check_dashboards.log";
}

// `command` with its {{ $labels.X }} and {{ $externalLabels.X }} filled in
// from `labels` and `external`.
std::string FillTemplate(std::string command, const json& labels,
                         const json& external) {
  const std::regex var(
      "\\{\\{\\s*\\$(labels|externalLabels)\\.(\\w+)\\s*\\}\\}");
  std::smatch m;
  while (std::regex_search(command, m, var)) {
    const json& from = m[1] == "labels" ? labels : external;
    command.replace(m.position(0), m.length(0), from.value(m[2].str(), "?"));
  }
  return command;
}

// The goodputctl invocations of a command (`a; b`), as argv tails.
std::vector<std::vector<std::string>> GoodputctlCalls(
    const std::string& command) {
  std::vector<std::vector<std::string>> calls;
  std::istringstream parts(command);
  for (std::string part; std::getline(parts, part, ';');) {
    std::istringstream words(part);
    std::vector<std::string> argv;
    for (std::string w; words >> w;) argv.push_back(w);
    if (!argv.empty() && argv[0] == "goodputctl") {
      calls.emplace_back(argv.begin() + 1, argv.end());
    }
  }
  return calls;
}

// Runs one alert's goodputctl call; expects success and output, and the
// job's id in what `job ID` prints.
void RunAlertCall(const Scenario& s, const std::vector<std::string>& args,
                  const std::string& where) {
  std::string out;
  EXPECT_EQ(s.Ctl(args, &out), 0)
      << where << "; see " << s.dir << "/goodputctl.log";
  EXPECT_FALSE(out.empty()) << where;
  auto job = std::find(args.begin(), args.end(), "job");
  if (job != args.end() && job + 1 != args.end()) {
    EXPECT_NE(out.find(*(job + 1)), std::string::npos) << where << ": " << out;
  }
}

// Every alert's command, filled in with the labels of the job with the most
// lost chip time (as Prometheus has them), runs against the live server:
// the on-call's way from an alert to the job and its category.
TEST_F(PrometheusE2eTest, AlertCommandsRunAgainstServer) {
  const json info = prom().Query(
      "topk(1, goodput_job_info * on (job_id) group_left () "
      "sum by (job_id) (goodput_job_chip_seconds_total{category=\"lost\"}))");
  ASSERT_EQ(info.size(), 1u);
  const json labels = info[0]["metric"];
  const json external = {{"goodputd_grpc", s().Server()}};
  int alerts = 0;
  const json rules = prom().GetJson("/api/v1/rules?type=alert");
  for (const json& group : rules["data"]["groups"]) {
    for (const json& rule : group["rules"]) {
      ++alerts;
      const std::string command = FillTemplate(
          rule["annotations"].value("command", ""), labels, external);
      const auto calls = GoodputctlCalls(command);
      EXPECT_FALSE(calls.empty()) << rule["name"] << ": " << command;
      for (const auto& args : calls) {
        RunAlertCall(s(), args,
                     rule["name"].get<std::string>() + ": " + command);
      }
    }
  }
  EXPECT_GE(alerts, 10);
}

}  // namespace
}  // namespace goodput
