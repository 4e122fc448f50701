// Scrapes a real goodputd exporter (prometheus-cpp over HTTP on loopback
// port 0, RocksDB in a temp dir) after ingesting a fleet that exercises
// every family, and fails if docs/metrics.md and the served families (names
// and types) disagree. Also checks the served counters of the ended fleet
// against the server's own report.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "absl/strings/str_split.h"
#include "core/testing/timeline.h"
#include "gtest/gtest.h"
#include "server/goodputd.h"
#include "tests/subprocess.h"

namespace goodput::server {
namespace {

using ::goodput::core::testing::ParseEvents;
using ::goodput::core::testing::T;
using ::goodput::core::testing::Timeline;

// Every job ends but "r", which runs on; every family gets a sample.
constexpr char kFleet[] = R"(
10:00:00 {"job_submitted":{"chips":8,"accelerator":"tpu-v5p","workload":"TRAINING","framework":"jax","labels":{"team":"search"},"step_flops":1e15}}
10:01:00 {"allocation":{"chips":8}}
10:01:00 {"started":{},"attempt":"a1"}
10:01:10 {"step":{"step":1},"attempt":"a1"}
10:01:20 {"step":{"step":2},"attempt":"a1"}
10:01:20 {"step":{"step":2},"attempt":"a1"}
10:01:30 {"checkpoint":{"step":2},"attempt":"a1"}
10:01:30 {"step":{"step":3},"attempt":"a1"}
10:01:40 {"step":{"step":4,"flops":1e17},"attempt":"a1"}
10:01:45 {"interruption":{"reason":"PREEMPTED"}}
10:02:45 {"started":{},"attempt":"a2"}
10:02:45 {"activity":{"kind":"RESTORE","step":2},"attempt":"a2"}
10:02:55 {"activity":{"kind":"TRAINING"},"attempt":"a2"}
10:03:05 {"step":{"step":3},"attempt":"a2"}
10:03:15 {"step":{"step":4},"attempt":"a2"}
10:03:15 {"job_ended":{"outcome":"SUCCEEDED"}}
10:00:00 {"job_id":"s","job_submitted":{"chips":4,"accelerator":"h100","workload":"SERVING"}}
10:00:00 {"job_id":"s","started":{}}
10:00:20 {"job_id":"s","step":{"step":10,"idle_seconds":5}}
10:00:40 {"job_id":"s","interruption":{"reason":"MAINTENANCE","notice":true}}
10:00:50 {"job_id":"s","step":{"step":20}}
10:01:30 {"job_id":"s","job_ended":{"outcome":"SUCCEEDED"}}
10:00:00 {"job_id":"r","job_submitted":{"chips":2,"accelerator":"tpu-v5p","workload":"TRAINING"}}
10:00:00 {"job_id":"r","started":{}}
10:00:10 {"job_id":"r","host":"h3","step":{"step":1}}
10:03:00 {"job_id":"r","host":"h2","step":{"step":2}}
10:03:30 {"job_id":"r","host":"h2","step":{"step":3}}
10:00:00 {"host":"h1","heartbeat":{"chips":16,"accelerator":"tpu-v5p"}}
10:02:00 {"host":"h1","heartbeat":{"chips":16,"accelerator":"tpu-v5p"}}
10:03:30 {"host":"h1","heartbeat":{"chips":16,"accelerator":"tpu-v5p"}}
)";

// family name -> type, from "# TYPE name type" lines.
std::map<std::string, std::string> ServedFamilies(const std::string& text) {
  std::map<std::string, std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    std::vector<std::string> f = absl::StrSplit(line, ' ');
    if (f.size() == 4 && f[0] == "#" && f[1] == "TYPE") out[f[2]] = f[3];
  }
  return out;
}

// family name -> type, from the tables of docs/metrics.md: rows whose
// first cell lists `goodput_...` names and whose second is the type.
std::map<std::string, std::string> DocumentedFamilies() {
  std::ifstream in(std::string(GOODPUT_SOURCE_DIR) + "/docs/metrics.md");
  EXPECT_TRUE(in.good());
  std::map<std::string, std::string> out;
  const std::regex name("`(goodput_[a-z0-9_]+)`");
  for (std::string line; std::getline(in, line);) {
    std::vector<std::string> cells = absl::StrSplit(line, '|');
    if (cells.size() < 4) continue;
    std::string type = cells[2];
    type.erase(std::remove(type.begin(), type.end(), ' '), type.end());
    for (std::sregex_iterator it(cells[1].begin(), cells[1].end(), name), end;
         it != end; ++it) {
      out[(*it)[1]] = type;
    }
  }
  return out;
}

// Sum of the samples of `name` whose label text contains every `match`.
double Sum(const std::string& text, const std::string& name,
           const std::vector<std::string>& match = {}) {
  double sum = 0;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(name, 0) != 0 ||
        (line[name.size()] != '{' && line[name.size()] != ' ')) {
      continue;
    }
    bool all = true;
    for (const std::string& m : match) all = all && line.find(m) != line.npos;
    if (all) sum += std::stod(line.substr(line.rfind(' ') + 1));
  }
  return sum;
}

// "name{labels}" -> value of every sample of a counter or histogram.
std::map<std::string, double> MonotoneSamples(const std::string& text) {
  const auto families = ServedFamilies(text);
  std::map<std::string, double> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    const size_t space = line.rfind(' ');
    const std::string series = line.substr(0, space);
    std::string name = series.substr(0, series.find('{'));
    for (const char* suffix : {"_bucket", "_count", "_sum"}) {
      const std::string s(suffix);
      if (!families.count(name) && name.size() > s.size() &&
          name.compare(name.size() - s.size(), s.size(), s) == 0) {
        name.resize(name.size() - s.size());
      }
    }
    auto it = families.find(name);
    if (it == families.end() ||
        (it->second != "counter" && it->second != "histogram")) {
      continue;
    }
    out[series] = std::stod(line.substr(space + 1));
  }
  return out;
}

// Checks that the ended jobs "s" and "j" of `report` count in the segment
// counters of `text` exactly once; returns how many were checked.
int CheckEndedJobsCounted(const core::FleetReport& report,
                          const std::string& text) {
  const std::map<std::string, std::string> segment_of = {
      {"s", "accelerator=\"h100\""}, {"j", "label_team=\"search\""}};
  int checked = 0;
  for (const core::JobReport& job : report.jobs) {
    auto it = segment_of.find(job.job_id);
    if (it == segment_of.end()) continue;
    EXPECT_EQ(job.state, core::JobStateKind::kEnded) << job.job_id;
    ++checked;
    for (int c = 0; c < core::kNumCategories; ++c) {
      const std::string category = core::CategoryName(core::Category(c));
      EXPECT_NEAR(Sum(text, "goodput_chip_seconds_total",
                      {it->second, "category=\"" + category + "\""}),
                  job.nanos[c] * 1e-9 * job.chips, 1e-6)
          << job.job_id << " " << category;
    }
  }
  return checked;
}

class MetricsDocTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/goodput-metrics-doc-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    Start();
  }
  // Starts goodputd on dir_ (again after a restart).
  void Start() {
    server_.reset();
    GoodputdOptions options;
    options.data_dir = dir_;
    options.grpc_address = "127.0.0.1:0";
    options.metrics_address = "127.0.0.1:0";
    options.metrics.segment_labels = {"team"};
    options.metrics.ended_job_grace_ns = grace_ns_;
    auto d = Goodputd::Start(options, &clock_);
    ASSERT_TRUE(d.ok()) << d.status();
    server_ = *std::move(d);
    ASSERT_GT(server_->metrics_port(), 0);
  }
  void TearDown() override {
    server_.reset();
    std::filesystem::remove_all(dir_);
  }

  void Send(const std::vector<v1::Event>& events, uint64_t seq,
            int rejections = 0) {
    v1::Batch batch;
    batch.set_agent_id("agent-1");
    batch.set_sequence(seq);
    for (const v1::Event& e : events) *batch.add_events() = e;
    auto ack = server_->ingestor()->Ingest(batch);
    ASSERT_TRUE(ack.ok());
    EXPECT_EQ(ack->rejections_size(), rejections) << ack->DebugString();
  }

  // The fleet, plus a rejected event, a redelivered batch, a late event.
  void IngestFleet() {
    Send(ParseEvents(Timeline(kFleet)), 1);
    Send(ParseEvents(Timeline(R"(
10:05:00 {"job_id":"s","step":{"step":30}}
10:00:05 {"job_id":"r","activity":{"kind":"INIT"}}
)")),
         2, 1);  // s ended: a dead letter; r's event is late: a rebuild
    Send(ParseEvents(Timeline(kFleet)), 1);  // a duplicate batch
  }

  std::string Scrape() {
    return testing::HttpGet(server_->metrics_port(), "/metrics");
  }

  std::string dir_;
  int64_t grace_ns_ = core::MetricsOptions().ended_job_grace_ns;
  FakeClock clock_{T("2026-11-22T12:00:00Z")};
  std::unique_ptr<Goodputd> server_;
};

// Issue 18 part 4: r (running, with series) reported from h3 and h2 (its
// newest event, still within the lateness, is not applied yet); jobs
// without a host have no sample.
TEST_F(MetricsDocTest, JobHostInfoNamesTheHostsOfJobsWithSeries) {
  IngestFleet();
  const std::string text = Scrape();
  EXPECT_EQ(Sum(text, "goodput_job_host_info", {"job_id=\"r\""}), 2);
  EXPECT_EQ(Sum(text, "goodput_job_host_info", {"host=\"h3\""}), 1);
  EXPECT_EQ(Sum(text, "goodput_job_host_info", {"job_id=\"s\""}), 0);
}

TEST_F(MetricsDocTest, ServedFamiliesAreExactlyTheDocumentedOnes) {
  IngestFleet();
  // An elastic job at half its chips (rule 14's slice efficiency gauges
  // have samples only with one): 20 s all-allocated at 4 of 8 chips.
  Send(ParseEvents(Timeline(R"(
10:00:00 {"job_id":"e","job_submitted":{"chips":8,"min_chips":4,"accelerator":"tpu-v5p","workload":"TRAINING"}}
10:00:00 {"job_id":"e","allocation":{"chips":4}}
10:00:00 {"job_id":"e","started":{}}
10:00:00 {"job_id":"e","activity":{"kind":"COMPILE"}}
10:00:10 {"job_id":"e","activity":{"kind":"TRAINING"}}
10:00:20 {"job_id":"e","step":{"step":1}}
10:03:30 {"job_id":"e","step":{"step":2}}
)")),
       3);
  const std::string text = Scrape();
  EXPECT_EQ(Sum(text, "goodput_job_slice_efficiency_ratio",
                {"job_id=\"e\"", "window=\"5m\""}),
            0.5);
  ASSERT_FALSE(text.empty());
  const auto served = ServedFamilies(text);
  const auto documented = DocumentedFamilies();
  ASSERT_GT(documented.size(), 40u);
  for (const auto& [name, type] : served) {
    if (name.rfind("goodput_", 0) != 0) continue;  // prometheus-cpp's own
    auto it = documented.find(name);
    if (it == documented.end()) {
      ADD_FAILURE() << name << " is served but not in docs/metrics.md";
    } else {
      EXPECT_EQ(it->second, type) << name << "'s type";
    }
  }
  for (const auto& [name, type] : documented) {
    // Served only with --cluster (tests/cluster_mode_test scrapes them).
    if (name.rfind("goodput_cluster_", 0) == 0) continue;
    // Served only for TRAINING jobs with checkpoint advice (>= 3
    // interruptions), which this fleet has none of; FleetMetricsTest.
    // CheckpointAdviceGauges covers them.
    if (name.rfind("goodput_job_checkpoint_interval_", 0) == 0) continue;
    EXPECT_TRUE(served.count(name)) << name << " is documented, not served";
  }
}

TEST_F(MetricsDocTest, EndedJobsCountersEqualTheReportTimesChips) {
  IngestFleet();
  const std::string text = Scrape();
  auto report =
      server_->ingestor()->Report(T("2026-11-22T10:03:30Z"), std::nullopt);
  ASSERT_TRUE(report.ok());
  for (const core::JobReport& job : report->jobs) {
    if (job.state != core::JobStateKind::kEnded) continue;
    for (int c = 0; c < core::kNumCategories; ++c) {
      const std::string category = core::CategoryName(core::Category(c));
      EXPECT_NEAR(Sum(text, "goodput_job_chip_seconds_total",
                      {"job_id=\"" + job.job_id + "\"",
                       "category=\"" + category + "\""}),
                  job.nanos[c] * 1e-9 * job.chips, 1e-6)
          << job.job_id << " " << category;
    }
  }
  EXPECT_EQ(Sum(text, "goodput_ingest_batches_total", {"duplicate"}), 1);
  // One agent, one batch at a time: a write per stored batch.
  EXPECT_EQ(Sum(text, "goodput_ingest_store_writes_total"),
            Sum(text, "goodput_ingest_batches_total", {"stored"}));
  EXPECT_EQ(Sum(text, "goodput_dead_letters_total"), 1);
  EXPECT_EQ(Sum(text, "goodput_ingest_late_events_total"), 1);
  EXPECT_EQ(Sum(text, "goodput_duplicate_events_total"), 1);
  EXPECT_EQ(Sum(text, "goodput_interruptions_total", {"PREEMPTED"}), 1);
  EXPECT_EQ(Sum(text, "goodput_jobs", {"RUNNING"}), 1);
  EXPECT_NEAR(Sum(text, "goodput_chip_seconds_total",
                  {"label_team=\"search\"", "category=\"queued\""}),
              60 * 8, 1e-9);
}

// After a restart the ended jobs are held as their snapshots alone; their
// settled time still reaches the fleet and segment counters, once.
TEST_F(MetricsDocTest, EndedJobsCountAfterARestart) {
  IngestFleet();
  auto report =
      server_->ingestor()->Report(T("2026-11-22T10:03:30Z"), std::nullopt);
  ASSERT_TRUE(report.ok());
  Start();
  ASSERT_NE(server_, nullptr);
  Scrape();  // a second scrape must not count the snapshots again
  const std::string text = Scrape();
  EXPECT_EQ(CheckEndedJobsCounted(*report, text), 2);
  EXPECT_EQ(Sum(text, "goodput_jobs", {"ENDED"}), 2);
}

// Ended jobs past --ended_job_grace leave memory (docs/delivery.md,
// "Retention"): the counters keep them, never decrease, and count nothing
// twice; the same after a restart, which evicts them again at recovery.
TEST_F(MetricsDocTest, CountersKeepEvictedJobs) {
  IngestFleet();
  const int64_t as_of = T("2026-11-22T10:03:30Z");
  auto report = server_->ingestor()->Report(as_of, std::nullopt);
  ASSERT_TRUE(report.ok());
  const std::string before = Scrape();
  EXPECT_EQ(CheckEndedJobsCounted(*report, before), 2);
  // s and j ended more than 10 s before the newest event (10:03:30).
  server_->ingestor()->set_ended_job_grace(10 * core::kNanosPerSecond);
  ASSERT_TRUE(server_->ingestor()->EvictEndedJobs().ok());
  EXPECT_EQ(server_->ingestor()->stats().evicted_jobs, 2);
  Scrape();
  const std::string after = Scrape();
  const auto was = MonotoneSamples(before), now = MonotoneSamples(after);
  ASSERT_GT(was.size(), 50u);
  for (const auto& [series, value] : was) {
    if (series.find("job_id=") != std::string::npos) continue;  // per job
    auto it = now.find(series);
    ASSERT_NE(it, now.end()) << series << " is gone";
    EXPECT_GE(it->second, value) << series;
  }
  EXPECT_EQ(CheckEndedJobsCounted(*report, after), 2);
  EXPECT_EQ(Sum(after, "goodput_jobs", {"ENDED"}), 2);
  EXPECT_EQ(Sum(after, "goodput_jobs_in_memory", {"evicted"}), 2);
  EXPECT_EQ(Sum(after, "goodput_jobs_in_memory", {"live"}), 1);
  auto evicted = server_->ingestor()->Report(as_of, std::nullopt);
  ASSERT_TRUE(evicted.ok());
  EXPECT_EQ(evicted->jobs.size(), report->jobs.size());

  grace_ns_ = 10 * core::kNanosPerSecond;
  Start();
  ASSERT_NE(server_, nullptr);
  // A restart does not load them, so evicts none again: their totals come
  // from their record (storage/KEY_LAYOUT.md, "Evicted jobs").
  EXPECT_EQ(server_->ingestor()->stats().evicted_jobs, 0);
  Scrape();
  const std::string restarted = Scrape();
  EXPECT_EQ(CheckEndedJobsCounted(*report, restarted), 2);
  EXPECT_EQ(Sum(restarted, "goodput_jobs", {"ENDED"}), 2);
  EXPECT_EQ(Sum(restarted, "goodput_jobs_in_memory", {"evicted"}), 2);
}

}  // namespace
}  // namespace goodput::server
