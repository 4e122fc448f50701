#include "core/drilldown.h"

#include <cmath>
#include <string>
#include <vector>

#include "core/testing/timeline.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace goodput::core {
namespace {

using ::goodput::core::testing::ParseEvents;
using ::goodput::core::testing::Replay;
using ::goodput::core::testing::Timeline;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Pair;

// Three jobs as of 11:00:
//  big   (64 tpu-v5p, team=search): queued 10:00-10:10; step 1 in flight
//        10:10-10:50 is idle after stall_after (10 min) past its last
//        event, 10:20-10:50: badput 600 + 1800 s x 64 chips.
//  small (8 a100, SERVING): queued 30 min; in flight 10:40-11:00 idle
//        from 10:50: badput 1800 + 600 s x 8 chips.
//  nochips: no chip weight: 0 lost chip-seconds, ranked last.
constexpr char kFleet[] = R"(
10:00:00 {"job_id":"big","job_submitted":{"chips":64,"accelerator":"tpu-v5p","framework":"jax","labels":{"team":"search"}}}
10:00:00 {"job_id":"small","job_submitted":{"chips":8,"accelerator":"a100","workload":"SERVING"}}
10:00:00 {"job_id":"nochips","started":{}}
10:10:00 {"job_id":"big","started":{}}
10:30:00 {"job_id":"small","started":{}}
10:40:00 {"job_id":"small","step":{"step":1}}
10:50:00 {"job_id":"big","step":{"step":1}}
11:00:00 {"job_id":"big","step":{"step":2}}
)";

class DrilldownTest : public ::testing::Test {
 protected:
  DrilldownTest()
      : report_(Replay(ParseEvents(Timeline(kFleet)), config_,
                       "2026-11-22T11:00:00Z")) {}

  std::vector<std::string> Ids(const std::vector<JobReport>& jobs) {
    std::vector<std::string> ids;
    for (const JobReport& j : jobs) ids.push_back(j.job_id);
    return ids;
  }

  Config config_;
  FleetReport report_;
};

TEST_F(DrilldownTest, LostChipSecondsIsBadputTimesChips) {
  EXPECT_DOUBLE_EQ(LostChipSeconds(testing::Job(report_, "big")),
                   64 * (600.0 + 1800));
  EXPECT_DOUBLE_EQ(LostChipSeconds(testing::Job(report_, "small")),
                   8 * (1800.0 + 600));
  EXPECT_DOUBLE_EQ(LostChipSeconds(testing::Job(report_, "nochips")), 0);
}

TEST_F(DrilldownTest, RankJobsMostLostFirst) {
  JobsView view = RankJobs(config_, report_, JobFilter{});
  EXPECT_THAT(Ids(view.jobs), ElementsAre("big", "small", "nochips"));
  EXPECT_EQ(view.matched, 3);
  EXPECT_EQ(view.as_of_ns, report_.as_of_ns);
}

TEST_F(DrilldownTest, RankJobsFiltersBySegmentStateAndLimit) {
  JobFilter filter;
  filter.segments = {{"accelerator", "a100"}};
  EXPECT_THAT(Ids(RankJobs(config_, report_, filter).jobs),
              ElementsAre("small"));
  filter.segments = {{"label:team", "search"}, {"size", "<=64"}};
  EXPECT_THAT(Ids(RankJobs(config_, report_, filter).jobs), ElementsAre("big"));
  filter.segments = {{"accelerator", "unknown"}};
  EXPECT_THAT(Ids(RankJobs(config_, report_, filter).jobs),
              ElementsAre("nochips"));
  filter.segments = {{"workload", "TRAINING"}};
  filter.limit = 1;
  JobsView view = RankJobs(config_, report_, filter);
  EXPECT_THAT(Ids(view.jobs), ElementsAre("big"));
  EXPECT_EQ(view.matched, 2);
  filter = JobFilter{};
  filter.state = JobStateKind::kQueued;
  EXPECT_THAT(RankJobs(config_, report_, filter).jobs, ::testing::IsEmpty());
}

TEST_F(DrilldownTest, RankJobsInTheFiltersOrder) {
  JobFilter filter;
  filter.sort = JobSort::kJobId;
  EXPECT_THAT(Ids(RankJobs(config_, report_, filter).jobs),
              ElementsAre("big", "nochips", "small"));
  filter.sort = JobSort::kChips;
  EXPECT_THAT(Ids(RankJobs(config_, report_, filter).jobs),
              ElementsAre("big", "small", "nochips"));
  filter.limit = 2;
  filter.sort = JobSort::kJobId;
  JobsView view = RankJobs(config_, report_, filter);
  EXPECT_THAT(Ids(view.jobs), ElementsAre("big", "nochips"));
  EXPECT_EQ(view.matched, 3);
}

TEST(JobSortTest, MpgLowestFirstUndefinedLastAtRiskMostFirst) {
  JobReport low, high, undefined;
  low.job_id = "c-low";
  high.job_id = "a-high";
  undefined.job_id = "b-undefined";
  for (JobReport* j : {&low, &high}) {
    j->total_ns = 100;
    j->costed_productive_ns = 50;
    j->nanos[Index(Category::kProductive)] = 50;
    j->nanos[Index(Category::kIdle)] = 50;
  }
  low.ideal_seconds = 10e-9;
  high.ideal_seconds = 40e-9;
  low.at_risk_ns = 5;
  high.at_risk_ns = 1;
  std::vector<JobReport> jobs = {undefined, high, low};
  SortJobs(JobSort::kMpg, &jobs);
  EXPECT_EQ(jobs[0].job_id, "c-low");
  EXPECT_EQ(jobs[1].job_id, "a-high");
  EXPECT_EQ(jobs[2].job_id, "b-undefined");
  SortJobs(JobSort::kAtRisk, &jobs);
  EXPECT_EQ(jobs[0].job_id, "c-low");
  EXPECT_EQ(jobs[1].job_id, "a-high");
}

TEST(JobSortTest, ParseJobSortNamesABadOne) {
  EXPECT_EQ(*ParseJobSort(""), JobSort::kLost);
  EXPECT_EQ(*ParseJobSort("lost"), JobSort::kLost);
  EXPECT_EQ(*ParseJobSort("job_id"), JobSort::kJobId);
  EXPECT_EQ(*ParseJobSort("chips"), JobSort::kChips);
  EXPECT_EQ(*ParseJobSort("mpg"), JobSort::kMpg);
  EXPECT_EQ(*ParseJobSort("at_risk"), JobSort::kAtRisk);
  absl::StatusOr<JobSort> bad = ParseJobSort("size");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(std::string(bad.status().message()),
              ::testing::HasSubstr("sort: unknown order 'size'"));
}

TEST_F(DrilldownTest, SegmentValueAgreesWithTheReportsSegments) {
  for (const auto& [dimension, values] : report_.segments) {
    for (const auto& [value, totals] : values) {
      JobFilter filter;
      filter.segments = {{dimension, value}};
      EXPECT_EQ(RankJobs(config_, report_, filter).matched, totals.jobs)
          << dimension << "=" << value;
    }
  }
  EXPECT_EQ(SegmentValue(config_, testing::Job(report_, "small"), "label:team"),
            std::nullopt);
}

TEST_F(DrilldownTest, CheckDimension) {
  for (const char* ok :
       {"accelerator", "workload", "framework", "size", "label:team"}) {
    EXPECT_TRUE(CheckDimension(ok).ok()) << ok;
  }
  for (const char* bad : {"", "team", "label:", "Accelerator"}) {
    absl::Status s = CheckDimension(bad);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_THAT(std::string(s.message()),
                HasSubstr(std::string("'") + bad + "'"));
  }
}

TEST_F(DrilldownTest, ParseJobState) {
  EXPECT_EQ(*ParseJobState("RECOVERING"), JobStateKind::kRecovering);
  EXPECT_EQ(*ParseJobState("ENDED"), JobStateKind::kEnded);
  absl::StatusOr<JobStateKind> bad = ParseJobState("running");
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(bad.status().message()), HasSubstr("'running'"));
}

TEST_F(DrilldownTest, FleetViewHasOneDimensionAndTheWorstJobs) {
  absl::StatusOr<FleetView> view = MakeFleetView(report_, "accelerator", 1);
  ASSERT_TRUE(view.ok()) << view.status();
  EXPECT_EQ(view->by, "accelerator");
  EXPECT_THAT(view->segments, ElementsAre(Pair("a100", ::testing::_),
                                          Pair("tpu-v5p", ::testing::_),
                                          Pair("unknown", ::testing::_)));
  EXPECT_EQ(view->fleet.jobs, 3);
  EXPECT_THAT(Ids(view->worst_jobs), ElementsAre("big"));
  EXPECT_EQ(MakeFleetView(report_, "label:none", 5)->segments.size(), 0u);
  EXPECT_EQ(MakeFleetView(report_, "color", 5).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST_F(DrilldownTest, BadputByCategoryLargestFirstWithoutProductive) {
  CategoryNanos nanos{};
  nanos[Index(Category::kQueued)] = 5;
  nanos[Index(Category::kLost)] = 9;
  nanos[Index(Category::kProductive)] = 100;
  nanos[Index(Category::kInit)] = 5;
  nanos[Index(Category::kExcluded)] = 50;  // no badput (exclusions)
  EXPECT_THAT(BadputByCategory(nanos),
              ElementsAre(Pair(Category::kLost, 9), Pair(Category::kQueued, 5),
                          Pair(Category::kInit, 5)));
  EXPECT_THAT(BadputByCategory(report_.fleet.chip_seconds),
              ElementsAre(Pair(Category::kIdle, 64 * 1800.0 + 8 * 600.0),
                          Pair(Category::kQueued, 64 * 600.0 + 8 * 1800.0)));
}

}  // namespace
}  // namespace goodput::core

namespace goodput::core {
namespace {

// 74 h: 1 h queued, 1 h recovery (72 h running), 12 interruptions, 72
// saves of 60 s counted by the tracker (the timeline, cut, shows 32):
// M 6 h, C 60 s.
JobView HourlySaverView() {
  constexpr int64_t kHour = 3600 * kNanosPerSecond;
  JobView view;
  view.job.job_id = "t";
  view.job.chips = 8;
  view.job.workload = v1::JobSubmitted::TRAINING;
  view.job.total_ns = 74 * kHour;
  view.job.nanos[Index(Category::kQueued)] = kHour;
  view.job.nanos[Index(Category::kRecovery)] = kHour;
  view.job.nanos[Index(Category::kCheckpoint)] = 72 * 60 * kNanosPerSecond;
  view.job.interruptions = 12;
  view.job.checkpoints = 72;
  view.timeline.resize(1);
  view.timeline[0].checkpoints = 32;
  view.timeline_omitted = 1;
  return view;
}

TEST(JobViewCheckpointAdviceTest, FromTheReportsSavesNotTheTimelines) {
  const auto a = JobViewCheckpointAdvice(HourlySaverView());
  ASSERT_TRUE(a);
  EXPECT_DOUBLE_EQ(a->mtbi_seconds, 21600);
  EXPECT_DOUBLE_EQ(a->save_seconds, 60);
  EXPECT_DOUBLE_EQ(a->restart_seconds, 300);  // 1 h recovery / 12
  EXPECT_NEAR(a->advised_interval_seconds, 1609.968944, 1e-6);
  EXPECT_DOUBLE_EQ(*a->actual_interval_seconds, 3600);
}

TEST(JobViewCheckpointAdviceTest, NoneWithoutSavesFewOrNotTraining) {
  JobView unsaved = HourlySaverView();
  unsaved.job.checkpoints = 0;  // C unknown (e.g. a version-5 snapshot)
  EXPECT_FALSE(JobViewCheckpointAdvice(unsaved));
  JobView few = HourlySaverView();
  few.job.interruptions = kMinOwnInterruptions - 1;
  EXPECT_FALSE(JobViewCheckpointAdvice(few));
  JobView serving = HourlySaverView();
  serving.job.workload = v1::JobSubmitted::SERVING;
  EXPECT_FALSE(JobViewCheckpointAdvice(serving));
}

// Two interruptions of its own: M from the segment's rate, 1 per 16 chip-
// hours scaled to 8 chips = 2 h; C 60 s: advised sqrt(2 x 60 x 7200).
TEST(JobViewCheckpointAdviceTest, FewInterruptionsTakeTheSegmentsRate) {
  JobView few = HourlySaverView();
  few.job.interruptions = kMinOwnInterruptions - 1;
  few.segment_interruptions_per_chip_second = 1.0 / (16 * 3600);
  const auto a = JobViewCheckpointAdvice(few);
  ASSERT_TRUE(a);
  EXPECT_TRUE(a->mtbi_from_segment);
  EXPECT_DOUBLE_EQ(a->mtbi_seconds, 7200);
  EXPECT_NEAR(a->advised_interval_seconds, std::sqrt(2 * 60 * 7200.0), 1e-9);
  // Enough of its own: the segment's rate is not used.
  JobView own = HourlySaverView();
  own.segment_interruptions_per_chip_second = 1.0 / (16 * 3600);
  EXPECT_DOUBLE_EQ(JobViewCheckpointAdvice(own)->mtbi_seconds, 21600);
}

}  // namespace
}  // namespace goodput::core
