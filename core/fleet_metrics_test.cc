// FleetMetrics over scripted and random fleets: counters once every job
// has ended equal the report's seconds x chips, window ratios equal the
// ratios of the counters' increases, the per-job cap, and rebuild clamps.
#include "core/fleet_metrics.h"

#include <cmath>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/checkpoint_advice.h"
#include "core/event_order.h"
#include "core/fleet_tracker.h"
#include "core/testing/random_fleet.h"
#include "core/testing/timeline.h"
#include "gtest/gtest.h"

namespace goodput::core {
namespace {

using ::goodput::core::testing::Job;
using ::goodput::core::testing::ParseEvents;
using ::goodput::core::testing::T;
using ::goodput::core::testing::Timeline;

// Sum of `name`'s samples whose labels include every pair of `match`;
// nullopt if no sample matches.
std::optional<double> Value(const std::vector<MetricFamilyData>& families,
                            const std::string& name,
                            const MetricLabels& match = {}) {
  std::optional<double> sum;
  for (const MetricFamilyData& f : families) {
    if (f.name != name) continue;
    for (const MetricSample& s : f.samples) {
      bool all = true;
      for (const auto& m : match) {
        all = all &&
              std::find(s.labels.begin(), s.labels.end(), m) != s.labels.end();
      }
      if (all) sum = sum.value_or(0) + s.value;
    }
  }
  return sum;
}

std::vector<uint32_t> ApplyOrder(const std::vector<v1::Event>& events) {
  std::vector<uint32_t> order(events.size());
  for (uint32_t i = 0; i < order.size(); ++i) order[i] = i;
  SortForApply(events, &order);
  return order;
}

// Applies the timeline `text` (see Timeline) to `fleet` in apply order.
void ApplyAll(const std::string& text, FleetTracker* fleet) {
  const std::vector<v1::Event> events = ParseEvents(Timeline(text));
  for (uint32_t i : ApplyOrder(events)) {
    ASSERT_TRUE(fleet->Apply(events[i]).ok());
  }
}

void Scrape(const FleetTracker& fleet, const std::vector<std::string>& ids,
            int64_t now_ns, FleetMetrics* metrics) {
  metrics->Begin();
  for (const std::string& id : ids) {
    if (const JobTracker* job = fleet.FindJob(id)) metrics->UpdateJob(*job);
  }
  metrics->Finish({}, now_ns);
}

constexpr char kFleet[] = R"(
10:00:00 {"job_submitted":{"chips":8,"accelerator":"tpu-v5p","framework":"jax","step_flops":1e15}}
10:01:00 {"allocation":{"chips":8}}
10:01:00 {"started":{}}
10:01:10 {"step":{"step":1}}
10:01:20 {"step":{"step":2}}
10:01:30 {"checkpoint":{"step":2}}
10:01:30 {"step":{"step":3}}
10:01:40 {"step":{"step":4}}
10:01:45 {"interruption":{"reason":"PREEMPTED"}}
10:02:45 {"started":{}}
10:02:45 {"activity":{"kind":"RESTORE","step":2}}
10:02:55 {"activity":{"kind":"TRAINING"}}
10:03:05 {"step":{"step":3}}
10:03:05 {"job_ended":{"outcome":"SUCCEEDED"}}
10:00:00 {"job_id":"s","job_submitted":{"chips":4,"accelerator":"h100","workload":"SERVING"}}
10:00:00 {"job_id":"s","started":{}}
10:00:20 {"job_id":"s","step":{"step":10,"idle_seconds":5}}
10:00:40 {"job_id":"s","interruption":{"reason":"MAINTENANCE","notice":true}}
10:00:50 {"job_id":"s","step":{"step":20}}
10:01:30 {"job_id":"s","job_ended":{"outcome":"SUCCEEDED"}}
10:00:00 {"job_id":"q","job_submitted":{"chips":600}}
10:00:30 {"job_id":"q","job_ended":{"outcome":"CANCELLED"}}
)";

TEST(FleetMetricsTest, CostAndEnergyCountersPriceChipSecondsByCatalog) {
  Config config;
  FleetTracker fleet(&config);
  ApplyAll(kFleet, &fleet);
  FleetMetrics metrics(&config, MetricsOptions());
  Scrape(fleet, {"j", "s", "q"}, T("2026-11-22T10:03:05Z"), &metrics);
  const auto families = metrics.Families();
  const FleetReport report = fleet.Report(T("2026-11-22T10:03:05Z"));
  for (int c = 0; c < kNumCategories; ++c) {
    const std::string name = CategoryName(Category(c));
    EXPECT_NEAR(
        *Value(families, "goodput_cost_usd_total", {{"category", name}}),
        report.fleet.cost_usd[c], 1e-9)
        << name;
  }
  // j (tpu-v5p, example $4.2 and 300 W) lost 25 s x 8 chips = 200
  // chip-seconds: $4.2 x 200 / 3600 and 300 W x 200 s / 3.6e6 kWh.
  EXPECT_NEAR(*Value(families, "goodput_cost_usd_total",
                     {{"accelerator", "tpu-v5p"}, {"category", "lost"}}),
              4.2 * 200 / 3600, 1e-12);
  EXPECT_NEAR(*Value(families, "goodput_energy_kwh_total",
                     {{"accelerator", "tpu-v5p"}, {"category", "lost"}}),
              300.0 * 200 / 3.6e6, 1e-12);
  // q (no accelerator: not in the catalog) has no priced series; queued
  // time draws no power.
  EXPECT_FALSE(
      Value(families, "goodput_cost_usd_total", {{"accelerator", "unknown"}}));
  EXPECT_FALSE(
      Value(families, "goodput_energy_kwh_total", {{"category", "queued"}}));
}

TEST(FleetMetricsTest, CountersOfAnEndedFleetEqualReportSecondsTimesChips) {
  Config config;
  FleetTracker fleet(&config);
  ApplyAll(kFleet, &fleet);
  FleetMetrics metrics(&config, MetricsOptions());
  Scrape(fleet, {"j", "s", "q"}, T("2026-11-22T10:03:05Z"), &metrics);
  const auto families = metrics.Families();
  const FleetReport report = fleet.Report(T("2026-11-22T10:03:05Z"));
  for (int c = 0; c < kNumCategories; ++c) {
    const std::string name = CategoryName(Category(c));
    EXPECT_NEAR(
        *Value(families, "goodput_chip_seconds_total", {{"category", name}}),
        report.fleet.chip_seconds[c], 1e-6)
        << name;
    for (const JobReport& job : report.jobs) {
      EXPECT_NEAR(*Value(families, "goodput_job_chip_seconds_total",
                         {{"job_id", job.job_id}, {"category", name}}),
                  job.nanos[c] * 1e-9 * job.chips, 1e-6)
          << job.job_id << " " << name;
    }
  }
  EXPECT_NEAR(*Value(families, "goodput_ideal_chip_seconds_total"),
              report.fleet.ideal_chip_seconds, 1e-9);
  EXPECT_NEAR(*Value(families, "goodput_costed_productive_chip_seconds_total"),
              report.fleet.costed_productive_chip_seconds, 1e-9);
  // Segments: j is tpu-v5p/TRAINING/jax/<=8; s is h100/SERVING; q >512.
  EXPECT_NEAR(*Value(families, "goodput_chip_seconds_total",
                     {{"accelerator", "tpu-v5p"}, {"category", "lost"}}),
              25 * 8, 1e-9);
  EXPECT_NEAR(*Value(families, "goodput_chip_seconds_total",
                     {{"size", ">512"}, {"category", "queued"}}),
              30 * 600, 1e-9);
  EXPECT_EQ(*Value(families, "goodput_interruptions_total",
                   {{"reason", "PREEMPTED"}}),
            1);
  EXPECT_EQ(*Value(families, "goodput_interruption_notices_total",
                   {{"workload", "SERVING"}, {"reason", "MAINTENANCE"}}),
            1);
  EXPECT_EQ(*Value(families, "goodput_jobs", {{"state", "ENDED"}}), 3);
  EXPECT_EQ(*Value(families, "goodput_job_steps_total", {{"job_id", "j"}}), 3);
  EXPECT_EQ(*Value(families, "goodput_job_series"), 3);
  EXPECT_EQ(*Value(families, "goodput_at_risk_chip_seconds"), 0);
  // No elastic job: no slice efficiency.
  EXPECT_FALSE(Value(families, "goodput_fleet_slice_efficiency_ratio",
                     {{"window", "5m"}})
                   .has_value());
}

// Rule 14: an elastic job's counters add each step's chip-seconds at the
// chips it held, so once it has ended they equal the report's chip-seconds
// (not seconds x chips), and the degraded and all-allocated chip-seconds
// counters equal the report's measures.
// Issue 18, slow steps. j: steps 2-4 of 10 s (step 1 and the second
// attempt's step 3 are first of their attempts). s: the 2nd report
// completes steps 11-20 in 30 s (3 s each; the 1st is first). q: no steps,
// no series.
TEST(FleetMetricsTest, StepTimeGaugesOfJobsWithSeries) {
  Config config;
  FleetTracker fleet(&config);
  ApplyAll(kFleet, &fleet);
  FleetMetrics metrics(&config, MetricsOptions());
  Scrape(fleet, {"j", "s", "q"}, T("2026-11-22T10:05:00Z"), &metrics);
  const auto families = metrics.Families();
  auto value = [&](const std::string& name, const std::string& id) {
    return Value(families, "goodput_job_step_time_" + name, {{"job_id", id}});
  };
  EXPECT_NEAR(*value("baseline_seconds", "j"), 10, 0.055);
  EXPECT_EQ(*value("baseline_steps", "j"), 3);
  EXPECT_EQ(*value("baseline_mad_seconds", "j"), 0);
  EXPECT_EQ(*value("recent_seconds", "j"), 10);
  EXPECT_EQ(*value("recent_steps", "j"), 3);
  EXPECT_NEAR(*value("baseline_seconds", "s"), 3, 0.0165);
  EXPECT_EQ(*value("baseline_steps", "s"), 10);
  EXPECT_EQ(*value("recent_seconds", "s"), 3);
  EXPECT_EQ(*value("recent_steps", "s"), 10);
  EXPECT_FALSE(value("baseline_seconds", "q"));
  EXPECT_FALSE(value("recent_steps", "q"));
}

// Issue 18, checkpoint advice. Three attempts of 50 s running, each with
// a 10 s save and ended by an interruption, 60 s of recovery between them:
// 3 interruptions, 3 saves of 10 s (C 10 s).
std::string ThreeInterruptedAttempts() {
  std::string text =
      "10:00:00 "
      "{\"job_submitted\":{\"chips\":8,\"workload\":\"TRAINING\"}}\n"
      "10:00:00 {\"allocation\":{\"chips\":8}}\n";
  for (const std::string& a : {"a", "b", "c"}) {
    const int offset = (a[0] - 'a') * 110;  // seconds
    auto at = [&](int s) {
      return absl::StrFormat("10:%02d:%02d ", (offset + s) / 60,
                             (offset + s) % 60);
    };
    const std::string id = "{\"attempt\":\"" + a + "\",";
    text += at(0) + id + "\"started\":{}}\n" + at(0) + id +
            "\"activity\":{\"kind\":\"TRAINING\"}}\n" + at(10) + id +
            "\"step\":{\"step\":1}}\n" + at(20) + id +
            "\"step\":{\"step\":2}}\n" + at(20) + id +
            "\"activity\":{\"kind\":\"CHECKPOINT\"}}\n" + at(30) + id +
            "\"checkpoint\":{\"step\":2}}\n" + at(30) + id +
            "\"activity\":{\"kind\":\"TRAINING\"}}\n" + at(40) + id +
            "\"step\":{\"step\":3}}\n" + at(50) +
            "{\"interruption\":{\"reason\":\"PREEMPTED\"}}\n";
  }
  return text;
}

// Running, the last attempt's first step (10:03:40-10:03:50) is not
// settled (its compile share is decided later: recognition time), so the
// gauges see 140 s running: M 46.67 s, advised sqrt(2 x 10 x 46.67) =
// 30.55 s, actual 140 / 3 = 46.67 s. Once the job has ended: 150 s, M 50
// s, advised sqrt(1000) = 31.62 s, actual 50 s, as its report says.
TEST(FleetMetricsTest, CheckpointAdviceGauges) {
  const std::string text = ThreeInterruptedAttempts();
  const MetricLabels id = {{"job_id", "j"}};
  auto gauges = [&](const std::string& events) {
    Config config;
    FleetTracker fleet(&config);
    ApplyAll(events, &fleet);
    FleetMetrics metrics(&config, MetricsOptions());
    Scrape(fleet, {"j"}, T("2026-11-22T10:05:00Z"), &metrics);
    const auto families = metrics.Families();
    return std::make_pair(
        Value(families, "goodput_job_checkpoint_interval_advised_seconds", id),
        Value(families, "goodput_job_checkpoint_interval_actual_seconds", id));
  };
  const auto running = gauges(text);
  ASSERT_TRUE(running.first && running.second);
  EXPECT_NEAR(*running.first, std::sqrt(2 * 10 * 140.0 / 3), 1e-9);
  EXPECT_NEAR(*running.second, 140.0 / 3, 1e-9);
  const std::string ended =
      text + "10:04:30 {\"job_ended\":{\"outcome\":\"FAILED\"}}\n";
  const auto done = gauges(ended);
  ASSERT_TRUE(done.first && done.second);
  EXPECT_NEAR(*done.first, std::sqrt(1000.0), 1e-9);
  EXPECT_NEAR(*done.second, 50, 1e-9);
  // The job view's advice (its report) says the same.
  Config config;
  FleetTracker fleet(&config);
  ApplyAll(ended, &fleet);
  const std::optional<CheckpointAdvice> a =
      AdviseJob(fleet.FindJob("j")->Report(T("2026-11-22T10:05:00Z")), 0);
  ASSERT_TRUE(a);
  EXPECT_NEAR(a->advised_interval_seconds, std::sqrt(1000.0), 1e-9);
  EXPECT_NEAR(*a->actual_interval_seconds, 50, 1e-9);
  // Fewer than 3 interruptions: M from the segment's rate, here the job's
  // own: 2 interruptions in 120 s settled running (a and b 50 s each; of
  // c only step 2 and its save: its first step's share is not decided and
  // step 3, not yet saved, may still be lost) at 8 chips, so M = 1 / (2 /
  // (120 x 8) x 8) = 60 s; 3 saves of 10 s: advised sqrt(2 x 10 x 60),
  // actual 120 / 3.
  const auto two = gauges(text.substr(0, text.rfind("10:04:30")));
  ASSERT_TRUE(two.first && two.second);
  EXPECT_NEAR(*two.first, std::sqrt(1200.0), 1e-9);
  EXPECT_NEAR(*two.second, 40, 1e-9);
}

// Job k (16 chips) saves once (10 s) and is interrupted once in 50 s of
// running; j (8 chips) as above, ended: 3 interruptions in 150 s. Their
// accelerator's TRAINING rate is (3 + 1) / (150 x 8 + 50 x 16) = 0.002
// per chip-second, so k's M = 1 / (0.002 x 16) = 31.25 s and its advised
// interval sqrt(2 x 10 x 31.25) = 25 s (actual 50 s); j keeps its own.
// A SERVING job's interruptions do not count. The rate survives a
// SaveState/LoadState round trip.
TEST(FleetMetricsTest, CheckpointAdviceBelowThreeInterruptionsUsesTheSegment) {
  const std::string k = R"(
10:00:00 {"job_id":"k","job_submitted":{"chips":16,"workload":"TRAINING"}}
10:00:00 {"job_id":"k","allocation":{"chips":16}}
10:00:00 {"job_id":"k","attempt":"a","started":{}}
10:00:00 {"job_id":"k","attempt":"a","activity":{"kind":"TRAINING"}}
10:00:10 {"job_id":"k","attempt":"a","step":{"step":1}}
10:00:20 {"job_id":"k","attempt":"a","step":{"step":2}}
10:00:20 {"job_id":"k","attempt":"a","activity":{"kind":"CHECKPOINT"}}
10:00:30 {"job_id":"k","attempt":"a","checkpoint":{"step":2}}
10:00:30 {"job_id":"k","attempt":"a","activity":{"kind":"TRAINING"}}
10:00:40 {"job_id":"k","attempt":"a","step":{"step":3}}
10:00:50 {"job_id":"k","interruption":{"reason":"PREEMPTED"}}
10:00:50 {"job_id":"k","job_ended":{"outcome":"FAILED"}}
10:00:00 {"job_id":"s","job_submitted":{"chips":8,"workload":"SERVING"}}
10:00:00 {"job_id":"s","allocation":{"chips":8}}
10:00:00 {"job_id":"s","attempt":"a","started":{}}
10:00:40 {"job_id":"s","interruption":{"reason":"PREEMPTED"}}
)";
  Config config;
  FleetTracker fleet(&config);
  ApplyAll(ThreeInterruptedAttempts() +
               "10:04:30 {\"job_ended\":{\"outcome\":\"FAILED\"}}\n" + k,
           &fleet);
  FleetMetrics metrics(&config, MetricsOptions());
  Scrape(fleet, {"j", "k", "s"}, T("2026-11-22T10:05:00Z"), &metrics);
  EXPECT_NEAR(metrics.InterruptionRates().at("unknown"), 0.002, 1e-15);
  const auto families = metrics.Families();
  const std::string advised = "goodput_job_checkpoint_interval_advised_seconds";
  EXPECT_NEAR(*Value(families, advised, {{"job_id", "k"}}), 25, 1e-9);
  EXPECT_NEAR(*Value(families, "goodput_job_checkpoint_interval_actual_seconds",
                     {{"job_id", "k"}}),
              50, 1e-9);
  EXPECT_NEAR(*Value(families, advised, {{"job_id", "j"}}), std::sqrt(1000.0),
              1e-9);
  EXPECT_FALSE(Value(families, advised, {{"job_id", "s"}}));
  internal::v1::FleetMetricsState state;
  metrics.SaveState(&state);
  FleetMetrics loaded(&config, MetricsOptions());
  ASSERT_TRUE(loaded.LoadState(state).ok());
  EXPECT_EQ(loaded.InterruptionRates(), metrics.InterruptionRates());
  EXPECT_NEAR(*Value(loaded.Families(), advised, {{"job_id", "k"}}), 25, 1e-9);
}

TEST(FleetMetricsTest, ElasticCountersFollowTheAllocation) {
  Config config;
  FleetTracker fleet(&config);
  ApplyAll(R"(
10:00:00 {"job_submitted":{"chips":8,"min_chips":4,"accelerator":"tpu-v5p","step_flops":1.836e16}}
10:00:10 {"allocation":{"chips":8}}
10:00:10 {"started":{}}
10:00:10 {"activity":{"kind":"TRAINING"}}
10:00:20 {"step":{"step":1}}
10:00:30 {"step":{"step":2}}
10:00:35 {"allocation":{"chips":4}}
10:00:35 {"activity":{"kind":"RESHARD"}}
10:00:45 {"activity":{"kind":"TRAINING"}}
10:00:50 {"step":{"step":3}}
10:01:00 {"step":{"step":4}}
10:01:00 {"job_ended":{"outcome":"SUCCEEDED"}}
)",
           &fleet);
  FleetMetrics metrics(&config, MetricsOptions());
  Scrape(fleet, {"j"}, T("2026-11-22T10:01:00Z"), &metrics);
  const auto families = metrics.Families();
  const FleetReport report = fleet.Report(T("2026-11-22T10:01:00Z"));
  for (int c = 0; c < kNumCategories; ++c) {
    const std::string name = CategoryName(Category(c));
    EXPECT_NEAR(
        *Value(families, "goodput_chip_seconds_total", {{"category", name}}),
        report.fleet.chip_seconds[c], 1e-9)
        << name;
  }
  EXPECT_NEAR(*Value(families, "goodput_chip_seconds_total",
                     {{"category", "productive"}}),
              220, 1e-9);  // 10 + 10 s at 8 chips, 5 + 10 s at 4
  EXPECT_NEAR(*Value(families, "goodput_costed_productive_chip_seconds_total"),
              220, 1e-9);
  EXPECT_NEAR(*Value(families, "goodput_ideal_chip_seconds_total"), 160, 1e-6);
  // 25 s at 4 of 8 chips; 50 s all-allocated at 8 requested.
  EXPECT_NEAR(*Value(families, "goodput_degraded_chip_seconds_total"), 100,
              1e-9);
  EXPECT_NEAR(*Value(families, "goodput_elastic_allocated_chip_seconds_total"),
              400, 1e-9);
  // The job's own PG gauge: ideal over productive chip-seconds.
  EXPECT_NEAR(*Value(families, "goodput_job_pg_ratio",
                     {{"job_id", "j"}, {"window", "5m"}}),
              160.0 / 220.0, 1e-9);
  // Slice efficiency over the window: 1 - 100 / 400 for the fleet, the
  // job's segments and the job.
  EXPECT_NEAR(*Value(families, "goodput_fleet_slice_efficiency_ratio",
                     {{"window", "5m"}}),
              0.75, 1e-12);
  EXPECT_NEAR(*Value(families, "goodput_segment_slice_efficiency_ratio",
                     {{"dimension", "accelerator"},
                      {"value", "tpu-v5p"},
                      {"window", "1h"}}),
              0.75, 1e-12);
  EXPECT_NEAR(*Value(families, "goodput_job_slice_efficiency_ratio",
                     {{"job_id", "j"}, {"window", "5m"}}),
              0.75, 1e-12);
}

TEST(FleetMetricsTest, HistogramsCountObservationsPerSegment) {
  Config config;
  FleetTracker fleet(&config);
  ApplyAll(kFleet, &fleet);
  FleetMetrics metrics(&config, MetricsOptions());
  Scrape(fleet, {"j", "s", "q"}, T("2026-11-22T10:03:05Z"), &metrics);
  Scrape(fleet, {"j", "s", "q"}, T("2026-11-22T10:03:05Z"), &metrics);
  for (const MetricFamilyData& f : metrics.Families()) {
    if (f.name != "goodput_time_to_recover_seconds") continue;
    for (const MetricSample& s : f.samples) {
      if (s.labels[0].second != "tpu-v5p") continue;
      // One recovery of 10:01:45 -> 10:03:05 = 80 s (bucket <= 120),
      // counted once over two scrapes.
      EXPECT_EQ(s.count, 1u);
      EXPECT_EQ(s.sum, 80);
      EXPECT_EQ(s.cumulative[2], 0u);  // <= 60
      EXPECT_EQ(s.cumulative[3], 1u);  // <= 120
    }
  }
}

// Scrapes a random fleet at every 10 s bucket boundary (events before it
// applied) and checks the 5m window's goodput ratio against the counters'
// increases since the scrape at the start of the window's span.
TEST(FleetMetricsTest, WindowRatioEqualsRatioOfCounterIncreases) {
  Config config;
  MetricsOptions options;
  options.windows = {{"5m", 300 * kNanosPerSecond}};
  FleetMetrics metrics(&config, options);
  FleetTracker fleet(&config);
  const std::vector<v1::Event> events = testing::RandomFleet(11, 20, 80);
  std::vector<std::string> ids;
  for (const v1::Event& e : events) {
    if (!e.job_id().empty()) ids.push_back(e.job_id());
  }
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  const int64_t bucket = 10 * kNanosPerSecond;
  std::map<int64_t, std::pair<double, double>> at;  // boundary -> counters
  int64_t boundary = 0;
  int checked = 0;
  for (uint32_t i : ApplyOrder(events)) {
    const int64_t t = EventTimeNanos(events[i]);
    while (boundary <= t) {
      if (boundary > 0) {
        Scrape(fleet, ids, boundary - 1, &metrics);
        const auto f = metrics.Families();
        // Excluded time is left out of the ratios (docs/semantics.md).
        const double total =
            *Value(f, "goodput_chip_seconds_total") -
            Value(f, "goodput_chip_seconds_total", {{"category", "excluded"}})
                .value_or(0);
        const double productive = *Value(f, "goodput_chip_seconds_total",
                                         {{"category", "productive"}});
        at[boundary] = {total, productive};
        auto start = at.find(boundary - 30 * bucket);
        auto ratio = Value(f, "goodput_fleet_goodput_ratio");
        if (start != at.end() && total > start->second.first) {
          ASSERT_TRUE(ratio.has_value());
          EXPECT_NEAR(*ratio,
                      (productive - start->second.second) /
                          (total - start->second.first),
                      1e-9);
          ++checked;
        }
      }
      boundary = boundary == 0 ? (t / bucket + 1) * bucket : boundary + bucket;
    }
    (void)fleet.Apply(events[i]);
  }
  EXPECT_GT(checked, 20);
}

TEST(FleetMetricsTest, PerJobSeriesCapAndEndedGrace) {
  Config config;
  MetricsOptions options;
  options.max_job_series = 2;
  options.ended_job_grace_ns = 60 * kNanosPerSecond;
  FleetMetrics metrics(&config, options);
  FleetTracker fleet(&config);
  ApplyAll(R"(
10:00:00 {"job_id":"a","job_submitted":{"chips":1}}
10:00:00 {"job_id":"b","job_submitted":{"chips":1}}
10:00:00 {"job_id":"c","job_submitted":{"chips":1}}
10:00:00 {"job_id":"c","started":{}}
10:00:10 {"job_id":"c","step":{"step":1}}
10:00:20 {"job_id":"c","step":{"step":2}}
10:00:25 {"job_id":"c","job_ended":{"outcome":"FAILED"}}
)",
           &fleet);
  // a and b run (not ended): they come first and fill the cap.
  Scrape(fleet, {"a", "b", "c"}, T("2026-11-22T10:00:25Z"), &metrics);
  auto f = metrics.Families();
  EXPECT_EQ(*Value(f, "goodput_job_series"), 2);
  EXPECT_EQ(*Value(f, "goodput_job_series_suppressed_total"), 1);
  EXPECT_FALSE(Value(f, "goodput_job_chips", {{"job_id", "c"}}).has_value());
  // After c's grace it is no longer a candidate: nothing is suppressed.
  Scrape(fleet, {"a", "b", "c"}, T("2026-11-22T10:01:26Z"), &metrics);
  f = metrics.Families();
  EXPECT_EQ(*Value(f, "goodput_job_series_suppressed_total"), 1);
  EXPECT_EQ(*Value(f, "goodput_job_info", {{"job_id", "a"}}), 1);
}

TEST(FleetMetricsTest, ARebuildNeverLowersCountersAndCountsTheClamp) {
  Config config;
  FleetMetrics metrics(&config, MetricsOptions());
  const std::vector<v1::Event> events = ParseEvents(Timeline(R"(
10:00:00 {"job_submitted":{"chips":2,"workload":"SERVING"}}
10:00:00 {"started":{}}
10:00:10 {"step":{"step":1}}
10:00:20 {"step":{"step":2}}
10:00:30 {"step":{"step":3}}
)"));
  JobTracker full("j", &config);
  for (const v1::Event& e : events) ASSERT_TRUE(full.Apply(e).ok());
  metrics.Begin();
  metrics.UpdateJob(full);
  metrics.Finish({}, T("2026-11-22T10:00:30Z"));
  // Serving steps 2 and 3 are productive at once: 20 s x 2 chips.
  EXPECT_EQ(*Value(metrics.Families(), "goodput_chip_seconds_total",
                   {{"category", "productive"}}),
            40);
  // A rebuilt tracker that knows less (here: only through step 2).
  JobTracker rebuilt("j", &config);
  for (size_t i = 0; i + 1 < events.size(); ++i) {
    ASSERT_TRUE(rebuilt.Apply(events[i]).ok());
  }
  metrics.Begin();
  metrics.UpdateJob(rebuilt);
  metrics.Finish({}, T("2026-11-22T10:00:30Z"));
  const auto f = metrics.Families();
  EXPECT_EQ(
      *Value(f, "goodput_chip_seconds_total", {{"category", "productive"}}),
      40);
  EXPECT_EQ(*Value(f, "goodput_chip_seconds_clamped_total",
                   {{"category", "productive"}}),
            20);
}

// goodputd --shard=I/N: the capacity counter carries capacity_shard, so
// the recording rules add the shards' own hosts' capacities up; without
// it the counter has no such label (cluster instances: taken once).
TEST(FleetMetricsTest, AShardLabelsItsCapacity) {
  Config config;
  MetricsOptions options;
  options.capacity_shard = "1/3";
  FleetMetrics shard(&config, options);
  shard.Begin();
  shard.Finish({{"tpu-v5p", 320}}, T("2026-11-22T10:00:40Z"));
  EXPECT_EQ(*Value(shard.Families(), "goodput_capacity_chip_seconds_total",
                   {{"accelerator", "tpu-v5p"}, {"capacity_shard", "1/3"}}),
            320);
  FleetMetrics one(&config, MetricsOptions());
  one.Begin();
  one.Finish({{"tpu-v5p", 320}}, T("2026-11-22T10:00:40Z"));
  for (const MetricFamilyData& f : one.Families()) {
    if (f.name != "goodput_capacity_chip_seconds_total") continue;
    ASSERT_EQ(f.samples.size(), 1u);
    EXPECT_EQ(f.samples[0].labels, (MetricLabels{{"accelerator", "tpu-v5p"}}));
  }
}

TEST(FleetMetricsTest, CapacityRatiosOverTheWindow) {
  Config config;
  FleetMetrics metrics(&config, MetricsOptions());
  FleetTracker fleet(&config);
  ApplyAll(R"(
10:00:00 {"job_submitted":{"chips":4,"accelerator":"tpu-v5p"}}
10:00:00 {"started":{}}
10:00:10 {"activity":{"kind":"INIT"}}
10:00:40 {"job_ended":{"outcome":"SUCCEEDED"}}
)",
           &fleet);
  metrics.Begin();
  metrics.UpdateJob(*fleet.FindJob("j"));
  // 8 chips of capacity for the 40 s: 320 chip-seconds; allocated 160.
  metrics.Finish({{"tpu-v5p", 320}}, T("2026-11-22T10:00:40Z"));
  const auto f = metrics.Families();
  EXPECT_EQ(*Value(f, "goodput_capacity_chip_seconds_total"), 320);
  EXPECT_NEAR(*Value(f, "goodput_fleet_capacity_sg_ratio", {{"window", "5m"}}),
              0.5, 1e-12);
  EXPECT_NEAR(*Value(f, "goodput_fleet_sg_ratio", {{"window", "1h"}}), 1,
              1e-12);
  // No step ever completed: RG is 0 (10 s in flight became idle at the end).
  EXPECT_EQ(*Value(f, "goodput_segment_rg_ratio",
                   {{"dimension", "accelerator"}, {"value", "tpu-v5p"}}),
            0);
  EXPECT_EQ(*Value(f, "goodput_segment_sg_ratio",
                   {{"dimension", "size"}, {"value", "<=8"}, {"window", "5m"}}),
            1);
}

}  // namespace
}  // namespace goodput::core

namespace goodput::core {
namespace {

TEST(FleetMetricsTest, UnchangedJobsKeepTheirTotalsAndGauges) {
  Config config;
  FleetMetrics metrics(&config, MetricsOptions());
  JobTracker job("j", &config);
  for (const v1::Event& e : testing::ParseEvents(testing::Timeline(R"(
10:00:00 {"job_submitted":{"chips":2}}
10:00:00 {"started":{}}
10:00:10 {"step":{"step":1}}
10:00:20 {"step":{"step":2}}
)"))) {
    ASSERT_TRUE(job.Apply(e).ok());
  }
  for (int scrape = 0; scrape < 2; ++scrape) {
    metrics.Begin();
    // Generation 7 both times: only the first scrape reads the job.
    if (metrics.Changed("j", 7)) {
      ASSERT_EQ(scrape, 0);
      metrics.UpdateJob(job);
    }
    metrics.Finish({}, testing::T("2026-11-22T10:00:20Z"));
    const auto f = metrics.Families();
    EXPECT_EQ(*Value(f, "goodput_jobs", {{"state", "RUNNING"}}), 1);
    // Steps 1 and 2 (20 s, no checkpoint) are at risk: x 2 chips.
    EXPECT_EQ(*Value(f, "goodput_at_risk_chip_seconds"), 40);
    EXPECT_EQ(*Value(f, "goodput_job_series"), 1);
  }
  EXPECT_TRUE(metrics.Changed("j", 8));
}

}  // namespace
}  // namespace goodput::core

namespace goodput::core {
namespace {

// Counters of every category and the ENDED gauge of one scrape.
std::vector<double> Counters(const std::vector<MetricFamilyData>& f) {
  std::vector<double> out;
  for (int c = 0; c < kNumCategories; ++c) {
    out.push_back(Value(f, "goodput_chip_seconds_total",
                        {{"category", CategoryName(Category(c))}})
                      .value_or(0));
  }
  out.push_back(*Value(f, "goodput_interruptions_total"));
  out.push_back(*Value(f, "goodput_jobs", {{"state", "ENDED"}}));
  return out;
}

// A job that Changed saw and no longer sees was evicted into a group of
// ended jobs: its counted time moves to the group's ledger, so the
// counters neither drop nor count it twice; a group never seen job by job
// (after a restart) counts in full.
TEST(FleetMetricsTest, EvictedJobsCountOnceThroughTheirGroup) {
  Config config;
  FleetTracker fleet(&config);
  ApplyAll(kFleet, &fleet);
  const int64_t now = T("2026-11-22T10:03:05Z");
  const FleetReport report = fleet.Report(now);
  FleetMetrics metrics(&config, MetricsOptions());
  auto scrape = [&](const std::vector<std::string>& held,
                    const std::vector<std::string>& evicted) {
    metrics.Begin();
    for (const std::string& id : held) {
      if (metrics.Changed(id, 1)) metrics.UpdateJob(*fleet.FindJob(id));
    }
    for (const std::string& id : evicted) {  // one group per job here
      metrics.UpdateEndedGroup(Job(report, id), 1, now);
    }
    metrics.Finish({}, now);
    return metrics.Families();
  };
  const std::vector<double> before = Counters(scrape({"j", "s", "q"}, {}));
  const auto after_families = scrape({"q"}, {"j", "s"});
  EXPECT_EQ(Counters(after_families), before);
  EXPECT_EQ(Counters(scrape({}, {"j", "s", "q"})), before);
  EXPECT_EQ(Counters(scrape({}, {"j", "s", "q"})), before);  // not again
  EXPECT_FALSE(
      Value(after_families, "goodput_job_chip_seconds_total", {{"job_id", "j"}})
          .has_value());

  FleetMetrics restarted(&config, MetricsOptions());
  restarted.Begin();
  for (const char* id : {"j", "s", "q"}) {
    restarted.UpdateEndedGroup(Job(report, id), 1, now);
  }
  restarted.Finish({}, now);
  const auto f = restarted.Families();
  for (int c = 0; c < kNumCategories; ++c) {
    EXPECT_NEAR(*Value(f, "goodput_chip_seconds_total",
                       {{"category", CategoryName(Category(c))}}),
                report.fleet.chip_seconds[c], 1e-6);
  }
  EXPECT_EQ(*Value(f, "goodput_jobs", {{"state", "ENDED"}}), 3);
}

// A held job that a scrape cannot take (it waits for its rebuild) is
// Unchanged: it keeps its totals, gauges and series, and is not folded
// away as evicted, so once it is taken again its time counts once.
TEST(FleetMetricsTest, AnUnchangedJobIsNotFoldedAway) {
  Config config;
  FleetTracker fleet(&config);
  ApplyAll(kFleet, &fleet);
  const int64_t now = T("2026-11-22T10:03:05Z");
  FleetMetrics metrics(&config, MetricsOptions());
  auto scrape = [&](uint64_t generation, bool j_waits) {
    metrics.Begin();
    for (const std::string id : {"j", "s", "q"}) {
      if (j_waits && id == "j") {
        metrics.Unchanged(id);
      } else if (metrics.Changed(id, generation)) {
        metrics.UpdateJob(*fleet.FindJob(id));
      }
    }
    metrics.Finish({}, now);
    return metrics.Families();
  };
  const std::vector<double> before = Counters(scrape(1, false));
  const auto waiting = scrape(1, true);
  EXPECT_EQ(Counters(waiting), before);
  EXPECT_TRUE(
      Value(waiting, "goodput_job_chip_seconds_total", {{"job_id", "j"}})
          .has_value());
  EXPECT_EQ(Counters(scrape(2, false)), before);  // rebuilt: taken again
}

}  // namespace
}  // namespace goodput::core

namespace goodput::core {
namespace {

// Every family of `metrics` as text, values to the last bit.
std::string FamiliesText(const FleetMetrics& metrics) {
  std::string out;
  for (const MetricFamilyData& f : metrics.Families()) {
    for (const MetricSample& s : f.samples) {
      absl::StrAppend(&out, f.name, "{");
      for (const auto& [k, v] : s.labels) absl::StrAppend(&out, k, "=", v, ",");
      absl::StrAppend(&out, "} ", absl::StrFormat("%a", s.value), " ", s.count,
                      " ", absl::StrFormat("%a", s.sum));
      for (uint64_t c : s.cumulative) absl::StrAppend(&out, " ", c);
      out += "\n";
    }
  }
  return out;
}

// `metrics`' state through its bytes into a new FleetMetrics.
std::unique_ptr<FleetMetrics> Reload(const FleetMetrics& metrics,
                                     const Config* config,
                                     const MetricsOptions& options) {
  internal::v1::FleetMetricsState state;
  metrics.SaveState(&state);
  std::string bytes;
  EXPECT_TRUE(state.SerializeToString(&bytes));
  internal::v1::FleetMetricsState parsed;
  EXPECT_TRUE(parsed.ParseFromString(bytes));
  auto loaded = std::make_unique<FleetMetrics>(config, options);
  EXPECT_TRUE(loaded->LoadState(parsed).ok());
  return loaded;
}

// A random fleet scraped as goodputd scrapes it: jobs by generation, ended
// jobs evicted into groups a scrape after their end (every other one), and
// after a restart the ended jobs held as their final snapshots.
class ScrapedFleet {
 public:
  ScrapedFleet(const Config* config, uint32_t seed)
      : fleet_(config), events_(testing::RandomFleet(seed, 30, 60)) {
    order_ = ApplyOrder(events_);
  }
  size_t size() const { return order_.size(); }
  void Apply(size_t i) {
    const v1::Event& e = events_[order_[i]];
    if (fleet_.Apply(e).ok() && !e.job_id().empty()) {
      ++generation_[e.job_id()];
    }
    now_ = std::max(now_, EventTimeNanos(e));
  }
  // From now on a restarted server holds the ended jobs held one by one
  // as final snapshots.
  void Restart() {
    for (const auto& [id, gen] : generation_) {
      if (Ended(id) && !evicted_.count(id)) final_.insert(id);
    }
  }
  // Scrapes into `m`; with `restarted`, it holds the final_ jobs as
  // snapshots (generation 0), else as trackers.
  void Scrape(FleetMetrics* m, bool restarted = false) {
    const FleetReport report = fleet_.Report(now_);
    m->Begin();
    for (const auto& [id, gen] : generation_) {
      if (evicted_.count(id)) continue;
      const bool final = restarted && final_.count(id);
      if (!m->Changed(id, final ? 0 : gen)) continue;
      if (final) {
        m->UpdateEndedJob(Job(report, id), EndOf(id));
      } else {
        m->UpdateJob(*fleet_.FindJob(id));
      }
    }
    for (const auto& [id, ended_ns] : evicted_) {
      m->UpdateEndedGroup(Job(report, id), 1, ended_ns);
    }
    m->Finish({{"tpu", static_cast<double>(now_ / kNanosPerSecond) * 64}},
              now_);
  }
  // Evicts every other ended job (by id) not evicted yet.
  void Evict() {
    for (const auto& [id, gen] : generation_) {
      if (Ended(id) && std::hash<std::string>()(id) % 2 == 0) {
        evicted_.emplace(id, EndOf(id));
        final_.erase(id);
      }
    }
  }

 private:
  bool Ended(const std::string& id) const {
    return fleet_.FindJob(id)->Recognize().state == JobStateKind::kEnded;
  }
  int64_t EndOf(const std::string& id) const {
    return fleet_.FindJob(id)->Recognize().last_event_ns;
  }

  FleetTracker fleet_;
  std::vector<v1::Event> events_;
  std::vector<uint32_t> order_;
  std::map<std::string, uint64_t> generation_;
  std::map<std::string, int64_t> evicted_;  // id -> its end
  std::set<std::string> final_;
  int64_t now_ = 0;
};

// Save, load into a new FleetMetrics, then both take the same further
// scrapes: every family (windows, counters, histograms, job series) stays
// identical, also with the restarted one's ended jobs held as snapshots.
TEST(FleetMetricsStateTest, ALoadedStateScrapesLikeTheUninterruptedOne) {
  Config config;
  MetricsOptions options;
  options.max_job_series = 12;  // some jobs without series
  options.ended_job_grace_ns = 120 * kNanosPerSecond;
  for (uint32_t seed : {3u, 4u, 5u}) {
    ScrapedFleet fleet(&config, seed);
    FleetMetrics uninterrupted(&config, options);
    std::unique_ptr<FleetMetrics> restarted;
    const size_t cut = fleet.size() / 2;
    int compared = 0;
    for (size_t i = 0; i < fleet.size(); ++i) {
      fleet.Apply(i);
      if (i % 23 != 0 && i != cut) continue;
      if (i % 69 == 0) fleet.Evict();
      fleet.Scrape(&uninterrupted);
      if (restarted) fleet.Scrape(restarted.get(), true);
      if (i == cut) {
        restarted = Reload(uninterrupted, &config, options);
        fleet.Restart();
      }
      if (!restarted) continue;
      ASSERT_EQ(FamiliesText(*restarted), FamiliesText(uninterrupted))
          << "seed " << seed << " event " << i;
      ++compared;
    }
    EXPECT_GT(compared, 20);
    EXPECT_NE(FamiliesText(uninterrupted).find("window=5m"), std::string::npos);
  }
}

// What a fresh FleetMetrics would show instead: the windows start empty
// and the recovered totals land in one bucket (what LoadState avoids).
TEST(FleetMetricsStateTest, WithoutTheStateWindowsDiffer) {
  Config config;
  ScrapedFleet fleet(&config, 3);
  FleetMetrics uninterrupted(&config, MetricsOptions());
  FleetMetrics fresh(&config, MetricsOptions());
  for (size_t i = 0; i < fleet.size(); ++i) {
    fleet.Apply(i);
    if (i % 23 == 0) fleet.Scrape(&uninterrupted);
  }
  fleet.Scrape(&uninterrupted);
  fleet.Scrape(&fresh, true);
  EXPECT_NE(FamiliesText(fresh), FamiliesText(uninterrupted));
}

TEST(FleetMetricsStateTest, StatesOfOtherOptionsAreRefused) {
  Config config;
  ScrapedFleet fleet(&config, 3);
  FleetMetrics metrics(&config, MetricsOptions());
  for (size_t i = 0; i < fleet.size(); ++i) fleet.Apply(i);
  fleet.Scrape(&metrics);
  internal::v1::FleetMetricsState state;
  metrics.SaveState(&state);
  MetricsOptions other;
  other.windows = {{"5m", 300 * kNanosPerSecond},
                   {"1h", 3600 * kNanosPerSecond}};
  FleetMetrics shorter(&config, other);
  absl::Status s = shorter.LoadState(state);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("windows"), std::string::npos) << s;
  other = MetricsOptions();
  other.window_buckets = 60;
  EXPECT_EQ(FleetMetrics(&config, other).LoadState(state).code(),
            absl::StatusCode::kInvalidArgument);
  other = MetricsOptions();
  other.segment_labels = {"team"};
  s = FleetMetrics(&config, other).LoadState(state);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("segment_labels"), std::string::npos) << s;
  state.set_version(kFleetMetricsStateVersion + 1);
  EXPECT_EQ(FleetMetrics(&config, MetricsOptions()).LoadState(state).code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(FleetMetricsStateTest, BrokenStatesNameTheFieldAndChangeNothing) {
  Config config;
  ScrapedFleet fleet(&config, 3);
  FleetMetrics metrics(&config, MetricsOptions());
  for (size_t i = 0; i < fleet.size(); ++i) fleet.Apply(i);
  fleet.Scrape(&metrics);
  internal::v1::FleetMetricsState good;
  metrics.SaveState(&good);
  const std::string before = FamiliesText(metrics);
  auto expect_refused = [&](internal::v1::FleetMetricsState bad,
                            const std::string& field) {
    absl::Status s = metrics.LoadState(bad);
    EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss) << s;
    EXPECT_EQ(s.message().substr(0, field.size()), field) << s;
    EXPECT_EQ(FamiliesText(metrics), before);
  };
  auto bad = good;
  bad.mutable_jobs(1)->mutable_ledger()->mutable_high()->add_nanos(1);
  expect_refused(bad, "jobs[1].ledger.high.nanos");
  bad = good;
  bad.mutable_segments(0)->mutable_key()->RemoveLast();
  expect_refused(bad, "segments[0].key");
  bad = good;
  auto* bucket = bad.mutable_segments(0)->mutable_windows(2)->add_bucket();
  bucket->set_index(-1);
  expect_refused(bad, "segments[0].windows[2].bucket[");
  bad = good;
  *bad.add_jobs() = good.jobs(0);
  expect_refused(bad, absl::StrCat("jobs[", good.jobs_size(), "].id"));
  bad = good;
  bad.mutable_jobs(0)->mutable_last()->set_state(
      static_cast<internal::v1::RecognizedState::JobState>(9));
  expect_refused(bad, "jobs[0].last.state");
  bad = good;
  bad.mutable_capacity_windows()->RemoveLast();
  expect_refused(bad, "capacity_windows");
  ASSERT_TRUE(metrics.LoadState(good).ok());
  EXPECT_EQ(FamiliesText(metrics), before);
}

}  // namespace
}  // namespace goodput::core
