// The worked examples of docs/migrating.md: each log under
// testdata/mlgm/ is imported and replayed through core, and every number
// the page states for our side is checked here.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "core/category.h"
#include "core/config.h"
#include "core/replay_events.h"
#include "core/report.h"
#include "gtest/gtest.h"
#include "importer/import_mlgm.h"
#include "report/test_util.h"

namespace goodput::importer {
namespace {

using core::Category;

constexpr int64_t kT0 = 1'700'000'000;  // 2023-11-14T22:13:20Z
constexpr int64_t kSecond = 1'000'000'000;

struct Example {
  const char* file;
  std::map<Category, int64_t> seconds;  // categories not named are 0
  int64_t lost_steps = 0;
  int64_t interruptions = 0;
  int64_t at_risk_seconds = 0;
  int64_t as_of_offset = -1;  // seconds after T0; -1: the last event
  bool blocking_data_loading = false;
};

core::JobReport ImportAndReplay(const Example& example) {
  MlgmOptions options;
  options.chips = 8;
  options.accelerator = "tpu-v5e";
  options.blocking_data_loading = example.blocking_data_loading;
  MlgmConverter converter(options);
  std::string text = report::testing::ReadFileOrDie(
      std::string(GOODPUT_IMPORTER_TESTDATA) + "/mlgm/" + example.file);
  int line = 0;
  for (absl::string_view l : absl::StrSplit(text, '\n')) {
    converter.AddLine(l, absl::StrCat(example.file, ":", ++line));
  }
  absl::StatusOr<MlgmResult> result = converter.Finish();
  EXPECT_TRUE(result.ok()) << result.status();
  if (!result.ok() || result->events.empty()) return {};
  EXPECT_TRUE(result->errors.empty()) << result->errors.front();
  int64_t as_of = example.as_of_offset >= 0
                      ? (kT0 + example.as_of_offset) * kSecond
                      : result->events.back().time().seconds() * kSecond;
  int64_t rejected = 0;
  core::FleetReport report =
      core::ReplayEvents(result->events, core::Config(), as_of, &rejected);
  EXPECT_EQ(rejected, 0);
  EXPECT_EQ(report.jobs.size(), 1u);
  return report.jobs.empty() ? core::JobReport() : report.jobs[0];
}

void ExpectExample(const Example& example) {
  SCOPED_TRACE(example.file);
  core::JobReport job = ImportAndReplay(example);
  int64_t total = 0;
  for (int c = 0; c < core::kNumCategories; ++c) {
    auto it = example.seconds.find(static_cast<Category>(c));
    int64_t want = it == example.seconds.end() ? 0 : it->second;
    EXPECT_EQ(job.nanos[c], want * kSecond)
        << core::CategoryName(static_cast<Category>(c));
    total += want;
  }
  EXPECT_EQ(job.total_ns, total * kSecond);
  EXPECT_EQ(job.lost_steps, example.lost_steps);
  EXPECT_EQ(job.interruptions, example.interruptions);
  EXPECT_EQ(job.at_risk_ns, example.at_risk_seconds * kSecond);
}

TEST(MlgmExamplesTest, BasicRunAgreesBucketByBucket) {
  ExpectExample({"basic.jsonl",
                 {{Category::kInit, 20},
                  {Category::kPrep, 30},
                  {Category::kDataWait, 10},
                  {Category::kCompile, 90},
                  {Category::kCustom, 20},
                  {Category::kCheckpoint, 10},
                  {Category::kProductive, 60}}});
}

TEST(MlgmExamplesTest, DisruptionKeepsCheckpointedStepsThatWereRedone) {
  ExpectExample({"disruption.jsonl",
                 {{Category::kRecovery, 40},
                  {Category::kRestore, 10},
                  {Category::kCheckpoint, 10},
                  {Category::kProductive, 80},
                  {Category::kLost, 10}},
                 /*lost_steps=*/1,
                 /*interruptions=*/1});
}

TEST(MlgmExamplesTest, SequentialRestartUsesTheSavedStepsRealTime) {
  ExpectExample({"sequential.jsonl",
                 {{Category::kRecovery, 59},
                  {Category::kRestore, 10},
                  {Category::kCheckpoint, 5},
                  {Category::kProductive, 56}},
                 /*lost_steps=*/0,
                 /*interruptions=*/1});
}

TEST(MlgmExamplesTest, StartupIsTheFirstStepsExcessOverTheMean) {
  ExpectExample({"startup.jsonl",
                 {{Category::kCompile, 8}, {Category::kProductive, 132}}});
}

TEST(MlgmExamplesTest, HangIsProductiveForStallAfterThenIdle) {
  ExpectExample({"idle.jsonl",
                 {{Category::kInit, 10},
                  {Category::kIdle, 620},
                  {Category::kProductive, 630}},
                 /*lost_steps=*/0,
                 /*interruptions=*/0,
                 /*at_risk_seconds=*/630,
                 /*as_of_offset=*/1260});
}

TEST(MlgmExamplesTest, InLoopDataLoadingIsStepTimeByDefault) {
  ExpectExample({"data_loading.jsonl",
                 {{Category::kDataWait, 5}, {Category::kProductive, 40}}});
}

TEST(MlgmExamplesTest, InLoopDataLoadingIsDataWaitWhenBlocking) {
  ExpectExample({"data_loading.jsonl",
                 {{Category::kDataWait, 11}, {Category::kProductive, 34}},
                 0,
                 0,
                 0,
                 -1,
                 /*blocking_data_loading=*/true});
}

TEST(MlgmExamplesTest, RestoreInsidePrepIsCountedOnce) {
  ExpectExample({"checkpoint.jsonl",
                 {{Category::kPrep, 30},
                  {Category::kRestore, 30},
                  {Category::kCheckpoint, 6},
                  {Category::kProductive, 30}}});
}

// Example 8 (docs/migrating.md, "Elastic jobs"): a slice goes down at
// T+25 (step 3 in flight, 5 s lost), a wait T+25..30, a reinitialization
// T+30..40 with an accelerator init inside it, steps at 3 of 4 slices, a
// scale up at T+60 (wait 2 s, reinitialization 3 s), job end at T+85.
TEST(MlgmExamplesTest, ElasticSliceCountsWaitsAndReinitialization) {
  Example example{"elastic.jsonl",
                  {{Category::kLost, 5},
                   {Category::kCustom, 7},
                   {Category::kReshard, 13},
                   {Category::kProductive, 60}}};
  ExpectExample(example);
  core::JobReport job = ImportAndReplay(example);  // 8 chips: 2 per slice
  EXPECT_EQ(job.min_chips, 2);                     // one slice
  EXPECT_EQ(job.custom_nanos["ELASTIC_SLICE_DOWN"], 5 * kSecond);
  EXPECT_EQ(job.custom_nanos["ELASTIC_SCALE_UP"], 2 * kSecond);
  // One slice (2 chips) missing from T+25 to T+60.
  std::optional<core::ElasticMeasures> elastic = core::JobElastic(job);
  ASSERT_TRUE(elastic.has_value());
  EXPECT_DOUBLE_EQ(elastic->degraded_chip_seconds, 2.0 * 35);
  ASSERT_TRUE(elastic->slice_efficiency.has_value());
  EXPECT_DOUBLE_EQ(*elastic->slice_efficiency,
                   (8.0 * 85 - 2 * 35) / (8.0 * 85));
}

}  // namespace
}  // namespace goodput::importer
