// SPEC section 3 rule 14, elastic jobs: one hand-computed timeline per
// sentence of the rule (held chips, all-allocation, chip weights, resizes,
// RESHARD, PG, rule 4 per size, the two measures, windows, segments),
// plus recognition-time totals and snapshots across a resize.
// Times are on 2026-11-22 (UTC); the job is "j"; stall_after is 600 s.
// tpu-v5p's peak is 459e12 FLOP/s per chip.
#include <cmath>
#include <string>
#include <vector>

#include "core/event_order.h"
#include "core/fleet_tracker.h"
#include "core/job_tracker.h"
#include "core/testing/expect.h"
#include "core/testing/timeline.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"

namespace goodput::core {
namespace {

using ::goodput::core::testing::ExpectSeconds;
using ::goodput::core::testing::Job;
using ::goodput::core::testing::ParseEvents;
using ::goodput::core::testing::Replay;
using ::goodput::core::testing::S;
using ::goodput::core::testing::T;
using ::goodput::core::testing::Timeline;

int64_t At(const std::string& hms) { return T("2026-11-22T" + hms + "Z"); }

double ChipS(const JobReport& j, Category c) {
  return j.chip_seconds[Index(c)];
}

double ChipS(const Totals& t, Category c) { return t.chip_seconds[Index(c)]; }

class ElasticTest : public ::testing::Test {
 protected:
  // Replays `text` (see Timeline) as of `as_of` ("HH:MM:SS") and returns
  // job "j"; the whole report stays in report_.
  JobReport Run(const std::string& text, const std::string& as_of) {
    report_ = Replay(ParseEvents(Timeline(text)), config_, At(as_of));
    return Job(report_, "j");
  }

  Config config_;
  FleetReport report_;
};

// 8 chips wanted, 4 enough; 5 s of work per step at 8 chips
// (1.836e16 FLOPs = 40 ideal chip-seconds).
constexpr char kSubmit[] =
    R"(10:00:00 {"job_submitted":{"chips":8,"min_chips":4,"accelerator":"tpu-v5p","step_flops":1.836e16}})";

// Queued 10 s, two steps of 10 s at 8 chips, a shrink to 4 at 35 with 5 s
// in flight, 10 s of RESHARD, steps of 5 and 10 s at 4 chips.
const std::string kShrink = std::string(kSubmit) + R"(
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
)";

// --- "A job_submitted with min_chips ... is elastic; an implicitly
// submitted job is never elastic."

TEST_F(ElasticTest, MinChipsMakesAJobElastic) {
  JobReport j = Run(kShrink, "10:01:00");
  ASSERT_TRUE(j.min_chips.has_value());
  EXPECT_EQ(*j.min_chips, 4);
  EXPECT_TRUE(JobElastic(j).has_value());
}

TEST_F(ElasticTest, FixedAndImplicitlySubmittedJobsAreNotElastic) {
  Run(R"(
10:00:00 {"job_submitted":{"chips":8}}
10:00:00 {"started":{}}
10:00:05 {"job_id":"implicit","allocation":{"chips":4}}
10:00:10 {"job_id":"implicit","started":{}}
)",
      "10:00:20");
  for (const char* id : {"j", "implicit"}) {
    const JobReport& j = Job(report_, id);
    EXPECT_FALSE(j.min_chips.has_value()) << id;
    EXPECT_FALSE(JobElastic(j).has_value()) << id;
  }
  // With no elastic job, the fleet's degraded time is 0 and its slice
  // efficiency null.
  EXPECT_EQ(TotalsElastic(report_.fleet).degraded_chip_seconds, 0);
  EXPECT_FALSE(TotalsElastic(report_.fleet).slice_efficiency.has_value());
}

// --- "Its held chips are min(allocated, chips), and chips until its first
// allocation."

TEST_F(ElasticTest, HeldChipsAreCappedAtChipsAndChipsBeforeAnAllocation) {
  JobReport j = Run(std::string(kSubmit) + R"(
10:00:00 {"started":{}}
10:00:00 {"activity":{"kind":"INIT"}}
10:00:10 {"allocation":{"chips":12}}
)",
                    "10:00:20");
  // All-allocated from 0 by `started` at 8 chips; 12 allocated hold 8.
  ExpectSeconds(j, 20, {{"init", 20}});
  EXPECT_DOUBLE_EQ(ChipS(j, Category::kInit), 160);
  EXPECT_DOUBLE_EQ(JobElastic(j)->degraded_chip_seconds, 0);
  EXPECT_DOUBLE_EQ(*JobElastic(j)->slice_efficiency, 1.0);
}

// --- "All-allocated while held chips >= min_chips; below that it is
// treated exactly as a fixed-size job below chips, and coming back is not a
// resize."

TEST_F(ElasticTest, BelowMinChipsIsRecoveryAndComingBackIsNoResize) {
  JobReport j = Run(std::string(kSubmit) + R"(
10:00:00 {"allocation":{"chips":8}}
10:00:00 {"started":{}}
10:00:00 {"activity":{"kind":"TRAINING"}}
10:00:10 {"step":{"step":1}}
10:00:15 {"allocation":{"chips":2}}
10:00:25 {"allocation":{"chips":6}}
10:00:30 {"step":{"step":2}}
)",
                    "10:00:30");
  // Step 2 keeps its 5 s before the dip (not lost): 10 s of step time;
  // 15 -> 25 is recovery.
  ExpectSeconds(j, 30, {{"recovery", 10}, {"productive", 20}});
  EXPECT_EQ(j.lost_steps, 0);
  // Recovery at 8 chips; step 1 at 8; step 2 half at 8, half at 6.
  EXPECT_DOUBLE_EQ(ChipS(j, Category::kRecovery), 80);
  EXPECT_DOUBLE_EQ(ChipS(j, Category::kProductive), 80 + 40 + 30);
  // 6 of 8 chips for 5 s.
  EXPECT_DOUBLE_EQ(JobElastic(j)->degraded_chip_seconds, 10);
  EXPECT_DOUBLE_EQ(*JobElastic(j)->slice_efficiency, 150.0 / 160.0);
}

TEST_F(ElasticTest, AFixedSizeJobBelowItsChipsRecovers) {
  JobReport j = Run(R"(
10:00:00 {"job_submitted":{"chips":8}}
10:00:00 {"allocation":{"chips":8}}
10:00:00 {"started":{}}
10:00:00 {"activity":{"kind":"TRAINING"}}
10:00:10 {"allocation":{"chips":6}}
)",
                    "10:00:20");
  ExpectSeconds(j, 20, {{"productive", 10}, {"recovery", 10}});
}

// --- "Chip weight. While all-allocated an instant counts in chip-weighted
// sums with the held chips; while queued or in recovery, with chips."

TEST_F(ElasticTest, ChipWeightFollowsTheAllocation) {
  JobReport j = Run(kShrink, "10:01:00");
  // Time: queued 10; productive 10 + 10 + 5 + 10; lost 5 (in flight at
  // the resize); reshard 10.
  ExpectSeconds(
      j, 60,
      {{"queued", 10}, {"productive", 35}, {"lost", 5}, {"reshard", 10}});
  EXPECT_DOUBLE_EQ(ChipS(j, Category::kQueued), 80);       // 10 s x 8
  EXPECT_DOUBLE_EQ(ChipS(j, Category::kProductive), 220);  // 160 + 60 x 4
  EXPECT_DOUBLE_EQ(ChipS(j, Category::kLost), 40);         // 5 s x 8
  EXPECT_DOUBLE_EQ(ChipS(j, Category::kReshard), 40);      // 10 s x 4
  const Totals& fleet = report_.fleet;
  EXPECT_DOUBLE_EQ(fleet.total_chip_seconds, 380);
  EXPECT_DOUBLE_EQ(ChipS(fleet, Category::kProductive), 220);
  EXPECT_DOUBLE_EQ(fleet.costed_productive_chip_seconds, 220);
  // Segments sum the same way.
  const Totals& seg = report_.segments.at("accelerator").at("tpu-v5p");
  EXPECT_DOUBLE_EQ(seg.total_chip_seconds, 380);
}

// --- "Counters add a step's chip-seconds integrated over its interval, so
// rule 11's totals still agree."

TEST_F(ElasticTest, RecognizedChipSecondsAgreeWithTheReportOnceEnded) {
  Config config;
  JobTracker t("j", &config);
  const std::vector<v1::Event> events =
      ParseEvents(Timeline(kShrink + R"(10:01:00 {"checkpoint":{"step":4}}
10:01:00 {"job_ended":{"outcome":"SUCCEEDED"}})"));
  std::vector<uint32_t> order(events.size());
  for (uint32_t i = 0; i < order.size(); ++i) order[i] = i;
  SortForApply(events, &order);
  for (uint32_t i : order) ASSERT_TRUE(t.Apply(events[i]).ok());
  const Recognized r = t.Recognize();
  const JobReport j = t.Report(At("10:01:00"));
  ASSERT_TRUE(r.min_chips.has_value());
  for (int c = 0; c < kNumCategories; ++c) {
    EXPECT_NEAR(r.chip_seconds[c], j.chip_seconds[c], 1e-9) << c;
  }
  EXPECT_NEAR(r.costed_productive_chip_seconds,
              j.costed_productive_chip_seconds, 1e-9);
  EXPECT_DOUBLE_EQ(r.chip_seconds[Index(Category::kProductive)], 220);
}

// --- "Resize: an allocation that changes the held chips while the job
// stays all-allocated (also a first allocation below chips after a
// started, activity or step made the job all-allocated)."

TEST_F(ElasticTest, FirstAllocationBelowChipsAfterAJobEventIsAResize) {
  JobReport j = Run(std::string(kSubmit) + R"(
10:00:00 {"started":{}}
10:00:00 {"activity":{"kind":"TRAINING"}}
10:00:10 {"step":{"step":1}}
10:00:15 {"allocation":{"chips":4}}
10:00:25 {"step":{"step":2}}
)",
                    "10:00:25");
  // 10 -> 15 in flight at the resize: lost; step 2 is 15 -> 25.
  ExpectSeconds(j, 25, {{"productive", 20}, {"lost", 5}});
  EXPECT_DOUBLE_EQ(ChipS(j, Category::kLost), 40);
  EXPECT_DOUBLE_EQ(ChipS(j, Category::kProductive), 80 + 40);
}

// --- "Before an attempt's first report a resize changes no time, and rule
// 2's conversion of the time before a first step starts at the last
// resize."

TEST_F(ElasticTest, ResizeBeforeTheFirstReportKeepsRuleTwo) {
  JobReport j = Run(std::string(kSubmit) + R"(
10:00:00 {"started":{}}
10:00:03 {"allocation":{"chips":4}}
10:00:07 {"step":{"step":1}}
10:00:10 {"step":{"step":2}}
)",
                    "10:00:10");
  // 0 -> 3 idle (at 8 chips); step 1 is 3 -> 7 (4 s), step 2 3 s; rule 4
  // at 4 chips: 4 - 3 = 1 s compile.
  ExpectSeconds(j, 10, {{"idle", 3}, {"compile", 1}, {"productive", 6}});
  EXPECT_EQ(j.lost_steps, 0);
  EXPECT_DOUBLE_EQ(ChipS(j, Category::kIdle), 24);
  EXPECT_DOUBLE_EQ(ChipS(j, Category::kCompile), 4);
  EXPECT_DOUBLE_EQ(ChipS(j, Category::kProductive), 24);
  // As of 5, before the first step: idle, nothing in flight.
  JobReport early = Run(std::string(kSubmit) + R"(
10:00:00 {"started":{}}
10:00:03 {"allocation":{"chips":4}}
)",
                        "10:00:05");
  ExpectSeconds(early, 5, {{"idle", 5}});
  EXPECT_DOUBLE_EQ(ChipS(early, Category::kIdle), 24 + 8);
}

// --- "A step at the same time completes before it (unlike rule 1's order
// for other allocations)."

TEST_F(ElasticTest, AStepAtTheResizeInstantCompletesBeforeIt) {
  JobReport j = Run(std::string(kSubmit) + R"(
10:00:00 {"allocation":{"chips":8}}
10:00:00 {"started":{}}
10:00:00 {"activity":{"kind":"TRAINING"}}
10:00:10 {"step":{"step":1}}
10:00:20 {"allocation":{"chips":4}}
10:00:20 {"step":{"step":2}}
10:00:30 {"step":{"step":3}}
)",
                    "10:00:30");
  ExpectSeconds(j, 30, {{"productive", 30}});
  EXPECT_DOUBLE_EQ(ChipS(j, Category::kProductive), 80 + 80 + 40);
}

// --- "The time of the step in flight at the resize becomes lost for
// TRAINING and OTHER workloads ..., and the next step's time starts at the
// resize."

TEST_F(ElasticTest, TheStepInFlightIsLostAndTheNextStartsAtTheResize) {
  const std::string events = std::string(kSubmit) + R"(
10:00:00 {"allocation":{"chips":8}}
10:00:00 {"started":{}}
10:00:00 {"activity":{"kind":"TRAINING"}}
10:00:10 {"step":{"step":1}}
10:00:10 {"checkpoint":{"step":1}}
10:00:15 {"allocation":{"chips":4}}
)";
  JobReport j = Run(events, "10:00:20");
  ExpectSeconds(j, 20, {{"productive", 15}, {"lost", 5}});
  EXPECT_EQ(j.at_risk_ns, S(5));  // only 15 -> 20 is in flight
  // A step completed at 25 took 10 s (15 -> 25), not 15.
  JobReport later = Run(events + R"(10:00:25 {"step":{"step":2}})", "10:00:25");
  EXPECT_EQ(later.at_risk_ns, S(10));
  ExpectSeconds(later, 25, {{"productive", 20}, {"lost", 5}});
}

// "... (it stays productive, in no step, for SERVING and BULK_INFERENCE)";
// "Any workload may be elastic."
TEST_F(ElasticTest, ServingKeepsTheStepInFlightAtAResizeProductive) {
  JobReport j = Run(R"(
10:00:00 {"job_submitted":{"chips":8,"min_chips":2,"workload":"SERVING"}}
10:00:00 {"allocation":{"chips":8}}
10:00:00 {"started":{}}
10:00:00 {"activity":{"kind":"SERVING"}}
10:00:10 {"step":{"step":1}}
10:00:15 {"allocation":{"chips":2}}
10:00:20 {"step":{"step":2}}
)",
                    "10:00:20");
  ExpectSeconds(j, 20, {{"productive", 20}});
  EXPECT_EQ(j.lost_steps, 0);
  EXPECT_DOUBLE_EQ(ChipS(j, Category::kProductive), 80 + 40 + 10);
  EXPECT_EQ(j.last_step, 2);
}

// --- "RESHARD (re-sharding after a resize) is the category reshard, for
// any job that reports it."

TEST_F(ElasticTest, ReshardIsItsOwnCategoryForAnyJob) {
  JobReport j = Run(R"(
10:00:00 {"job_submitted":{"chips":8}}
10:00:00 {"started":{}}
10:00:00 {"activity":{"kind":"RESHARD"}}
10:00:07 {"activity":{"kind":"IDLE"}}
)",
                    "10:00:10");
  ExpectSeconds(j, 10, {{"reshard", 7}, {"idle", 3}});
}

// --- "PG. A step's ideal chip-seconds are max(flops / peak_flops, bytes /
// peak_bw) ..., so they do not depend on the allocation; an elastic job's
// PG is ideal over productive chip-seconds, and its ideal_seconds is ideal
// chip-seconds / chips. Its SG, RG and goodput stay time ratios and its
// MPG is SG x RG x PG; fleet ratios are chip-weighted, so a one-job fleet's
// RG can differ from its job's."

TEST_F(ElasticTest, IdealChipSecondsDoNotDependOnTheAllocation) {
  JobReport j = Run(kShrink, "10:01:00");
  // Four productive steps of 40 ideal chip-seconds each: 160; / 8 chips.
  EXPECT_NEAR(j.ideal_seconds, 20, 1e-9);
  EXPECT_NEAR(report_.fleet.ideal_chip_seconds, 160, 1e-9);
}

TEST_F(ElasticTest, RatiosOfAnElasticJobAndItsFleet) {
  JobReport j = Run(kShrink, "10:01:00");
  const Ratios r = JobRatios(j);
  EXPECT_DOUBLE_EQ(*r.sg, 50.0 / 60.0);
  EXPECT_DOUBLE_EQ(*r.rg, 35.0 / 50.0);
  EXPECT_DOUBLE_EQ(*r.goodput, 35.0 / 60.0);
  EXPECT_NEAR(*r.pg, 160.0 / 220.0, 1e-12);  // not 20 / 35 (time)
  EXPECT_NEAR(*r.mpg, *r.sg * *r.rg * *r.pg, 1e-12);
  const Ratios f = ComputeRatios(report_.fleet).ratios;
  EXPECT_NEAR(*f.rg, 220.0 / 300.0, 1e-12);  // chip-weighted: not 0.7
  EXPECT_NEAR(*f.sg, 300.0 / 380.0, 1e-12);
  EXPECT_NEAR(*f.pg, 160.0 / 220.0, 1e-12);
}

// --- "Rule 4 compares a first step with the mean of the completed steps
// (not first of their attempt) that completed at the held chips at which
// that first step completed; with none, nothing is compile."

TEST_F(ElasticTest, CompileComparesWithStepsAtTheSameHeldChips) {
  JobReport j = Run(std::string(kSubmit) + R"(
10:00:00 {"allocation":{"chips":8}}
10:00:00 {"started":{}}
10:00:00 {"activity":{"kind":"TRAINING"}}
10:00:20 {"step":{"step":1}}
10:00:30 {"step":{"step":2}}
10:00:30 {"allocation":{"chips":4}}
10:00:50 {"step":{"step":3}}
)",
                    "10:00:50");
  // Mean at 8 chips: step 2's 10 s, so 20 - 10 = 10 s compile (the mean
  // of all non-first steps, 15, would give 5).
  ExpectSeconds(j, 50, {{"compile", 10}, {"productive", 40}});
}

TEST_F(ElasticTest, NoStepsAtTheFirstStepsSizeMeansNoCompile) {
  JobReport j = Run(std::string(kSubmit) + R"(
10:00:00 {"allocation":{"chips":8}}
10:00:00 {"started":{}}
10:00:00 {"activity":{"kind":"TRAINING"}}
10:00:05 {"allocation":{"chips":4}}
10:00:25 {"step":{"step":1}}
10:00:25 {"allocation":{"chips":8}}
10:00:35 {"step":{"step":2}}
)",
                    "10:00:35");
  // Step 1 (20 s at 4 chips) has no step at 4 chips to compare with; the
  // mean at 8 (10 s) does not apply.
  ExpectSeconds(j, 35, {{"lost", 5}, {"productive", 30}});
}

// --- "Measures: degraded_chip_seconds = (chips - held chips) x time while
// all-allocated; slice_efficiency = held / requested chip-seconds while
// all-allocated (at most 1; null when never all-allocated)."

TEST_F(ElasticTest, DegradedChipSecondsAndSliceEfficiency) {
  JobReport j = Run(kShrink, "10:01:00");
  // All-allocated 10 -> 60: 25 s at 8, 25 s at 4 of 8.
  const ElasticMeasures m = *JobElastic(j);
  EXPECT_DOUBLE_EQ(m.degraded_chip_seconds, 100);
  EXPECT_DOUBLE_EQ(*m.slice_efficiency, 300.0 / 400.0);
  // Never all-allocated: null.
  JobReport queued = Run(kSubmit, "10:00:30");
  EXPECT_FALSE(JobElastic(queued)->slice_efficiency.has_value());
  EXPECT_EQ(JobElastic(queued)->degraded_chip_seconds, 0);
}

// "Fleet and segment values sum over elastic jobs only ..."
TEST_F(ElasticTest, FleetMeasuresSumOverElasticJobsOnly) {
  Run(kShrink + R"(
10:00:00 {"job_id":"fixed","job_submitted":{"chips":16}}
10:00:00 {"job_id":"fixed","started":{}}
)",
      "10:01:00");
  const ElasticMeasures fleet = TotalsElastic(report_.fleet);
  EXPECT_DOUBLE_EQ(fleet.degraded_chip_seconds, 100);
  EXPECT_DOUBLE_EQ(*fleet.slice_efficiency, 0.75);
  const Totals& seg = report_.segments.at("size").at("<=8");
  EXPECT_DOUBLE_EQ(TotalsElastic(seg).degraded_chip_seconds, 100);
  const Totals& big = report_.segments.at("size").at("<=64");
  EXPECT_EQ(TotalsElastic(big).degraded_chip_seconds, 0);
  EXPECT_FALSE(TotalsElastic(big).slice_efficiency.has_value());
}

// "... both are clipped to windows by instant."
TEST_F(ElasticTest, MeasuresAreClippedToTheWindow) {
  config_.since_ns = At("10:00:40");
  JobReport j = Run(kShrink, "10:01:00");
  // 40 -> 60 at 4 of 8 chips.
  EXPECT_DOUBLE_EQ(JobElastic(j)->degraded_chip_seconds, 80);
  EXPECT_DOUBLE_EQ(*JobElastic(j)->slice_efficiency, 0.5);
  // reshard 40 -> 45, steps 45 -> 50 and 50 -> 60, all at 4 chips.
  ExpectSeconds(j, 20, {{"reshard", 5}, {"productive", 15}});
  EXPECT_DOUBLE_EQ(ChipS(j, Category::kProductive), 60);
}

// --- "The segment size, a job's chips in reports and the per-job series
// ranking use the requested chips."

TEST_F(ElasticTest, SizeAndChipsAreTheRequestedChips) {
  JobReport j = Run(kShrink, "10:01:00");
  EXPECT_EQ(j.chips, 8);
  EXPECT_EQ(report_.segments.at("size").count("<=8"), 1u);
}

// --- Snapshots: a tracker saved with a resize pending (a step at the same
// instant may follow) restores to the one that applied every event.

TEST_F(ElasticTest, SnapshotsRoundTripTheElasticState) {
  Config config;
  const std::vector<v1::Event> events =
      ParseEvents(Timeline(std::string(kSubmit) + R"(
10:00:00 {"allocation":{"chips":8}}
10:00:00 {"started":{}}
10:00:00 {"activity":{"kind":"TRAINING"}}
10:00:20 {"step":{"step":1}}
10:00:30 {"allocation":{"chips":4}}
10:00:30 {"step":{"step":2}}
10:00:50 {"step":{"step":3}}
)"));
  std::vector<uint32_t> order(events.size());
  for (uint32_t i = 0; i < order.size(); ++i) order[i] = i;
  SortForApply(events, &order);
  for (size_t cut = 0; cut <= order.size(); ++cut) {
    JobTracker whole("j", &config), part("j", &config);
    for (size_t i = 0; i < cut; ++i) {
      ASSERT_TRUE(whole.Apply(events[order[i]]).ok());
      ASSERT_TRUE(part.Apply(events[order[i]]).ok());
    }
    internal::v1::JobTrackerState state;
    part.SaveState(&state);
    absl::StatusOr<JobTracker> back = JobTracker::FromState(state, &config);
    ASSERT_TRUE(back.ok()) << back.status();
    for (size_t i = cut; i < order.size(); ++i) {
      ASSERT_TRUE(whole.Apply(events[order[i]]).ok());
      ASSERT_TRUE(back->Apply(events[order[i]]).ok());
    }
    const JobReport a = whole.Report(At("10:00:50"));
    const JobReport b = back->Report(At("10:00:50"));
    EXPECT_EQ(a.nanos, b.nanos) << cut;
    EXPECT_EQ(a.chip_seconds, b.chip_seconds) << cut;
    EXPECT_EQ(a.min_chips, b.min_chips) << cut;
    EXPECT_EQ(a.costed_productive_chip_seconds,
              b.costed_productive_chip_seconds)
        << cut;
    internal::v1::JobTrackerState sa, sb;
    whole.SaveState(&sa);
    back->SaveState(&sb);
    EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(sa, sb))
        << cut;
  }
}

// A version-2 record (before rule 14) is rebuilt, not misread.
TEST_F(ElasticTest, AVersionTwoRecordIsRefused) {
  Config config;
  JobTracker t("j", &config);
  internal::v1::JobTrackerState state;
  t.SaveState(&state);
  state.set_version(2);
  absl::StatusOr<JobTracker> back = JobTracker::FromState(state, &config);
  ASSERT_FALSE(back.ok());
  EXPECT_TRUE(absl::IsInvalidArgument(back.status()));
  EXPECT_NE(back.status().message().find("version: 2 is not 3 to 7"),
            std::string::npos)
      << back.status();
}

}  // namespace
}  // namespace goodput::core
