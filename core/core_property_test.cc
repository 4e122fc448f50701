// Properties of the core over random fleets: categories partition the
// lifetime, ratios stay in range, and the report depends only on the set of
// events (not their arrival order) and on nothing but them.
#include <algorithm>
#include <numeric>
#include <random>

#include "core/event_order.h"
#include "core/fleet_tracker.h"
#include "core/testing/random_fleet.h"
#include "core/testing/timeline.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"

namespace goodput::core {
namespace {

using ::goodput::core::testing::RandomFleet;
using ::goodput::core::testing::SumNanos;

constexpr int64_t kAsOf = (1795341600LL + 4 * 3600) * kNanosPerSecond;

FleetReport ReplayAll(const std::vector<v1::Event>& events,
                      const Config& config, int64_t as_of) {
  return ::goodput::core::testing::Replay(events, config, as_of);
}

void ExpectSameJobs(const FleetReport& a, const FleetReport& b) {
  ASSERT_EQ(a.jobs.size(), b.jobs.size());
  for (size_t i = 0; i < a.jobs.size(); ++i) {
    const JobReport &x = a.jobs[i], &y = b.jobs[i];
    EXPECT_EQ(x.job_id, y.job_id);
    EXPECT_EQ(x.nanos, y.nanos) << x.job_id;
    EXPECT_EQ(x.total_ns, y.total_ns) << x.job_id;
    EXPECT_EQ(x.at_risk_ns, y.at_risk_ns) << x.job_id;
    EXPECT_EQ(x.lost_steps, y.lost_steps) << x.job_id;
    EXPECT_EQ(x.ideal_seconds, y.ideal_seconds) << x.job_id;
    EXPECT_EQ(x.chip_seconds, y.chip_seconds) << x.job_id;
  }
  EXPECT_EQ(a.fleet.chip_seconds, b.fleet.chip_seconds);
  EXPECT_EQ(a.fleet.held_chip_seconds, b.fleet.held_chip_seconds);
}

void ExpectInRange(std::optional<double> v, const std::string& what) {
  if (!v) return;
  EXPECT_GE(*v, -1e-12) << what;
  EXPECT_LE(*v, 1 + 1e-12) << what;
}

// Rule 14: an elastic job's chip-seconds are its time at between min_chips
// (all-allocated) and chips per instant; its measures stay in range.
void ExpectElasticInRange(const JobReport& j) {
  if (!j.min_chips) return;
  const double chips = static_cast<double>(j.chips);
  for (int c = 0; c < kNumCategories; ++c) {
    const double seconds = static_cast<double>(j.nanos[c]) / kNanosPerSecond;
    const double slack = 1e-6 * (1 + seconds * chips);
    EXPECT_LE(j.chip_seconds[c], seconds * chips + slack)
        << j.job_id << " " << CategoryName(static_cast<Category>(c));
    const bool allocated =
        c != Index(Category::kQueued) && c != Index(Category::kRecovery);
    const double least = allocated ? *j.min_chips : chips;
    EXPECT_GE(j.chip_seconds[c], seconds * least - slack)
        << j.job_id << " " << CategoryName(static_cast<Category>(c));
  }
  const ElasticMeasures m = *JobElastic(j);
  EXPECT_GE(m.degraded_chip_seconds, 0) << j.job_id;
  ExpectInRange(m.slice_efficiency, j.job_id + " slice_efficiency");
}

class CorePropertyTest : public ::testing::TestWithParam<uint32_t> {};

TEST_P(CorePropertyTest, CategoriesPartitionLifetimeAndRatiosInRange) {
  Config config;
  auto events = RandomFleet(GetParam(), 30, 80);
  FleetReport r = ReplayAll(events, config, kAsOf);
  ASSERT_FALSE(r.jobs.empty());
  for (const JobReport& j : r.jobs) {
    EXPECT_EQ(SumNanos(j), j.total_ns) << j.job_id;
    for (int c = 0; c < kNumCategories; ++c) {
      EXPECT_GE(j.nanos[c], 0)
          << j.job_id << " " << CategoryName(static_cast<Category>(c));
    }
    EXPECT_GE(j.at_risk_ns, 0) << j.job_id;
    EXPECT_LE(j.at_risk_ns, j.nanos[Index(Category::kProductive)]) << j.job_id;
    Ratios ratios = JobRatios(j);
    ExpectInRange(ratios.sg, j.job_id + " sg");
    ExpectInRange(ratios.rg, j.job_id + " rg");
    ExpectInRange(ratios.goodput, j.job_id + " goodput");
    if (ratios.pg) {
      EXPECT_GE(*ratios.pg, 0) << j.job_id;
    }
    ExpectElasticInRange(j);
  }
  TotalsRatios fleet = ComputeRatios(r.fleet);
  ExpectInRange(fleet.ratios.sg, "fleet sg");
  ExpectInRange(fleet.ratios.rg, "fleet rg");
}

TEST_P(CorePropertyTest, ArrivalOrderDoesNotMatter) {
  Config config;
  auto events = RandomFleet(GetParam(), 20, 60);
  FleetReport a = ReplayAll(events, config, kAsOf);
  std::shuffle(events.begin(), events.end(), std::mt19937(GetParam() + 7));
  ExpectSameJobs(a, ReplayAll(events, config, kAsOf));
}

TEST_P(CorePropertyTest, WindowsPartitionTheirSpan) {
  Config config;
  config.since_ns = kAsOf - 2 * 3600 * kNanosPerSecond;
  auto events = RandomFleet(GetParam(), 20, 60);
  FleetReport r = ReplayAll(events, config, kAsOf);
  for (const JobReport& j : r.jobs) {
    EXPECT_EQ(SumNanos(j), j.total_ns) << j.job_id;
    EXPECT_LE(j.total_ns, kAsOf - config.since_ns);
    for (int c = 0; c < kNumCategories; ++c) EXPECT_GE(j.nanos[c], 0);
    ExpectElasticInRange(j);
  }
}

TEST_P(CorePropertyTest, ReportsAtEveryPrefixAreConsistent) {
  // Applying events one by one and reporting in between gives the same
  // final report as applying them all: Report() has no side effects.
  Config config;
  auto events = RandomFleet(GetParam(), 5, 60);
  std::vector<uint32_t> order(events.size());
  std::iota(order.begin(), order.end(), 0);
  SortForApply(events, &order);
  FleetTracker fleet(&config);
  for (uint32_t i : order) {
    ASSERT_TRUE(fleet.Apply(events[i]).ok());
    FleetReport mid = fleet.Report(EventTimeNanos(events[i]));
    for (const JobReport& j : mid.jobs) ASSERT_EQ(SumNanos(j), j.total_ns);
  }
  ExpectSameJobs(fleet.Report(kAsOf), ReplayAll(events, config, kAsOf));
}

INSTANTIATE_TEST_SUITE_P(Seeds, CorePropertyTest,
                         ::testing::Range<uint32_t>(1, 21));

}  // namespace
}  // namespace goodput::core
