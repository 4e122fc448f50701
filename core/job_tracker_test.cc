// Hand-computed timelines for every rule of SPEC section 3. Each expected
// number carries its arithmetic; all times are on 2026-11-22 (UTC) and the
// job is "j" unless a line names another. Default stall_after is 600 s.
#include "core/job_tracker.h"

#include <string>

#include "core/testing/expect.h"
#include "core/testing/timeline.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace goodput::core {
namespace {

using ::goodput::core::testing::ExpectSeconds;
using ::goodput::core::testing::Job;
using ::goodput::core::testing::ParseEvents;
using ::goodput::core::testing::Replay;
using ::goodput::core::testing::T;
using ::goodput::core::testing::Timeline;

class JobTimelineTest : public ::testing::Test {
 protected:
  // Replays `text` (see Timeline) and returns job "j" as of `as_of`
  // ("HH:MM:SS").
  JobReport Run(const std::string& text, const std::string& as_of) {
    report_ = Replay(ParseEvents(Timeline(text)), config_,
                     "2026-11-22T" + as_of + "Z");
    return Job(report_, "j");
  }

  Config config_;
  FleetReport report_;
};

// The preemption timeline most cases below vary.
constexpr char kPreempted[] = R"(
10:00:00 {"job_submitted":{"chips":8}}
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
)";

// --- Rule 1: allocation, queueing, implicit submission and order.

TEST_F(JobTimelineTest, QueuedUntilFirstAllAllocated) {
  JobReport j = Run(R"(
10:00:00 {"job_submitted":{"chips":4}}
10:02:00 {"allocation":{"chips":4}}
10:02:00 {"started":{}}
10:02:10 {"step":{"step":1}}
10:02:20 {"step":{"step":2}}
10:02:30 {"step":{"step":3}}
10:02:30 {"job_ended":{"outcome":"SUCCEEDED"}}
)",
                    "10:02:30");
  // queued 10:00:00 -> 10:02:00 = 120; three 10 s steps = 30; mean of the
  // non-first steps is 10, so step 1 (10 s) has no compile excess.
  ExpectSeconds(j, 150, {{"queued", 120}, {"productive", 30}});
  EXPECT_EQ(j.state, JobStateKind::kEnded);
  EXPECT_EQ(j.last_step, 3);
  EXPECT_EQ(j.last_checkpoint, 3);  // all durable at SUCCEEDED
  Ratios r = JobRatios(j);
  EXPECT_DOUBLE_EQ(*r.sg, 1 - 120.0 / 150);  // 0.2
  EXPECT_DOUBLE_EQ(*r.rg, 1.0);              // 30 / (150 - 120)
  EXPECT_DOUBLE_EQ(*r.goodput, 30.0 / 150);
  EXPECT_FALSE(r.pg.has_value());  // no accelerator: no cost
  EXPECT_FALSE(r.mpg.has_value());
}

TEST_F(JobTimelineTest, PartialAllocationBeforeFirstFullIsQueued) {
  JobReport j = Run(R"(
10:00:00 {"job_submitted":{"chips":8}}
10:01:00 {"allocation":{"chips":4}}
10:02:00 {"allocation":{"chips":8}}
10:02:00 {"started":{}}
)",
                    "10:03:00");
  // queued 10:00 -> 10:02 = 120 although 4 chips came at 10:01; then 60 s
  // of an attempt that has reported nothing yet: idle (rule 2), not at risk.
  ExpectSeconds(j, 180, {{"queued", 120}, {"idle", 60}});
  EXPECT_EQ(j.at_risk_ns, 0);
  EXPECT_EQ(j.state, JobStateKind::kRunning);
}

TEST_F(JobTimelineTest, ImplicitSubmissionAndAllocationAtFirstEvent) {
  JobReport j = Run(R"(
10:00:00 {"activity":{"kind":"INIT"}}
10:00:30 {"activity":{"kind":"TRAINING"}}
10:00:40 {"step":{"step":1}}
)",
                    "10:00:40");
  // Submitted and all-allocated at the first event: queued 0, init 30,
  // step 1 = 10:00:30 -> 10:00:40 = 10.
  ExpectSeconds(j, 40, {{"init", 30}, {"productive", 10}});
  EXPECT_EQ(j.chips, 0);  // no chip weight known
}

TEST_F(JobTimelineTest, AllocatedButNothingReportedIsIdle) {
  JobReport j = Run(R"(
10:00:00 {"job_submitted":{"chips":2}}
10:01:00 {"allocation":{"chips":2}}
10:03:00 {"started":{}}
10:03:10 {"step":{"step":1}}
)",
                    "10:03:10");
  // queued 60; allocated with no attempt 10:01 -> 10:03 = 120 idle; step 10.
  ExpectSeconds(j, 190, {{"queued", 60}, {"idle", 120}, {"productive", 10}});
}

TEST_F(JobTimelineTest, SameTimeOrderPutsStepBeforeInterruption) {
  // The interruption comes first in the file but a step at the same time
  // applies before it, so step 1 completes (10 s) and nothing is in flight.
  JobReport j = Run(R"(
10:00:00 {"started":{}}
10:00:10 {"interruption":{"reason":"FAILED"}}
10:00:10 {"step":{"step":1}}
)",
                    "10:00:20");
  // productive 10 (not durable, no resume yet: at risk); recovery 10.
  ExpectSeconds(j, 20, {{"productive", 10}, {"recovery", 10}});
  EXPECT_EQ(j.at_risk_ns, 10'000'000'000);
  EXPECT_EQ(j.state, JobStateKind::kRecovering);
  EXPECT_EQ(j.interruptions, 1);
}

TEST_F(JobTimelineTest, SameTimeOrderSubmittedAllocatedStarted) {
  // File order is reversed; kind order makes queued zero.
  JobReport j = Run(R"(
10:00:00 {"started":{}}
10:00:00 {"allocation":{"chips":4}}
10:00:00 {"job_submitted":{"chips":4}}
10:00:10 {"step":{"step":1}}
)",
                    "10:00:10");
  ExpectSeconds(j, 10, {{"productive", 10}});
  EXPECT_EQ(j.chips, 4);
}

// --- Rule 2: step time.

TEST_F(JobTimelineTest, StepsWithoutAnyActivityAreTraining) {
  JobReport j = Run(R"(
10:00:00 {"started":{}}
10:00:10 {"step":{"step":1}}
10:00:20 {"step":{"step":2}}
)",
                    "10:00:25");
  // 10 + 10 completed + 5 in flight, all productive; nothing durable.
  ExpectSeconds(j, 25, {{"productive", 25}});
  EXPECT_EQ(j.at_risk_ns, 25'000'000'000);
  EXPECT_EQ(j.last_step, 2);
  EXPECT_FALSE(j.last_checkpoint.has_value());
}

TEST_F(JobTimelineTest, StepTimeAccruesAcrossInterleavedActivities) {
  JobReport j = Run(R"(
10:00:00 {"started":{}}
10:00:10 {"step":{"step":1}}
10:00:15 {"activity":{"kind":"CHECKPOINT"}}
10:00:20 {"activity":{"kind":"TRAINING"}}
10:00:30 {"step":{"step":2}}
)",
                    "10:00:30");
  // step 2 = 10:00:10-10:00:15 (5) + 10:00:20-10:00:30 (10) = 15;
  // checkpoint 5; step 1 = 10, below the mean 15: no compile.
  ExpectSeconds(j, 30, {{"checkpoint", 5}, {"productive", 25}});
}

TEST_F(JobTimelineTest, StepInAnotherActivitySwitchesBackToTraining) {
  JobReport j = Run(R"(
10:00:00 {"started":{}}
10:00:10 {"step":{"step":1}}
10:00:20 {"activity":{"kind":"DATA_WAIT"}}
10:00:25 {"step":{"step":2}}
10:00:35 {"step":{"step":3}}
)",
                    "10:00:35");
  // step 2 = 10:00:10-10:00:20 = 10; DATA_WAIT 5; back in TRAINING at
  // 10:00:25, so step 3 = 10. Mean 10: no compile on step 1.
  ExpectSeconds(j, 35, {{"data_wait", 5}, {"productive", 30}});
}

TEST_F(JobTimelineTest, InputWaitAndIdleSecondsInsideSteps) {
  JobReport j = Run(R"(
10:00:00 {"started":{}}
10:00:10 {"step":{"step":1}}
10:00:30 {"step":{"step":2,"input_wait_seconds":5}}
10:00:40 {"step":{"step":3,"input_wait_seconds":2,"idle_seconds":3}}
)",
                    "10:00:40");
  // step 2 (20): data_wait 5, productive 15; step 3 (10): data_wait 2,
  // idle 3, productive 5; step 1 (10) is below the mean (20+10)/2 = 15.
  ExpectSeconds(j, 40, {{"data_wait", 7}, {"idle", 3}, {"productive", 30}});
}

TEST_F(JobTimelineTest, InputWaitAndIdleAreCappedByStepTime) {
  JobReport j = Run(R"(
10:00:00 {"started":{}}
10:00:10 {"step":{"step":1,"input_wait_seconds":8,"idle_seconds":5}}
)",
                    "10:00:10");
  // step 10: data_wait min(8, 10) = 8, idle min(5, 10 - 8) = 2.
  ExpectSeconds(j, 10, {{"data_wait", 8}, {"idle", 2}});
}

TEST_F(JobTimelineTest, HangBetweenEventsIsIdle) {
  JobReport j = Run(R"(
10:00:00 {"started":{}}
10:00:10 {"step":{"step":1}}
10:30:10 {"step":{"step":2}}
)",
                    "10:30:10");
  // step 2 accrues only 600 s after the last event (10:00:10 -> 10:10:10);
  // 10:10:10 -> 10:30:10 = 1200 is idle. Mean 600 > step 1: no compile.
  ExpectSeconds(j, 1810, {{"idle", 1200}, {"productive", 610}});
}

TEST_F(JobTimelineTest, HangInFlightAtAsOfIsIdle) {
  JobReport j = Run(R"(
10:00:00 {"started":{}}
10:00:10 {"step":{"step":1}}
)",
                    "10:20:10");
  // in flight 10:00:10 -> 10:10:10 = 600 productive, then 600 idle.
  ExpectSeconds(j, 1210, {{"idle", 600}, {"productive", 610}});
  EXPECT_EQ(j.at_risk_ns, 610'000'000'000);
}

TEST_F(JobTimelineTest, StallAfterIsConfigurable) {
  config_.stall_after_ns = 60'000'000'000;
  JobReport j = Run(R"(
10:00:00 {"started":{}}
10:00:00 {"activity":{"kind":"TRAINING"}}
)",
                    "10:05:00");
  // 60 s in flight, then 240 s hung.
  ExpectSeconds(j, 300, {{"idle", 240}, {"productive", 60}});
}

TEST_F(JobTimelineTest, LongActivityIsNotAHang) {
  JobReport j = Run(R"(
10:00:00 {"activity":{"kind":"COMPILE"}}
)",
                    "10:30:00");
  // stall_after applies to in-flight step time only: 1800 s of compile.
  ExpectSeconds(j, 1800, {{"compile", 1800}});
}

TEST_F(JobTimelineTest, CustomActivityByName) {
  JobReport j = Run(R"(
10:00:00 {"started":{}}
10:00:10 {"activity":{"kind":"CUSTOM","name":"eval"}}
10:00:40 {"activity":{"kind":"TRAINING"}}
10:00:50 {"step":{"step":1}}
10:00:50 {"activity":{"kind":"IDLE"}}
)",
                    "10:01:00");
  // 10:00:00 -> 10:00:10 before the first report, an activity: idle 10
  // (rule 2); custom "eval" 30; step 1 = 10; IDLE activity 10.
  ExpectSeconds(j, 60, {{"custom", 30}, {"productive", 10}, {"idle", 20}});
  EXPECT_EQ(j.custom_nanos.at("eval"), 30'000'000'000);
}

TEST_F(JobTimelineTest, TrainingInFlightAtSucceededIsIdle) {
  JobReport j = Run(R"(
10:00:00 {"started":{}}
10:00:10 {"step":{"step":1}}
10:00:25 {"job_ended":{"outcome":"SUCCEEDED"}}
)",
                    "10:00:25");
  // step 1 = 10; 15 s in flight at SUCCEEDED is idle.
  ExpectSeconds(j, 25, {{"productive", 10}, {"idle", 15}});
  EXPECT_EQ(j.at_risk_ns, 0);
}

TEST_F(JobTimelineTest, ServingInFlightStaysProductiveAcrossInterruption) {
  JobReport j = Run(R"(
10:00:00 {"job_submitted":{"chips":1,"workload":"SERVING"}}
10:00:00 {"started":{}}
10:00:10 {"step":{"step":1,"idle_seconds":4}}
10:00:15 {"interruption":{"reason":"HOST_FAILURE"}}
10:01:15 {"started":{}}
)",
                    "10:01:15");
  // step 1 (10): idle 4, productive 6; in flight 5 stays productive for
  // serving; recovery 10:00:15 -> 10:01:15 = 60.
  ExpectSeconds(j, 75, {{"idle", 4}, {"productive", 11}, {"recovery", 60}});
  EXPECT_EQ(j.at_risk_ns, 0);  // serving: durable when completed
  EXPECT_EQ(j.last_checkpoint, 1);
  EXPECT_EQ(j.lost_steps, 0);
}

// --- Rule 3: duplicates.

TEST_F(JobTimelineTest, DuplicatesWithAttemptChangeNothing) {
  JobReport j = Run(R"(
10:00:00 {"attempt":"a","started":{}}
10:00:10 {"attempt":"a","step":{"step":1}}
10:00:15 {"attempt":"a","step":{"step":1}}
10:00:20 {"attempt":"a","step":{"step":2}}
10:00:20 {"attempt":"a","checkpoint":{"step":2}}
10:00:22 {"attempt":"a","checkpoint":{"step":2}}
10:00:25 {"attempt":"a","started":{}}
)",
                    "10:00:30");
  // Dups: step 1 again, checkpoint 2 again, started for attempt a: 3.
  // No restart: 20 completed + 10 in flight, productive.
  ExpectSeconds(j, 30, {{"productive", 30}});
  EXPECT_EQ(j.duplicates, 3);
  EXPECT_EQ(j.interruptions, 0);
  EXPECT_EQ(j.at_risk_ns, 10'000'000'000);  // steps 1-2 durable
}

// Found by core_fuzzer: an id on a step names the running id-less attempt;
// a step number not above that attempt's highest counted as -1 steps.
TEST_F(JobTimelineTest, StepNamingIdlessAttemptBelowItsHighestIsDuplicate) {
  JobReport j = Run(R"(
10:00:00 {"started":{}}
10:00:10 {"step":{"step":1}}
10:00:20 {"step":{"step":2}}
10:00:30 {"attempt":"a","step":{"step":1}}
10:00:40 {"attempt":"a","step":{"step":3}}
)",
                    "10:00:40");
  // (a, 1) is a duplicate of the running attempt's step 1: no restart, no
  // negative step count. (a, 3) names the attempt and completes step 3 in
  // 20 s (10:00:20 -> 10:00:40). Non-first mean (10 + 20) / 2 = 15 > step
  // 1's 10: no compile. Productive 10 + 10 + 20 = 40.
  ExpectSeconds(j, 40, {{"productive", 40}});
  EXPECT_EQ(j.duplicates, 1);
  EXPECT_EQ(j.interruptions, 0);
  EXPECT_EQ(j.last_step, 3);
}

TEST_F(JobTimelineTest, InterruptionForEndedAttemptIsDuplicate) {
  JobReport j = Run(R"(
10:00:00 {"attempt":"a","started":{}}
10:00:10 {"attempt":"a","step":{"step":1}}
10:00:20 {"attempt":"a","interruption":{"reason":"PREEMPTED"}}
10:00:25 {"attempt":"a","interruption":{"reason":"PREEMPTED"}}
)",
                    "10:00:40");
  // in flight 10 lost at 10:00:20; recovery 20; second one is a duplicate.
  ExpectSeconds(j, 40, {{"productive", 10}, {"lost", 10}, {"recovery", 20}});
  EXPECT_EQ(j.duplicates, 1);
  EXPECT_EQ(j.interruptions, 1);
}

TEST_F(JobTimelineTest, DuplicateDoesNotResetTheHangClock) {
  config_.stall_after_ns = 60'000'000'000;
  JobReport j = Run(R"(
10:00:00 {"attempt":"a","started":{}}
10:00:10 {"attempt":"a","step":{"step":1}}
10:00:50 {"attempt":"a","step":{"step":1}}
)",
                    "10:02:10");
  // The duplicate at 10:00:50 changes nothing: in flight from 10:00:10,
  // 60 s productive, then 60 s idle.
  ExpectSeconds(j, 130, {{"productive", 70}, {"idle", 60}});
}

// --- Rule 4: program startup (compile excess of the first step).

TEST_F(JobTimelineTest, FirstStepExcessOverMeanIsCompile) {
  JobReport j = Run(R"(
10:00:00 {"started":{}}
10:01:00 {"step":{"step":1}}
10:01:10 {"step":{"step":2}}
10:01:30 {"step":{"step":3}}
)",
                    "10:01:30");
  // mean of steps 2, 3 = (10 + 20) / 2 = 15; step 1: compile 60 - 15 = 45,
  // productive 15 + 10 + 20 = 45.
  ExpectSeconds(j, 90, {{"compile", 45}, {"productive", 45}});
}

TEST_F(JobTimelineTest, CompileEstimateIsRecomputedAsStepsArrive) {
  const std::string text = R"(
10:00:00 {"started":{}}
10:01:00 {"step":{"step":1}}
10:01:10 {"step":{"step":2}}
10:01:30 {"step":{"step":3}}
)";
  // As of 10:01:10 only step 2 (10) is in the mean: compile 60 - 10 = 50.
  ExpectSeconds(Run(text, "10:01:10"), 70,
                {{"compile", 50}, {"productive", 20}});
  // As of 10:01:30 the mean is 15: compile 45 (previous test).
  ExpectSeconds(Run(text, "10:01:30"), 90,
                {{"compile", 45}, {"productive", 45}});
}

TEST_F(JobTimelineTest, NoCompileEstimateWithoutOtherSteps) {
  JobReport j = Run(R"(
10:00:00 {"started":{}}
10:01:00 {"step":{"step":1}}
)",
                    "10:01:00");
  ExpectSeconds(j, 60, {{"productive", 60}});
}

TEST_F(JobTimelineTest, CompileActivityDisablesTheEstimate) {
  JobReport j = Run(R"(
10:00:00 {"started":{}}
10:00:00 {"activity":{"kind":"INIT"}}
10:00:20 {"activity":{"kind":"COMPILE"}}
10:01:00 {"activity":{"kind":"TRAINING"}}
10:01:30 {"step":{"step":1}}
10:01:40 {"step":{"step":2}}
)",
                    "10:01:40");
  // init 20, compile 40 (reported); step 1 = 30 stays productive.
  ExpectSeconds(j, 100, {{"init", 20}, {"compile", 40}, {"productive", 40}});
}

TEST_F(JobTimelineTest, CompileShareAfterInputWait) {
  JobReport j = Run(R"(
10:00:00 {"started":{}}
10:01:00 {"step":{"step":1,"input_wait_seconds":20}}
10:01:10 {"step":{"step":2}}
)",
                    "10:01:10");
  // step 1 = 60: data_wait 20 first; compile min(max(0, 60 - 10), 60 - 20)
  // = 40; productive 0. Step 2: 10.
  ExpectSeconds(j, 70,
                {{"data_wait", 20}, {"compile", 40}, {"productive", 10}});
}

TEST_F(JobTimelineTest, LostFirstStepKeepsCompileAndMeanCountsLostSteps) {
  JobReport j = Run(R"(
10:00:00 {"started":{}}
10:01:40 {"step":{"step":1}}
10:02:00 {"step":{"step":2}}
10:02:00 {"interruption":{"reason":"PREEMPTED"}}
10:03:00 {"started":{}}
10:03:50 {"step":{"step":1}}
)",
                    "10:03:50");
  // Mean of non-first steps = step 2 of attempt 1 (20, lost included).
  // Attempt 1 step 1 (100): compile 80, rest 20 lost when attempt 2
  // resumes from step 0; step 2 (20) lost. Attempt 2 step 1 (50): compile
  // 30, productive 20. Recovery 10:02:00 -> 10:03:00 = 60.
  ExpectSeconds(
      j, 230,
      {{"compile", 110}, {"lost", 40}, {"productive", 20}, {"recovery", 60}});
  EXPECT_EQ(j.lost_steps, 2);
  EXPECT_EQ(j.last_step, 1);
}

// --- Rules 5-7: durability, end of an attempt, resume point.

TEST_F(JobTimelineTest, PreemptionWithRestoreLosesWorkAfterCheckpoint) {
  JobReport j = Run(kPreempted, "10:03:05");
  // queued 10:00 -> 10:01 = 60; steps 1-4 10 s each; 5 s in flight at the
  // preemption lost; recovery 10:01:45 -> 10:02:45 = 60; restore 10;
  // RESTORE step 2 makes steps 3, 4 lost (20); new step 3 = 10.
  // productive 10 + 10 + 10 = 30; lost 20 + 5 = 25; 60+60+10+30+25 = 185.
  ExpectSeconds(j, 185,
                {{"queued", 60},
                 {"recovery", 60},
                 {"restore", 10},
                 {"productive", 30},
                 {"lost", 25}});
  EXPECT_EQ(j.lost_steps, 2);
  EXPECT_EQ(j.interruptions, 1);
  EXPECT_EQ(j.last_step, 3);
  EXPECT_EQ(j.last_checkpoint, 3);
  EXPECT_EQ(j.at_risk_ns, 0);
  Ratios r = JobRatios(j);
  EXPECT_DOUBLE_EQ(*r.sg, 1 - 120.0 / 185);
  EXPECT_DOUBLE_EQ(*r.rg, 30.0 / 65);
}

TEST_F(JobTimelineTest, BeforeTheResumePointWorkIsAtRisk) {
  JobReport j = Run(kPreempted, "10:02:00");
  // Steps 3, 4 are not durable and no resume point is known: productive
  // 40 and at risk 20; in flight 5 lost; recovery 10:01:45 -> 10:02:00.
  ExpectSeconds(
      j, 120,
      {{"queued", 60}, {"productive", 40}, {"lost", 5}, {"recovery", 15}});
  EXPECT_EQ(j.at_risk_ns, 20'000'000'000);
  EXPECT_EQ(j.state, JobStateKind::kRecovering);
  EXPECT_EQ(j.last_step, 4);
  EXPECT_EQ(j.last_checkpoint, 2);
}

TEST_F(JobTimelineTest, ResumePointFromFirstStepOfNewAttempt) {
  JobReport j = Run(R"(
10:00:00 {"job_submitted":{"chips":8}}
10:01:00 {"allocation":{"chips":8}}
10:01:00 {"started":{}}
10:01:10 {"step":{"step":1}}
10:01:20 {"step":{"step":2}}
10:01:30 {"checkpoint":{"step":2}}
10:01:30 {"step":{"step":3}}
10:01:40 {"step":{"step":4}}
10:01:45 {"interruption":{"reason":"PREEMPTED"}}
10:02:45 {"started":{}}
10:02:55 {"step":{"step":4}}
)",
                    "10:02:55");
  // First step 4 of attempt 2 resumes from 3: step 3 (attempt 1) is
  // durable, step 4 lost (10). productive 30 + 10 = 40; lost 10 + 5 = 15.
  ExpectSeconds(
      j, 175,
      {{"queued", 60}, {"recovery", 60}, {"productive", 40}, {"lost", 15}});
  EXPECT_EQ(j.lost_steps, 1);
  EXPECT_EQ(j.last_checkpoint, 3);
}

TEST_F(JobTimelineTest, LostStaysLostAfterLaterCheckpoints) {
  std::string text = kPreempted;
  text = text.substr(0, text.find("10:03:05 {\"job_ended"));
  text += R"(
10:03:15 {"step":{"step":4}}
10:03:15 {"checkpoint":{"step":4}}
)";
  JobReport j = Run(text, "10:03:15");
  // Attempt 1's steps 3, 4 stay lost although step 4 is now durable;
  // productive 30 + 10 (new step 4) = 40.
  ExpectSeconds(j, 195,
                {{"queued", 60},
                 {"recovery", 60},
                 {"restore", 10},
                 {"productive", 40},
                 {"lost", 25}});
  EXPECT_EQ(j.lost_steps, 2);
  EXPECT_EQ(j.last_step, 4);
  EXPECT_EQ(j.last_checkpoint, 4);
}

TEST_F(JobTimelineTest, CheckpointAfterInterruptionCounts) {
  JobReport j = Run(R"(
10:00:00 {"started":{}}
10:00:10 {"step":{"step":1}}
10:00:20 {"step":{"step":2}}
10:00:25 {"interruption":{"reason":"MAINTENANCE"}}
10:00:26 {"checkpoint":{"step":2}}
10:01:00 {"started":{}}
10:01:00 {"activity":{"kind":"RESTORE","step":1}}
)",
                    "10:01:00");
  // The late checkpoint makes steps 1-2 durable before the restore from
  // step 1, so nothing completed is lost; in flight 5 lost; recovery 35.
  ExpectSeconds(j, 60, {{"productive", 20}, {"lost", 5}, {"recovery", 35}});
  EXPECT_EQ(j.lost_steps, 0);
}

TEST_F(JobTimelineTest, StartedWithoutInterruptionEndsAttemptAtLastEvent) {
  JobReport j = Run(R"(
10:00:00 {"started":{}}
10:00:10 {"step":{"step":1}}
10:00:20 {"step":{"step":2}}
10:00:25 {"checkpoint":{"step":1}}
10:01:00 {"started":{}}
10:01:10 {"step":{"step":2}}
)",
                    "10:01:10");
  // Attempt 1 ends at its last event 10:00:25: 5 s in flight lost;
  // recovery 10:00:25 -> 10:01:00 = 35; new step 2 resumes from 1, so old
  // step 2 is lost (10). productive step 1 + new step 2 = 20.
  ExpectSeconds(j, 70, {{"productive", 20}, {"lost", 15}, {"recovery", 35}});
  EXPECT_EQ(j.interruptions, 1);
  EXPECT_EQ(j.lost_steps, 1);
  EXPECT_EQ(j.last_step, 2);
  EXPECT_EQ(j.last_checkpoint, 1);
}

TEST_F(JobTimelineTest, NewAttemptIdOnAStepIsARestart) {
  JobReport j = Run(R"(
10:00:00 {"attempt":"a","started":{}}
10:00:10 {"attempt":"a","step":{"step":1}}
10:00:20 {"attempt":"a","step":{"step":2}}
10:00:50 {"attempt":"b","step":{"step":2}}
)",
                    "10:00:50");
  // Attempt b ends a at 10:00:20 (recovery 30), starts at 10:00:50 and
  // its first step 2 (0 s) resumes from 1: a's step 2 lost.
  ExpectSeconds(j, 50, {{"productive", 10}, {"lost", 10}, {"recovery", 30}});
  EXPECT_EQ(j.interruptions, 1);
}

TEST_F(JobTimelineTest, StepNumberGoingBackwardsIsARestart) {
  JobReport j = Run(R"(
10:00:00 {"started":{}}
10:00:10 {"step":{"step":1}}
10:00:20 {"step":{"step":2}}
10:00:30 {"step":{"step":3}}
10:00:50 {"step":{"step":2}}
10:01:00 {"step":{"step":3}}
)",
                    "10:01:00");
  // Step 2 after step 3, no ids: in flight since step 3 (20) lost, no
  // recovery; the new attempt resumes from 1: old steps 2, 3 lost (20).
  // productive: step 1 (10) + new step 2 (0) + new step 3 (10) = 20.
  ExpectSeconds(j, 60, {{"productive", 20}, {"lost", 40}});
  EXPECT_EQ(j.interruptions, 1);
  EXPECT_EQ(j.lost_steps, 2);
  EXPECT_EQ(j.last_step, 3);
}

TEST_F(JobTimelineTest, InterruptionNoticeEndsNothing) {
  JobReport j = Run(R"(
10:00:00 {"started":{}}
10:00:10 {"step":{"step":1}}
10:00:15 {"interruption":{"reason":"PREEMPTED","notice":true}}
10:00:20 {"step":{"step":2}}
)",
                    "10:00:20");
  ExpectSeconds(j, 20, {{"productive", 20}});
  EXPECT_EQ(j.notices, 1);
  EXPECT_EQ(j.interruptions, 0);
}

TEST_F(JobTimelineTest, RecoveryEndsAtNextJobEventWithoutAllocations) {
  JobReport j = Run(R"(
10:00:00 {"started":{}}
10:00:10 {"step":{"step":1}}
10:00:20 {"interruption":{"reason":"FAILED"}}
10:01:20 {"activity":{"kind":"INIT"}}
10:01:50 {"activity":{"kind":"TRAINING"}}
10:02:00 {"step":{"step":2}}
)",
                    "10:02:00");
  // in flight 10 lost; recovery 60; INIT starts attempt 2 (init 30); its
  // step 2 resumes from 1 (step 1 durable) and takes 10.
  ExpectSeconds(
      j, 120,
      {{"productive", 20}, {"lost", 10}, {"recovery", 60}, {"init", 30}});
  EXPECT_EQ(j.last_checkpoint, 1);
}

TEST_F(JobTimelineTest, ShortAllocationIsRecoveryUntilEnoughChips) {
  JobReport j = Run(R"(
10:00:00 {"job_submitted":{"chips":8}}
10:00:10 {"allocation":{"chips":8}}
10:00:10 {"started":{}}
10:00:20 {"step":{"step":1}}
10:00:30 {"allocation":{"chips":4}}
10:00:40 {"step":{"step":2}}
10:00:50 {"activity":{"kind":"TRAINING"}}
10:01:00 {"allocation":{"chips":8}}
10:01:10 {"step":{"step":3}}
)",
                    "10:01:10");
  // queued 10; recovery 10:00:30 -> 10:01:00 = 30 (job events do not end
  // it); step 2 = 10:00:20 -> 10:00:30 = 10; step 3 = 10.
  ExpectSeconds(j, 70, {{"queued", 10}, {"recovery", 30}, {"productive", 30}});
  EXPECT_EQ(j.state, JobStateKind::kRunning);
  EXPECT_EQ(j.interruptions, 0);
}

TEST_F(JobTimelineTest, InterruptionBeforeAnyAttemptIsRecovery) {
  JobReport j = Run(R"(
10:00:00 {"job_submitted":{"chips":2}}
10:01:00 {"allocation":{"chips":2}}
10:02:00 {"interruption":{"reason":"HOST_FAILURE"}}
10:05:00 {"allocation":{"chips":2}}
10:05:00 {"started":{}}
)",
                    "10:06:00");
  // queued 60, idle 60 (allocated, nothing running), recovery 180, then 60
  // of an attempt that has reported nothing: idle (rule 2), 120 in all.
  ExpectSeconds(j, 360, {{"queued", 60}, {"idle", 120}, {"recovery", 180}});
  EXPECT_EQ(j.interruptions, 0);  // no attempt had started
}

TEST_F(JobTimelineTest, FailedJobLosesNonDurableWork) {
  JobReport j = Run(R"(
10:00:00 {"started":{}}
10:00:10 {"step":{"step":1}}
10:00:20 {"step":{"step":2}}
10:00:20 {"checkpoint":{"step":1}}
10:00:25 {"job_ended":{"outcome":"FAILED"}}
)",
                    "10:00:25");
  // step 2 (10) and 5 s in flight lost; step 1 durable.
  ExpectSeconds(j, 25, {{"productive", 10}, {"lost", 15}});
  EXPECT_EQ(j.lost_steps, 1);
  EXPECT_EQ(j.interruptions, 0);
}

TEST_F(JobTimelineTest, SucceededAfterInterruptionWithoutResumeLoses) {
  JobReport j = Run(R"(
10:00:00 {"started":{}}
10:00:10 {"step":{"step":1}}
10:00:20 {"step":{"step":2}}
10:00:25 {"interruption":{"reason":"PREEMPTED"}}
10:00:40 {"job_ended":{"outcome":"SUCCEEDED"}}
)",
                    "10:00:40");
  // No resume after the interruption: steps 1, 2 (20) lost, in flight 5
  // lost; recovery 15.
  ExpectSeconds(j, 40, {{"lost", 25}, {"recovery", 15}});
  EXPECT_EQ(j.lost_steps, 2);
  EXPECT_FALSE(j.last_step.has_value());
}

TEST_F(JobTimelineTest, EventAfterJobEndedIsRejected) {
  Config config;
  JobTracker job("j", &config);
  auto events = ParseEvents(Timeline(R"(
10:00:00 {"started":{}}
10:00:10 {"job_ended":{"outcome":"CANCELLED"}}
10:00:20 {"step":{"step":1}}
)"));
  ASSERT_TRUE(job.Apply(events[0]).ok());
  ASSERT_TRUE(job.Apply(events[1]).ok());
  auto late = job.Apply(events[2]);
  ASSERT_FALSE(late.ok());
  EXPECT_THAT(std::string(late.status().message()),
              ::testing::HasSubstr("ended at 2026-11-22T10:00:10Z"));
  // The attempt never reported: its 10 s are idle (rule 2), not lost.
  ExpectSeconds(job.Report(T("2026-11-22T10:00:30Z")), 10, {{"idle", 10}});
}

TEST_F(JobTimelineTest, OutOfOrderEventIsRejected) {
  Config config;
  JobTracker job("j", &config);
  auto events = ParseEvents(Timeline(R"(
10:00:10 {"started":{}}
10:00:05 {"step":{"step":1}}
)"));
  ASSERT_TRUE(job.Apply(events[0]).ok());
  auto early = job.Apply(events[1]);
  ASSERT_FALSE(early.ok());
  EXPECT_THAT(std::string(early.status().message()),
              ::testing::HasSubstr("time: 2026-11-22T10:00:05Z is before"));
}

// --- k-step reports and their durability.

TEST_F(JobTimelineTest, KStepReportsSplitAtCheckpointAndResume) {
  JobReport j = Run(R"(
10:00:00 {"started":{}}
10:00:10 {"step":{"step":10}}
10:01:50 {"step":{"step":20}}
10:01:50 {"checkpoint":{"step":15}}
10:02:00 {"interruption":{"reason":"PREEMPTED"}}
10:03:00 {"started":{}}
10:03:00 {"activity":{"kind":"RESTORE","step":15}}
10:03:10 {"activity":{"kind":"TRAINING"}}
)",
                    "10:03:10");
  // Step 10 completes 1 step (10 s); step 20 completes steps 11-20 (100 s,
  // 10 each). Checkpoint 15 makes 11-15 durable (50 s); the restore from 15
  // loses 16-20 (50 s, 5 steps). In flight 10 lost; recovery 60; restore 10.
  ExpectSeconds(
      j, 190,
      {{"productive", 60}, {"lost", 60}, {"recovery", 60}, {"restore", 10}});
  EXPECT_EQ(j.lost_steps, 5);
  EXPECT_EQ(j.last_step, 15);
  EXPECT_EQ(j.last_checkpoint, 15);
}

TEST_F(JobTimelineTest, RestoreStepSetsTheFirstReportsStepCount) {
  JobReport j = Run(R"(
10:00:00 {"job_submitted":{"chips":4,"accelerator":"tpu-v5p","step_flops":9.18e15}}
10:00:00 {"started":{}}
10:00:00 {"activity":{"kind":"RESTORE","step":100}}
10:00:10 {"activity":{"kind":"TRAINING"}}
10:00:30 {"step":{"step":110}}
)",
                    "10:00:30");
  // Step 110 after a restore from 100 completes 10 steps in 20 s; ideal per
  // step = 9.18e15 / (4 x 459e12) = 5 s, so 50 s ideal: PG = 50 / 20.
  ExpectSeconds(j, 30, {{"restore", 10}, {"productive", 20}});
  EXPECT_DOUBLE_EQ(j.ideal_seconds, 50);
  EXPECT_DOUBLE_EQ(*JobRatios(j).pg, 2.5);  // PG above 1 is reported as is
}

// --- Rule 9: program goodput.

// Found by core_fuzzer: taking lost steps' ideal time back out of the sum
// left a rounding residue below zero (-2.8e-17 s here).
TEST_F(JobTimelineTest, IdealSecondsOfAllLostStepsIsZeroNotNegative) {
  JobReport j = Run(R"(
10:00:00 {"job_submitted":{"chips":1,"accelerator":"tpu-v5p"}}
10:00:00 {"started":{}}
10:00:10 {"step":{"step":1}}
10:00:20 {"step":{"step":2,"flops":1e13}}
10:00:30 {"step":{"step":3,"flops":1e13}}
10:00:40 {"step":{"step":4,"flops":5e13}}
10:00:40 {"job_ended":{"outcome":"FAILED"}}
)",
                    "10:00:40");
  // Four 10 s steps, none durable: FAILED loses all 40 s (step 1's compile
  // share is 10 - mean 10 = 0). Ideal of steps 2-4 was 1e13 / 459e12 +
  // 1e13 / 459e12 + 5e13 / 459e12, all taken back: 0.
  ExpectSeconds(j, 40, {{"lost", 40}});
  EXPECT_EQ(j.costed_productive_ns, 0);
  EXPECT_EQ(j.ideal_seconds, 0.0);
  EXPECT_FALSE(JobRatios(j).pg.has_value());
}

TEST_F(JobTimelineTest, ProgramGoodputFromJobDefaultCost) {
  JobReport j = Run(R"(
10:00:00 {"job_submitted":{"chips":4,"accelerator":"tpu-v5p","step_flops":9.18e15}}
10:00:00 {"started":{}}
10:00:10 {"step":{"step":10}}
10:01:50 {"step":{"step":20}}
10:03:30 {"step":{"step":30}}
)",
                    "10:03:30");
  // ideal per step 5 s. Report 10: 1 step (10 s, ideal 5); reports 20, 30:
  // 10 steps each (100 s, ideal 50). Mean 200 / 20 = 10 per step: no
  // compile. PG = 105 / 210 = 0.5; SG = RG = 1; MPG = 0.5.
  ExpectSeconds(j, 210, {{"productive", 210}});
  EXPECT_DOUBLE_EQ(j.ideal_seconds, 105);
  Ratios r = JobRatios(j);
  EXPECT_DOUBLE_EQ(*r.pg, 0.5);
  EXPECT_DOUBLE_EQ(*r.mpg, 0.5);
}

TEST_F(JobTimelineTest, ProgramGoodputIsMemoryBoundWhenBytesDominate) {
  JobReport j = Run(R"(
10:00:00 {"job_submitted":{"chips":2,"accelerator":"a100"}}
10:00:00 {"started":{}}
10:00:04 {"step":{"step":1,"flops":6.24e14,"bytes":8.156e12}}
10:00:10 {"step":{"step":2}}
)",
                    "10:00:10");
  // step 1: flops time 6.24e14 / (2 x 312e12) = 1 s, bytes time
  // 8.156e12 / (2 x 2.039e12) = 2 s, ideal 2 over 4 s. Step 2 has no cost
  // and is left out of both sides: PG = 2 / 4 = 0.5.
  ExpectSeconds(j, 10, {{"productive", 10}});
  EXPECT_NEAR(j.ideal_seconds, 2.0, 1e-12);
  EXPECT_EQ(j.costed_productive_ns, 4'000'000'000);
  EXPECT_NEAR(*JobRatios(j).pg, 0.5, 1e-12);
}

TEST_F(JobTimelineTest, UnknownAcceleratorHasNoProgramGoodput) {
  JobReport j = Run(R"(
10:00:00 {"job_submitted":{"chips":2,"accelerator":"abacus","step_flops":1e15}}
10:00:00 {"started":{}}
10:00:04 {"step":{"step":1}}
)",
                    "10:00:04");
  EXPECT_FALSE(JobRatios(j).pg.has_value());
  EXPECT_FALSE(JobRatios(j).mpg.has_value());
}

TEST_F(JobTimelineTest, CatalogEntriesCanBeAddedAndOverridden) {
  config_.catalog.Set("abacus", {1e12, 0});
  config_.catalog.Set("a100", {1e12, 0});
  JobReport j = Run(R"(
10:00:00 {"job_submitted":{"chips":1,"accelerator":"abacus","step_flops":2e12}}
10:00:00 {"started":{}}
10:00:04 {"step":{"step":1}}
)",
                    "10:00:04");
  // ideal 2e12 / 1e12 = 2 s over 4 s.
  EXPECT_DOUBLE_EQ(*JobRatios(j).pg, 0.5);
}

TEST_F(JobTimelineTest, LostStepsLeaveProgramGoodput) {
  JobReport j = Run(R"(
10:00:00 {"job_submitted":{"chips":1,"accelerator":"h100","step_flops":9.89e14}}
10:00:00 {"started":{}}
10:00:02 {"step":{"step":1}}
10:00:02 {"checkpoint":{"step":1}}
10:00:06 {"step":{"step":2}}
10:00:06 {"interruption":{"reason":"PREEMPTED"}}
10:00:16 {"started":{}}
10:00:16 {"activity":{"kind":"RESTORE","step":1}}
)",
                    "10:00:16");
  // ideal per step 9.89e14 / 989e12 = 1 s. Step 1 (2 s) durable; step 2
  // (4 s) lost with its ideal: PG = 1 / 2.
  ExpectSeconds(j, 16, {{"productive", 2}, {"lost", 4}, {"recovery", 10}});
  EXPECT_DOUBLE_EQ(j.ideal_seconds, 1);
  EXPECT_DOUBLE_EQ(*JobRatios(j).pg, 0.5);
}

// --- Rule 11: windows.

TEST_F(JobTimelineTest, SinceCutsAStepWithCompileFirst) {
  config_.since_ns = T("2026-11-22T10:00:30Z");
  JobReport j = Run(R"(
10:00:00 {"started":{}}
10:01:00 {"step":{"step":1}}
10:01:10 {"step":{"step":2}}
10:01:30 {"step":{"step":3}}
)",
                    "10:01:30");
  // Step 1 spans 10:00:00-10:01:00: compile 45 first, then productive 15.
  // The window starts 30 s in: compile 45 - 30 = 15, productive 15; steps
  // 2, 3 productive 30. Window 10:00:30 -> 10:01:30 = 60.
  ExpectSeconds(j, 60, {{"compile", 15}, {"productive", 45}});
}

TEST_F(JobTimelineTest, SinceExcludesQueueBeforeIt) {
  config_.since_ns = T("2026-11-22T10:01:00Z");
  JobReport j = Run(kPreempted, "10:03:05");
  // As the full report minus queued 60: 185 - 60 = 125.
  ExpectSeconds(
      j, 125,
      {{"recovery", 60}, {"restore", 10}, {"productive", 30}, {"lost", 25}});
}

TEST_F(JobTimelineTest, SinceCountsOnlyTheLostPartInsideTheWindow) {
  config_.since_ns = T("2026-11-22T10:01:35Z");
  JobReport j = Run(kPreempted, "10:03:05");
  // Step 4 (10:01:30-10:01:40) has 5 s in the window, later lost; in flight
  // 10:01:40-10:01:45 lost 5; recovery 60; restore 10; new step 3 = 10.
  ExpectSeconds(
      j, 90,
      {{"lost", 10}, {"recovery", 60}, {"restore", 10}, {"productive", 10}});
}

}  // namespace
}  // namespace goodput::core
