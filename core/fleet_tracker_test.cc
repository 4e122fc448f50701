// Fleet and segment sums (SPEC section 3 rules 10 and 12), by hand.
#include "core/fleet_tracker.h"

#include "core/testing/timeline.h"
#include "gtest/gtest.h"

namespace goodput::core {
namespace {

using ::goodput::core::testing::ParseEvents;
using ::goodput::core::testing::Replay;
using ::goodput::core::testing::T;
using ::goodput::core::testing::Timeline;

// Job a (4 chips): queued 50, productive 50, goodput 0.5.
// Job b (1 chip): productive 100, goodput 1.
constexpr char kTwoJobs[] = R"(
10:00:00 {"job_id":"a","job_submitted":{"chips":4,"accelerator":"tpu-v5p","framework":"jax","labels":{"team":"search"}}}
10:00:50 {"job_id":"a","allocation":{"chips":4}}
10:00:50 {"job_id":"a","started":{}}
10:01:40 {"job_id":"a","step":{"step":1}}
10:01:40 {"job_id":"a","job_ended":{"outcome":"SUCCEEDED"}}
10:00:00 {"job_id":"b","job_submitted":{"chips":1,"accelerator":"h100","workload":"SERVING","labels":{"team":"ads"}}}
10:00:00 {"job_id":"b","started":{}}
10:01:40 {"job_id":"b","step":{"step":1}}
10:01:40 {"job_id":"b","job_ended":{"outcome":"SUCCEEDED"}}
)";

TEST(FleetTrackerTest, FleetRatiosAreChipTimeWeighted) {
  Config config;
  FleetReport r =
      Replay(ParseEvents(Timeline(kTwoJobs)), config, "2026-11-22T10:01:40Z");
  ASSERT_EQ(r.jobs.size(), 2u);
  EXPECT_EQ(r.jobs[0].job_id, "a");  // sorted by job_id
  // total 4 x 100 + 1 x 100 = 500 chip-s; productive 4 x 50 + 100 = 300.
  EXPECT_DOUBLE_EQ(r.fleet.total_chip_seconds, 500);
  EXPECT_DOUBLE_EQ(r.fleet.chip_seconds[Index(Category::kProductive)], 300);
  EXPECT_DOUBLE_EQ(r.fleet.chip_seconds[Index(Category::kQueued)], 200);
  TotalsRatios t = ComputeRatios(r.fleet);
  EXPECT_DOUBLE_EQ(*t.ratios.goodput, 0.6);  // not (0.5 + 1) / 2
  EXPECT_DOUBLE_EQ(*t.ratios.sg, 0.6);       // 1 - 200 / 500
  EXPECT_DOUBLE_EQ(*t.ratios.rg, 1.0);       // 300 / (500 - 200)
  EXPECT_FALSE(t.sg_capacity.has_value());   // no heartbeats
}

// Found by core_fuzzer: RG's denominator, total - queued - recovery in
// chip-seconds, fell below the productive time by rounding for a long queue.
TEST(FleetTrackerTest, FleetRgOfALongQueueIsNotAboveOne) {
  Config config;
  FleetReport r = Replay(ParseEvents(Timeline(R"(
10:00:00 {"job_submitted":{"chips":8}}
10:59:59.999 {"allocation":{"chips":8}}
10:59:59.999 {"started":{}}
11:00:00 {"step":{"step":1}}
)")),
                         config, "2026-11-22T11:00:00Z");
  // queued 3599.999 s, productive 0.001 s: the allocated time is all
  // productive, so RG is 1 (the fleet's was 1.00000000025: 8 x 0.001 over
  // 8 x 3600 - 8 x 3599.999 in doubles).
  TotalsRatios t = ComputeRatios(r.fleet);
  EXPECT_DOUBLE_EQ(r.fleet.chip_seconds[Index(Category::kProductive)], 0.008);
  EXPECT_EQ(*t.ratios.rg, 1.0);
  EXPECT_EQ(*JobRatios(r.jobs[0]).rg, 1.0);
}

TEST(FleetTrackerTest, SegmentsByDimensionAndLabel) {
  Config config;
  FleetReport r =
      Replay(ParseEvents(Timeline(kTwoJobs)), config, "2026-11-22T10:01:40Z");
  const auto& seg = r.segments;
  EXPECT_DOUBLE_EQ(seg.at("accelerator").at("tpu-v5p").total_chip_seconds, 400);
  EXPECT_DOUBLE_EQ(seg.at("accelerator").at("h100").total_chip_seconds, 100);
  EXPECT_EQ(seg.at("workload").at("TRAINING").jobs, 1);
  EXPECT_EQ(seg.at("workload").at("SERVING").jobs, 1);
  EXPECT_EQ(seg.at("framework").at("unknown").jobs, 1);
  EXPECT_EQ(seg.at("size").at("<=8").jobs, 2);
  EXPECT_DOUBLE_EQ(
      *ComputeRatios(seg.at("label:team").at("search")).ratios.goodput, 0.5);
}

TEST(FleetTrackerTest, SizeBucketsAreConfigurable) {
  Config config;
  config.size_buckets = {2};
  FleetReport r =
      Replay(ParseEvents(Timeline(kTwoJobs)), config, "2026-11-22T10:01:40Z");
  EXPECT_EQ(r.segments.at("size").at("<=2").jobs, 1);  // b, 1 chip
  EXPECT_EQ(r.segments.at("size").at(">2").jobs, 1);   // a, 4 chips
}

TEST(FleetTrackerTest, JobsWithoutChipsAreCountedNotWeighted) {
  Config config;
  FleetReport r = Replay(ParseEvents(Timeline(R"(
10:00:00 {"job_id":"x","started":{}}
10:00:00 {"job_id":"y","job_submitted":{"chips":2}}
10:00:00 {"job_id":"y","started":{}}
)")),
                         config, "2026-11-22T10:00:10Z");
  EXPECT_EQ(r.fleet.jobs, 2);
  EXPECT_EQ(r.fleet.jobs_without_chips, 1);
  EXPECT_DOUBLE_EQ(r.fleet.total_chip_seconds, 20);  // y only: 2 x 10
  EXPECT_EQ(r.segments.at("size").at("unknown").jobs_without_chips, 1);
}

TEST(FleetTrackerTest, ChipWeightFallsBackToFirstAllocation) {
  Config config;
  FleetReport r = Replay(ParseEvents(Timeline(R"(
10:00:00 {"allocation":{"chips":16}}
10:00:00 {"started":{}}
10:00:10 {"allocation":{"chips":32}}
)")),
                         config, "2026-11-22T10:00:20Z");
  EXPECT_EQ(r.jobs[0].chips, 16);
  EXPECT_DOUBLE_EQ(r.fleet.total_chip_seconds, 320);  // 16 x 20
}

TEST(FleetTrackerTest, CapacityFromHeartbeatsWithTimeout) {
  Config config;
  FleetReport r = Replay(ParseEvents(Timeline(R"(
10:00:00 {"host":"h1","heartbeat":{"chips":8,"accelerator":"tpu-v5p"}}
10:01:00 {"host":"h1","heartbeat":{"chips":8,"accelerator":"tpu-v5p"}}
10:00:00 {"job_submitted":{"chips":4,"accelerator":"tpu-v5p"}}
10:00:00 {"started":{}}
)")),
                         config, "2026-11-22T10:10:00Z");
  // h1 holds 8 chips 10:00 -> 10:01 (60 s) and then for the 300 s timeout:
  // 8 x 60 + 8 x 300 = 2880 chip-s. The job is allocated 4 x 600 = 2400.
  ASSERT_TRUE(r.fleet.capacity_chip_seconds.has_value());
  EXPECT_DOUBLE_EQ(*r.fleet.capacity_chip_seconds, 2880);
  TotalsRatios t = ComputeRatios(r.fleet);
  EXPECT_DOUBLE_EQ(*t.sg_capacity, 2400.0 / 2880);
  EXPECT_FALSE(t.mpg_capacity.has_value());  // PG unknown: no step cost
  EXPECT_DOUBLE_EQ(
      *r.segments.at("accelerator").at("tpu-v5p").capacity_chip_seconds, 2880);
}

TEST(FleetTrackerTest, MpgCapacityIsIdealOverCapacity) {
  Config config;
  FleetReport r = Replay(ParseEvents(Timeline(R"(
10:00:00 {"host":"h1","heartbeat":{"chips":2,"accelerator":"h100"}}
10:00:00 {"job_submitted":{"chips":1,"accelerator":"h100","step_flops":9.89e14}}
10:00:00 {"started":{}}
10:00:02 {"step":{"step":1}}
10:00:04 {"step":{"step":2}}
)")),
                         config, "2026-11-22T10:00:04Z");
  // capacity 2 x 4 = 8 chip-s; allocated 1 x 4 = 4: sg_capacity 0.5;
  // RG 1; PG = ideal 2 x 1 s / 4 s = 0.5: mpg_capacity = 0.25, which is
  // ideal chip-time 2 / capacity 8.
  TotalsRatios t = ComputeRatios(r.fleet);
  EXPECT_DOUBLE_EQ(*t.sg_capacity, 0.5);
  EXPECT_DOUBLE_EQ(*t.mpg_capacity, 0.25);
}

TEST(FleetTrackerTest, SinceExcludesJobsThatEndedBefore) {
  Config config;
  config.since_ns = T("2026-11-22T10:05:00Z");
  FleetReport r =
      Replay(ParseEvents(Timeline(kTwoJobs)), config, "2026-11-22T10:06:00Z");
  EXPECT_TRUE(r.jobs.empty());
  ASSERT_TRUE(r.since_ns.has_value());
  EXPECT_EQ(*r.since_ns, config.since_ns);
}

TEST(FleetTrackerTest, HeartbeatWindowIsClipped) {
  Config config;
  config.since_ns = T("2026-11-22T10:00:30Z");
  FleetReport r = Replay(ParseEvents(Timeline(R"(
10:00:00 {"host":"h1","heartbeat":{"chips":4,"accelerator":"tpu-v4"}}
10:01:00 {"host":"h1","heartbeat":{"chips":2,"accelerator":"tpu-v4"}}
)")),
                         config, "2026-11-22T10:02:00Z");
  // 4 chips 10:00:30 -> 10:01:00 (120) + 2 chips 10:01 -> 10:02 (120).
  EXPECT_DOUBLE_EQ(*r.fleet.capacity_chip_seconds, 240);
}

TEST(FleetTrackerTest, EventWithoutJobIdIsRejected) {
  Config config;
  FleetTracker fleet(&config);
  v1::Event e;
  e.mutable_started();
  auto result = fleet.Apply(e);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().message(), "job_id: missing");
  EXPECT_EQ(fleet.job_count(), 0u);
}

}  // namespace
}  // namespace goodput::core
