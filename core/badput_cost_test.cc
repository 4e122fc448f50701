#include "core/badput_cost.h"

#include <string>
#include <vector>

#include "core/config.h"
#include "core/fleet_report.h"
#include "gtest/gtest.h"

namespace goodput::core {
namespace {

constexpr int64_t kSec = kNanosPerSecond;

// 8 h100 chips at $5/chip-hour and 700 W: queued 100 s, productive 3600 s,
// lost 360 s.
JobReport H100Job() {
  JobReport job;
  job.job_id = "a";
  job.chips = 8;
  job.accelerator = "h100";
  job.nanos[Index(Category::kQueued)] = 100 * kSec;
  job.nanos[Index(Category::kProductive)] = 3600 * kSec;
  job.nanos[Index(Category::kLost)] = 360 * kSec;
  job.total_ns = 4060 * kSec;
  return job;
}

Catalog PricedCatalog() {
  Catalog c;
  c.Set("h100", {1, 1, 5.0, 700});
  c.Set("cheap", {1, 1, 0, 0});  // peaks only: no price, no power
  return c;
}

TEST(BadputCostTest, PricesChipHoursAndEnergyOfHeldChips) {
  JobReport job = H100Job();
  PriceJob(PricedCatalog(), &job);
  const auto cost = JobCostUsd(job);
  const auto energy = JobEnergyKwh(job);
  ASSERT_TRUE(cost && energy);
  // 8 chips x 3600 s = 8 chip-hours x $5 = $40; lost 8 x 360 s = 0.8
  // chip-hours = $4; queued 800 chip-seconds = $5 x 800 / 3600.
  EXPECT_DOUBLE_EQ((*cost)[Index(Category::kProductive)], 40);
  EXPECT_DOUBLE_EQ((*cost)[Index(Category::kLost)], 4);
  EXPECT_DOUBLE_EQ((*cost)[Index(Category::kQueued)], 5.0 * 800 / 3600);
  // 28800 chip-seconds x 700 W = 20.16 MJ = 5.6 kWh; lost 0.56 kWh; the
  // job holds no chips while queued.
  EXPECT_DOUBLE_EQ((*energy)[Index(Category::kProductive)], 5.6);
  EXPECT_DOUBLE_EQ((*energy)[Index(Category::kLost)], 0.56);
  EXPECT_DOUBLE_EQ((*energy)[Index(Category::kQueued)], 0);
}

TEST(BadputCostTest, UnknownAcceleratorOrRateOrChipsIsUnpriced) {
  JobReport unknown = H100Job();
  unknown.accelerator = "abacus";
  PriceJob(PricedCatalog(), &unknown);
  EXPECT_FALSE(JobCostUsd(unknown));
  EXPECT_FALSE(JobEnergyKwh(unknown));
  JobReport cheap = H100Job();
  cheap.accelerator = "cheap";
  PriceJob(PricedCatalog(), &cheap);
  EXPECT_FALSE(cheap.usd_per_chip_hour);
  EXPECT_FALSE(cheap.watts_per_chip);
  JobReport no_chips = H100Job();
  no_chips.chips = 0;
  PriceJob(PricedCatalog(), &no_chips);
  EXPECT_FALSE(JobCostUsd(no_chips));
}

// PriceJobs looks each distinct accelerator up once (of the first 8): jobs
// of more accelerators than that, interleaved, each get their own rates.
TEST(BadputCostTest, PriceJobsPricesEachJobByItsOwnAccelerator) {
  Catalog catalog;
  std::vector<JobReport> jobs;
  for (int i = 0; i < 30; ++i) {
    const std::string name = "acc-" + std::to_string(i % 10);
    catalog.Set(name, {1, 1, 1.0 + i % 10, 100.0 + i % 10});
    jobs.push_back(H100Job());
    jobs.back().accelerator = name;
  }
  jobs.back().accelerator = "abacus";  // not in the catalog
  jobs[3].usd_per_chip_hour = 0.5;     // keeps its own
  PriceJobs(catalog, &jobs);
  for (int i = 0; i < 29; ++i) {
    ASSERT_TRUE(jobs[i].usd_per_chip_hour && jobs[i].watts_per_chip) << i;
    EXPECT_EQ(*jobs[i].usd_per_chip_hour, i == 3 ? 0.5 : 1.0 + i % 10) << i;
    EXPECT_EQ(*jobs[i].watts_per_chip, 100.0 + i % 10) << i;
  }
  EXPECT_FALSE(jobs[29].usd_per_chip_hour);
  EXPECT_FALSE(jobs[29].watts_per_chip);
}

TEST(BadputCostTest, KeepsRatesAJobAlreadyHas) {
  JobReport job = H100Job();
  job.usd_per_chip_hour = 1.0;  // priced by a server with its own catalog
  PriceJob(PricedCatalog(), &job);
  EXPECT_DOUBLE_EQ(*job.usd_per_chip_hour, 1.0);
  EXPECT_DOUBLE_EQ(*job.watts_per_chip, 700);
}

TEST(BadputCostTest, ElasticJobUsesItsOwnChipSeconds) {
  JobReport job = H100Job();
  job.min_chips = 4;
  job.chip_seconds[Index(Category::kLost)] = 1800;  // held 4 chips x 450 s
  PriceJob(PricedCatalog(), &job);
  EXPECT_DOUBLE_EQ((*JobCostUsd(job))[Index(Category::kLost)], 2.5);
  EXPECT_DOUBLE_EQ((*JobCostUsd(job))[Index(Category::kProductive)], 0);
}

TEST(BadputCostTest, FleetAndSegmentsSumPricedJobsAndCountTheOthers) {
  Config config;
  config.catalog = PricedCatalog();
  JobReport other = H100Job();
  other.job_id = "b";
  other.accelerator = "abacus";
  other.chips = 2;  // 2 x 4060 s = 8120 chip-seconds unpriced
  FleetReport r = BuildFleetReport(config, 0, {H100Job(), other}, {});
  EXPECT_DOUBLE_EQ(r.fleet.cost_usd[Index(Category::kLost)], 4);
  EXPECT_DOUBLE_EQ(r.fleet.energy_kwh[Index(Category::kLost)], 0.56);
  EXPECT_DOUBLE_EQ(r.fleet.unpriced_chip_seconds, 8120);
  EXPECT_DOUBLE_EQ(r.fleet.unpowered_chip_seconds, 8120);
  const Totals& h100 = r.segments.at("accelerator").at("h100");
  EXPECT_DOUBLE_EQ(h100.cost_usd[Index(Category::kProductive)], 40);
  EXPECT_DOUBLE_EQ(h100.unpriced_chip_seconds, 0);
  ASSERT_TRUE(r.jobs[0].usd_per_chip_hour);
  EXPECT_DOUBLE_EQ(*r.jobs[0].usd_per_chip_hour, 5.0);
}

}  // namespace
}  // namespace goodput::core
