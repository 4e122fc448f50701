#include "report/report_json.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "report/test_util.h"

namespace goodput::report {
namespace {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using Json = nlohmann::ordered_json;

const std::vector<std::string> kCategories = {
    "total",   "queued",  "recovery",   "init",       "prep",
    "compile", "restore", "data_wait",  "checkpoint", "reshard",
    "custom",  "idle",    "productive", "lost",       "excluded"};

std::vector<std::string> Keys(const Json& object) {
  std::vector<std::string> keys;
  for (const auto& item : object.items()) keys.push_back(item.key());
  return keys;
}

std::string WriteOrDie(const core::FleetReport& report) {
  absl::StatusOr<std::string> text = WriteReportJson(report);
  EXPECT_TRUE(text.ok()) << text.status();
  return text.ok() ? *text : "";
}

TEST(ReportJsonTest, EmptyFleetGolden) {
  core::FleetReport report;
  report.as_of_ns = 1795341600LL * 1'000'000'000;
  testing::ExpectMatchesGolden("empty_fleet.json", WriteOrDie(report));
}

TEST(ReportJsonTest, OneJobAllNullRatiosGolden) {
  testing::ExpectMatchesGolden("one_job_null_ratios.json",
                               WriteOrDie(testing::OneEmptyJobReport()));
}

TEST(ReportJsonTest, TwoJobsWithSegmentsAndCapacityGolden) {
  testing::ExpectMatchesGolden("two_jobs_segments_capacity.json",
                               WriteOrDie(testing::TwoJobReport()));
}

TEST(ReportJsonTest, TopLevelAndJobKeysAreInSpecOrder) {
  Json json = ReportToJson(testing::TwoJobReport());
  EXPECT_THAT(Keys(json),
              ElementsAre("as_of", "since", "jobs", "fleet", "segments"));
  EXPECT_THAT(
      Keys(json["jobs"][0]),
      ElementsAre("job_id", "chips", "accelerator", "workload", "framework",
                  "labels", "state", "seconds", "custom_seconds",
                  "at_risk_seconds", "ideal_seconds", "goodput", "sg", "rg",
                  "pg", "mpg", "steps", "interruptions", "checkpoints",
                  "min_chips", "degraded_chip_seconds", "slice_efficiency",
                  "cost_usd", "energy_kwh", "checkpoint_advice"));
  EXPECT_THAT(Keys(json["jobs"][0]["seconds"]), ElementsAreArray(kCategories));
  EXPECT_THAT(Keys(json["jobs"][0]["steps"]),
              ElementsAre("last", "last_checkpoint", "lost"));
}

// Rule 14: an elastic job's min_chips and measures; null for fixed-size
// jobs; the fleet's sum over elastic jobs only.
TEST(ReportJsonTest, ElasticJobFieldsAndFleetMeasures) {
  core::FleetReport report = testing::TwoJobReport();
  core::JobReport& job = report.jobs[0];
  job.min_chips = job.chips / 2;
  job.chip_seconds = {};
  const int64_t allocated_ns =
      job.total_ns - job.nanos[core::Index(core::Category::kQueued)] -
      job.nanos[core::Index(core::Category::kRecovery)];
  // Half the chips for all its allocated time: held in init alone.
  job.chip_seconds[core::Index(core::Category::kInit)] =
      static_cast<double>(allocated_ns) * job.min_chips.value() / 1e9;
  report.fleet.held_chip_seconds =
      job.chip_seconds[core::Index(core::Category::kInit)];
  report.fleet.requested_chip_seconds = 2 * report.fleet.held_chip_seconds;
  Json json = ReportToJson(report);
  EXPECT_EQ(json["jobs"][0]["min_chips"], job.chips / 2);
  EXPECT_DOUBLE_EQ(json["jobs"][0]["slice_efficiency"].get<double>(), 0.5);
  EXPECT_DOUBLE_EQ(json["jobs"][0]["degraded_chip_seconds"].get<double>(),
                   report.fleet.held_chip_seconds);
  EXPECT_TRUE(json["jobs"][1]["min_chips"].is_null());
  EXPECT_TRUE(json["jobs"][1]["degraded_chip_seconds"].is_null());
  EXPECT_TRUE(json["jobs"][1]["slice_efficiency"].is_null());
  EXPECT_DOUBLE_EQ(json["fleet"]["slice_efficiency"].get<double>(), 0.5);
  EXPECT_DOUBLE_EQ(json["fleet"]["degraded_chip_seconds"].get<double>(),
                   report.fleet.held_chip_seconds);
  // No elastic job in a segment: 0 and null.
  const Json& seg = json["segments"]["workload"]["SERVING"];
  EXPECT_EQ(seg["degraded_chip_seconds"], 0.0);
  EXPECT_TRUE(seg["slice_efficiency"].is_null());
}

TEST(ReportJsonTest, FleetAndSegmentsShareOneShape) {
  Json json = ReportToJson(testing::TwoJobReport());
  std::vector<std::string> shape = {"chip_seconds",
                                    "goodput",
                                    "sg",
                                    "rg",
                                    "pg",
                                    "mpg",
                                    "sg_capacity",
                                    "mpg_capacity",
                                    "degraded_chip_seconds",
                                    "slice_efficiency",
                                    "jobs",
                                    "jobs_without_chips",
                                    "cost_usd",
                                    "energy_kwh",
                                    "unpriced_chip_seconds",
                                    "unpowered_chip_seconds",
                                    "training_interruptions_per_chip_hour",
                                    "checkpoint_advice"};
  EXPECT_THAT(Keys(json["fleet"]), ElementsAreArray(shape));
  EXPECT_THAT(Keys(json["fleet"]["chip_seconds"]),
              ElementsAreArray(kCategories));
  EXPECT_THAT(Keys(json["segments"]),
              ElementsAre("accelerator", "framework", "label:team",
                          "label:tier", "size", "workload"));
  EXPECT_THAT(Keys(json["segments"]["accelerator"]["tpu-v5e"]),
              ElementsAreArray(shape));
}

// Issue 18 part 2. llm-7 (256 chips, TRAINING): 6571.25 s running (7231.25
// - 120 queued - 540 recovery), 1 interruption, 40 s in 4 saves (C 10 s).
// Its tpu-v5p segment: 10 interruptions in 25600 running chip-hours
// (3.90625e-4 per chip-hour), 100 h running, 40 saves of 400 s in all.
// llm-7's M = 1 / (rate x 256) = 10 h = 36000 s: advised sqrt(2 x 10 x
// 36000) = 848.53 s, actual 6571.25 / 4 = 1642.81 s. The segment's own M
// = 100 h / 10 = 36000 s, C 10 s: advised 848.53 s, actual 9000 s.
TEST(ReportJsonTest, CheckpointAdviceOfJobsAndSegments) {
  core::FleetReport report = testing::TwoJobReport();
  report.jobs[0].checkpoints = 4;
  core::CheckpointSums& seg =
      report.segments["accelerator"]["tpu-v5p"].checkpoint;
  seg.run_seconds = 100 * 3600;
  seg.run_chip_seconds = 25600.0 * 3600;
  seg.interruptions = 10;
  seg.checkpoints = 40;
  seg.checkpoint_seconds = 400;
  seg.restart_seconds = 5400;
  Json json = ReportToJson(report);
  const Json& job = json["jobs"][0]["checkpoint_advice"];
  EXPECT_EQ(json["jobs"][0]["checkpoints"], 4);
  EXPECT_EQ(job["mtbi_from"], "segment");
  EXPECT_DOUBLE_EQ(job["mtbi_seconds"].get<double>(), 36000);
  EXPECT_DOUBLE_EQ(job["save_seconds"].get<double>(), 10);
  EXPECT_DOUBLE_EQ(job["restart_seconds"].get<double>(), 659);  // 540+29+60+30
  EXPECT_NEAR(job["advised_interval_seconds"].get<double>(), 848.528, 1e-3);
  EXPECT_DOUBLE_EQ(job["actual_interval_seconds"].get<double>(), 1642.8125);
  EXPECT_TRUE(json["jobs"][1]["checkpoint_advice"].is_null());  // SERVING
  const Json& tpu = json["segments"]["accelerator"]["tpu-v5p"];
  EXPECT_DOUBLE_EQ(tpu["training_interruptions_per_chip_hour"].get<double>(),
                   10.0 / 25600);
  EXPECT_EQ(tpu["checkpoint_advice"]["mtbi_from"], "job");
  EXPECT_DOUBLE_EQ(tpu["checkpoint_advice"]["mtbi_seconds"].get<double>(),
                   36000);
  EXPECT_NEAR(
      tpu["checkpoint_advice"]["advised_interval_seconds"].get<double>(),
      848.528, 1e-3);
  EXPECT_DOUBLE_EQ(
      tpu["checkpoint_advice"]["actual_interval_seconds"].get<double>(), 9000);
  EXPECT_TRUE(json["fleet"]["checkpoint_advice"].is_null());  // no sums
  // Without its segment's sums, llm-7 (1 interruption) has no advice.
  report.segments["accelerator"]["tpu-v5p"].checkpoint = {};
  EXPECT_TRUE(ReportToJson(report)["jobs"][0]["checkpoint_advice"].is_null());
}

TEST(ReportJsonTest, CostAndEnergyByCategory) {
  Json json = ReportToJson(testing::TwoJobReport());
  // llm-7: 256 chips at $3.6 and 360 W; lost 660 s = 168960 chip-seconds
  // = 46.93 chip-hours x $3.6 = $168.96, and 168960 x 360 / 3.6e6 kWh.
  EXPECT_DOUBLE_EQ(json["jobs"][0]["cost_usd"]["lost"], 168.96);
  EXPECT_DOUBLE_EQ(json["jobs"][0]["energy_kwh"]["lost"], 16.896);
  // queued 120 s: priced ($30.72), but no power drawn.
  EXPECT_DOUBLE_EQ(json["jobs"][0]["cost_usd"]["queued"], 30.72);
  EXPECT_DOUBLE_EQ(json["jobs"][0]["energy_kwh"]["queued"], 0);
  // serve-1 has no rates: null, and its 8 x 3690 chip-seconds unpriced.
  EXPECT_TRUE(json["jobs"][1]["cost_usd"].is_null());
  EXPECT_DOUBLE_EQ(json["fleet"]["cost_usd"]["lost"], 168.96);
  EXPECT_DOUBLE_EQ(json["fleet"]["unpriced_chip_seconds"], 29520);
  EXPECT_DOUBLE_EQ(json["fleet"]["unpowered_chip_seconds"], 29520);
}

TEST(ReportJsonTest, ValuesAreConverted) {
  Json json = ReportToJson(testing::TwoJobReport());
  EXPECT_EQ(json["as_of"], "2026-11-22T12:00:00.250Z");
  EXPECT_EQ(json["since"], "2026-11-22T10:00:00Z");
  const Json& job = json["jobs"][0];
  EXPECT_EQ(job["workload"], "TRAINING");
  EXPECT_EQ(job["state"], "RUNNING");
  EXPECT_EQ(job["seconds"]["idle"], 11.25);
  EXPECT_EQ(job["seconds"]["queued"], 120.0);
  EXPECT_EQ(job["custom_seconds"]["eval"], 300.0);
  EXPECT_EQ(job["steps"]["last"], 1500);
  EXPECT_DOUBLE_EQ(job["pg"].get<double>(), 2000.5 / 5400);
  const Json& serving = json["jobs"][1];
  EXPECT_EQ(serving["workload"], "SERVING");
  EXPECT_TRUE(serving["pg"].is_null());
  EXPECT_TRUE(serving["mpg"].is_null());
  EXPECT_TRUE(serving["steps"]["last_checkpoint"].is_null());
  EXPECT_EQ(serving["seconds"]["lost"], 0.0);  // zero printed, not omitted
}

TEST(ReportJsonTest, CapacityRatiosOnlyWhereCapacityIsKnown) {
  Json json = ReportToJson(testing::TwoJobReport());
  EXPECT_TRUE(json["fleet"]["sg_capacity"].is_number());
  EXPECT_TRUE(
      json["segments"]["accelerator"]["tpu-v5p"]["sg_capacity"].is_number());
  EXPECT_TRUE(
      json["segments"]["accelerator"]["tpu-v5e"]["sg_capacity"].is_null());
}

TEST(ReportJsonTest, UnknownChipsAndEmptyJobAreNull) {
  Json json = ReportToJson(testing::OneEmptyJobReport());
  const Json& job = json["jobs"][0];
  EXPECT_TRUE(job["chips"].is_null());
  for (const char* ratio : {"goodput", "sg", "rg", "pg", "mpg"}) {
    EXPECT_TRUE(job[ratio].is_null()) << ratio;
    EXPECT_TRUE(json["fleet"][ratio].is_null()) << ratio;
  }
  EXPECT_TRUE(json["since"].is_null());
  EXPECT_EQ(json["fleet"]["jobs_without_chips"], 1);
}

TEST(ReportJsonTest, InvalidUtf8IsReplacedNotThrown) {
  core::FleetReport report = testing::OneEmptyJobReport();
  report.jobs[0].job_id = "bad\xff";
  absl::StatusOr<std::string> text = WriteReportJson(report);
  ASSERT_TRUE(text.ok()) << text.status();
  EXPECT_THAT(*text, ::testing::HasSubstr("bad\xef\xbf\xbd"));
}

TEST(ReportJsonTest, OutputParsesBackAndEndsWithNewline) {
  std::string text = WriteOrDie(testing::TwoJobReport());
  ASSERT_FALSE(text.empty());
  EXPECT_EQ(text.back(), '\n');
  EXPECT_EQ(Json::parse(text), ReportToJson(testing::TwoJobReport()));
}

}  // namespace
}  // namespace goodput::report
