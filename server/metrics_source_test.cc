// MetricsSource over a MemoryEventStore and a FakeClock. It scrapes the
// live state as of one cut, a few jobs per hold
// of the ingest lock (issue 12 item 4): with one job per step and batches
// sent between two steps (the fault hook's "scrape_walk"), a scrape
// exports what a scrape at its cut exports, and the next one what an
// uninterrupted one does. And a job that waits for its rebuild at a scrape
// is neither dropped nor counted twice. And the families it adds from the
// ingest path's counters (IngestStats).
#include "server/metrics_source.h"

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/testing/timeline.h"
#include "gtest/gtest.h"
#include "server/testing/walk_jobs.h"
#include "storage/memory_event_store.h"

namespace goodput::server {
namespace {

using ::goodput::core::testing::JobEvents;
using ::goodput::core::testing::ParseEvents;
using ::goodput::core::testing::Timeline;

constexpr int64_t kLateness = 5'000'000'000;
constexpr int64_t kNow = (1795341600LL + 360) * core::kNanosPerSecond;

// The sum of `name`'s samples whose labels include `match`.
double Sum(const std::vector<core::MetricFamilyData>& families,
           const std::string& name, const core::MetricLabels& match = {}) {
  double sum = 0;
  for (const core::MetricFamilyData& f : families) {
    if (f.name != name) continue;
    for (const core::MetricSample& s : f.samples) {
      bool all = true;
      for (const auto& m : match) {
        all = all &&
              std::find(s.labels.begin(), s.labels.end(), m) != s.labels.end();
      }
      if (all) sum += s.value;
    }
  }
  return sum;
}

class MetricsScrapeTest : public ::testing::Test {
 protected:
  // Jobs e (ended), d, b and c (running), with both sources scraping after
  // each, so that the scrape's id order is not the order they came in.
  MetricsScrapeTest() {
    ingestor_.set_ended_job_grace(0);  // on demand: EvictEndedJobs
    EXPECT_TRUE(ingestor_.Recover().ok());
    Send(testing::EndedWalkJob());
    for (const char* job : {"d", "b", "c"}) {
      (void)reference_.Collect();
      (void)walked_.Collect();
      Send(testing::RunningWalkJob(job));
    }
    (void)reference_.Collect();
    (void)walked_.Collect();
    ingestor_.set_report_walk_jobs(1);
  }

  // The goodput families (core::FleetMetrics'), one line per sample with
  // its value to the last bit; the ingest health families, read after the
  // scrape, are left out.
  std::string Goodput(const std::vector<core::MetricFamilyData>& families) {
    std::set<std::string> names;
    for (const auto& f : core::FleetMetrics(&config_, {}).Families()) {
      names.insert(f.name);
    }
    std::string out;
    for (const core::MetricFamilyData& f : families) {
      if (!names.count(f.name)) continue;
      for (const core::MetricSample& s : f.samples) {
        absl::StrAppend(&out, f.name);
        for (const auto& [k, v] : s.labels) {
          absl::StrAppend(&out, ",", k, "=", v);
        }
        absl::StrAppend(&out, " ", absl::StrFormat("%a", s.value), "\n");
      }
    }
    return out;
  }

  v1::Ack Send(const std::vector<v1::Event>& events) {
    v1::Batch batch;
    batch.set_agent_id("agent-1");
    batch.set_sequence(++seq_);
    for (const v1::Event& e : events) *batch.add_events() = e;
    auto ack = ingestor_.Ingest(batch);
    EXPECT_TRUE(ack.ok()) << ack.status();
    return ack.ok() ? *ack : v1::Ack();
  }
  void Send1(const std::string& job, const std::string& line) {
    EXPECT_EQ(Send(JobEvents(job, line)).accepted(), 1u);
  }

  // After checkpoints of b, c and d, walked_ scrapes with `between` run at
  // the first "scrape_walk" (b scraped; c, d and e not yet): it exports
  // what reference_ exported just before; then reference_ exports something
  // else (so `between` changed what a scrape sees), and walked_ the same.
  void ExpectTheCutsScrape(const std::function<void()>& between) {
    // Changed since the last scrapes: the scrape reads their trackers.
    for (const char* job : {"b", "c", "d"}) {
      Send1(job, R"(10:05:40 {"checkpoint":{"step":2}})");
    }
    const std::string before = Goodput(reference_.Collect());
    int steps = 0;
    ingestor_.set_fault_hook([&](const char* point) {
      if (std::string(point) == "scrape_walk" && steps++ == 0) between();
    });
    const std::string got = Goodput(walked_.Collect());
    ingestor_.set_fault_hook(nullptr);
    EXPECT_EQ(steps, 3);  // four jobs, one per step
    EXPECT_EQ(got, before);
    EXPECT_EQ(live_.walk_count(), 0u);
    const std::string after = Goodput(reference_.Collect());
    EXPECT_NE(after, before);
    EXPECT_EQ(Goodput(walked_.Collect()), after);
  }

  core::Config config_;
  storage::MemoryEventStore store_;
  FakeClock clock_{kNow};
  LiveState live_{&config_, kLateness, &store_};
  Ingestor ingestor_{&store_, &live_, &clock_, codec::ValidationLimits()};
  // Two exporters of one server: reference_ is never interrupted.
  MetricsSource reference_{&config_, {}, &ingestor_, &clock_};
  MetricsSource walked_{&config_, {}, &ingestor_, &clock_};
  uint64_t seq_ = 0;
};

TEST_F(MetricsScrapeTest, AStepOfAJobNotScrapedYetIsNotInTheScrape) {
  ExpectTheCutsScrape([&] {
    Send1("c", R"(10:05:50 {"step":{"step":3}})");
    Send1("b", R"(10:05:50 {"step":{"step":3}})");  // scraped already
  });
}

TEST_F(MetricsScrapeTest, AJobAddedDuringTheScrapeIsNotInIt) {
  ExpectTheCutsScrape([&] {
    Send1("bz",
          R"(10:05:40 {"job_submitted":{"chips":2,"workload":"TRAINING"}})");
  });
}

// A preemption 3.5 min older than d's newest event: d is rebuilt in the
// same batch, after the scrape kept a copy of its tracker.
TEST_F(MetricsScrapeTest, ALateEventRebuildsAJobAfterTheScrapeKeptIt) {
  const int64_t rebuilds = live_.stats().late_rebuilds;
  ExpectTheCutsScrape([&] {
    Send1("d", R"(10:02:00 {"interruption":{"reason":"PREEMPTED"}})");
  });
  EXPECT_EQ(live_.stats().late_rebuilds, rebuilds + 1);
}

// e leaves memory for the evicted groups between two steps: the scrape
// takes it as held at the cut (the groups as they were then), not twice.
TEST_F(MetricsScrapeTest, AJobEvictedDuringTheScrapeCountsOnce) {
  ExpectTheCutsScrape([&] {
    ASSERT_TRUE(ingestor_.EvictEndedJobs().ok());
    ASSERT_EQ(ingestor_.stats().evicted_jobs, 1);
    Send1("d", R"(10:05:50 {"step":{"step":3}})");  // so that `after` differs
  });
}

// One batch with late events of c and d (repeats of their first activity, so
// their time stays as it was): the first rebuild takes the batch's credit
// (LiveState::RunRebuilds), the other job waits in the queue through a
// scrape. It keeps its series, and its time counts once.
TEST_F(MetricsScrapeTest, AJobWaitingForItsRebuildIsCountedOnce) {
  for (const char* job : {"c", "d"}) {  // recognized time: checkpoints
    Send1(job, R"(10:05:40 {"checkpoint":{"step":2}})");
    Send1(job, R"(10:05:50 {"step":{"step":3}})");
  }
  // More than e's 4 chips x 120 s: c and d have counted time.
  EXPECT_GT(Sum(walked_.Collect(), "goodput_chip_seconds_total"), 480);
  std::vector<v1::Event> late =
      JobEvents("c", R"(10:00:00 {"activity":{"kind":"TRAINING"}})");
  for (v1::Event& e :
       JobEvents("d", R"(10:00:00 {"activity":{"kind":"TRAINING"}})")) {
    late.push_back(e);
  }
  ASSERT_EQ(Send(late).accepted(), 2u);
  ASSERT_EQ(live_.stats().rebuilds_pending, 1);
  const auto waiting = walked_.Collect();
  EXPECT_EQ(Sum(waiting, "goodput_jobs"), 4);
  EXPECT_EQ(Sum(waiting, "goodput_job_info"), 4);
  EXPECT_EQ(ingestor_.DrainRebuilds(1'000'000), 0);
  const auto rebuilt = walked_.Collect();
  MetricsSource fresh(&config_, {}, &ingestor_, &clock_);
  const auto want = fresh.Collect();
  const double total = Sum(want, "goodput_chip_seconds_total");
  EXPECT_NEAR(Sum(rebuilt, "goodput_chip_seconds_total"), total, 1e-6 * total);
  EXPECT_EQ(Sum(rebuilt, "goodput_jobs"), 4);
}

constexpr int64_t kLaterNow = (1795341600LL + 5 * 3600) * core::kNanosPerSecond;

// op -> value of goodput_store_maintenance_failures_total.
std::map<std::string, double> MaintenanceFailures(
    const std::vector<core::MetricFamilyData>& families) {
  std::map<std::string, double> out;
  for (const core::MetricFamilyData& f : families) {
    if (f.name != "goodput_store_maintenance_failures_total") continue;
    EXPECT_EQ(f.kind, core::MetricKind::kCounter);
    for (const core::MetricSample& s : f.samples) {
      EXPECT_EQ(s.labels.size(), 1u);
      if (s.labels.size() != 1 || s.labels[0].first != "op") continue;
      out[s.labels[0].second] = s.value;
    }
  }
  return out;
}

// Issue 12: every op has a sample from the first scrape (0 until hit), and
// a failed eviction write (the job ended more than the lateness before the
// newest event) counts in op="evict" alone, once.
TEST(MetricsSourceTest, StoreMaintenanceFailuresHaveEveryOpAndCountTheirOwn) {
  core::Config config;
  storage::MemoryEventStore store;
  LiveState live(&config, kLateness, &store);
  FakeClock clock(kLaterNow);
  Ingestor ingestor(&store, &live, &clock, codec::ValidationLimits());
  ingestor.set_ended_job_grace(0);
  ASSERT_TRUE(ingestor.Recover().ok());
  MetricsSource metrics(&config, {}, &ingestor, &clock);
  std::map<std::string, double> want = {{"evict", 0},
                                        {"snapshot", 0},
                                        {"retire", 0},
                                        {"retire_evicted", 0},
                                        {"retire_heartbeats", 0}};
  EXPECT_EQ(MaintenanceFailures(metrics.Collect()), want);

  v1::Batch batch;
  batch.set_agent_id("agent-1");
  batch.set_sequence(1);
  for (const v1::Event& e : ParseEvents(Timeline(R"(
10:00:00 {"started":{}}
10:00:20 {"job_ended":{"outcome":"SUCCEEDED"}}
10:01:00 {"job_id":"r","started":{}}
10:02:00 {"job_id":"r","step":{"step":1}}
)"))) {
    *batch.add_events() = e;
  }
  ASSERT_TRUE(ingestor.Ingest(batch).ok());
  store.FailNextWrite(absl::UnavailableError("disk on fire"));
  ASSERT_FALSE(ingestor.EvictEndedJobs().ok());
  want["evict"] = 1;
  EXPECT_EQ(MaintenanceFailures(metrics.Collect()), want);
  ASSERT_TRUE(ingestor.EvictEndedJobs().ok());
  EXPECT_EQ(MaintenanceFailures(metrics.Collect()), want);
}

// goodput_job_host_info reads the series jobs' hosts 256 jobs, or 4096
// hosts, per hold of the ingest lock. `jobs` jobs (j000 on h000-0, ...),
// each on `hosts` hosts, then a step without a host: every job has each
// of its hosts once.
void ExpectHostInfoOfJobsWithHosts(int jobs, int hosts) {
  core::Config config;
  storage::MemoryEventStore store;
  LiveState live(&config, kLateness, &store);
  FakeClock clock(kNow);
  Ingestor ingestor(&store, &live, &clock, codec::ValidationLimits());
  ASSERT_TRUE(ingestor.Recover().ok());
  v1::Batch batch;
  batch.set_agent_id("agent-1");
  batch.set_sequence(1);
  std::string lines;
  for (int i = 0; i < jobs; ++i) {
    for (int h = 0; h < hosts; ++h) {
      absl::StrAppendFormat(
          &lines, "10:00:00 {\"job_id\":\"j%03d\",\"host\":\"h%03d-%d\",%s}\n",
          i, i, h,
          h == 0 ? "\"started\":{}" : "\"activity\":{\"kind\":\"INIT\"}");
    }
  }
  for (int i = 0; i < jobs; ++i) {  // applies the ones above (lateness)
    absl::StrAppendFormat(
        &lines, "10:01:00 {\"job_id\":\"j%03d\",\"step\":{\"step\":1}}\n", i);
  }
  for (const v1::Event& e : ParseEvents(Timeline(lines))) {
    *batch.add_events() = e;
  }
  ASSERT_TRUE(ingestor.Ingest(batch).ok());
  MetricsSource metrics(&config, {}, &ingestor, &clock);
  const std::vector<core::MetricFamilyData> got = metrics.Collect();
  EXPECT_EQ(Sum(got, "goodput_job_host_info"), jobs * hosts);
  for (int i = 0; i < jobs; ++i) {
    const std::string id = absl::StrFormat("j%03d", i);
    EXPECT_EQ(Sum(got, "goodput_job_host_info", {{"job_id", id}}), hosts) << id;
    EXPECT_EQ(Sum(got, "goodput_job_host_info",
                  {{"job_id", id},
                   {"host", absl::StrFormat("h%03d-%d", i, hosts - 1)}}),
              1)
        << id;
  }
}

TEST(MetricsSourceTest, HostInfoOfMoreJobsThanOneHoldReads) {
  ExpectHostInfoOfJobsWithHosts(/*jobs=*/300, /*hosts=*/1);
}

TEST(MetricsSourceTest, HostInfoOfMoreHostsThanOneHoldReads) {
  ExpectHostInfoOfJobsWithHosts(/*jobs=*/5, /*hosts=*/1500);
}

}  // namespace
}  // namespace goodput::server
