// Hand-written timelines for BuildJobTimeline. All times are on 2026-11-22
// (UTC) and the job is "j"; each entry is compared as one line of text.
#include "core/job_timeline.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "core/testing/timeline.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace goodput::core {
namespace {

using ::goodput::core::testing::ParseEvents;
using ::goodput::core::testing::T;
using ::goodput::core::testing::Timeline;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

std::string Clock(int64_t ns) {
  return absl::FormatTime("%H:%M:%S", absl::FromUnixNanos(ns),
                          absl::UTCTimeZone());
}

// "10:00:00-10:01:00 #1 TRAINING steps 1-4 ckpt 1@2 ongoing" for a span,
// "10:01:45 #1 ! INTERRUPTED PREEMPTED" for a mark.
std::string Describe(const TimelineEntry& e) {
  std::string who = e.attempt.empty() ? "-" : e.attempt;
  if (e.kind == TimelineEntry::Kind::kMark) {
    return absl::StrCat(Clock(e.start_ns), " ", who, " ! ", e.what);
  }
  std::string out = absl::StrCat(Clock(e.start_ns), "-", Clock(e.end_ns), " ",
                                 who, " ", e.what);
  if (e.first_step) {
    absl::StrAppend(&out, " steps ", *e.first_step, "-", *e.last_step);
  }
  if (e.checkpoints > 0) {
    absl::StrAppend(&out, " ckpt ", e.checkpoints, "@", *e.last_checkpoint);
  }
  if (e.ongoing) absl::StrAppend(&out, " ongoing");
  return out;
}

// The timeline of `text` (see core/testing/timeline.h) as of "HH:MM:SS".
std::vector<std::string> Lines(const std::string& text,
                               const std::string& as_of) {
  std::vector<std::string> lines;
  for (const TimelineEntry& e : BuildJobTimeline(
           ParseEvents(Timeline(text)), T("2026-11-22T" + as_of + "Z"))) {
    lines.push_back(Describe(e));
  }
  return lines;
}

TEST(BuildJobTimelineTest, NoEventsNoEntries) {
  EXPECT_THAT(BuildJobTimeline({}, T("2026-11-22T10:00:00Z")), IsEmpty());
}

TEST(BuildJobTimelineTest, PreemptionRestoreAndSuccess) {
  EXPECT_THAT(
      Lines(R"(
10:00:00 {"job_submitted":{"chips":8}}
10:01:00 {"allocation":{"chips":8}}
10:01:00 {"started":{}}
10:01:00 {"activity":{"kind":"INIT"}}
10:01:30 {"activity":{"kind":"COMPILE"}}
10:02:00 {"activity":{"kind":"TRAINING"}}
10:02:10 {"step":{"step":1}}
10:02:20 {"step":{"step":2}}
10:02:20 {"checkpoint":{"step":2}}
10:02:30 {"step":{"step":3}}
10:02:45 {"interruption":{"reason":"PREEMPTED"}}
10:03:45 {"started":{}}
10:03:45 {"activity":{"kind":"RESTORE","step":2}}
10:03:55 {"activity":{"kind":"TRAINING"}}
10:04:05 {"step":{"step":3}}
10:04:05 {"job_ended":{"outcome":"SUCCEEDED"}}
)",
            "11:00:00"),
      ElementsAre("10:00:00-10:01:00 - QUEUED", "10:01:00 #1 ! STARTED",
                  "10:01:00-10:01:30 #1 INIT", "10:01:30-10:02:00 #1 COMPILE",
                  "10:02:00-10:02:45 #1 TRAINING steps 1-3 ckpt 1@2",
                  "10:02:45 #1 ! INTERRUPTED PREEMPTED",
                  "10:02:45-10:03:45 - RECOVERING", "10:03:45 #2 ! STARTED",
                  "10:03:45-10:03:55 #2 RESTORE step 2",
                  "10:03:55-10:04:05 #2 TRAINING steps 3-3",
                  "10:04:05 #2 ! ENDED SUCCEEDED"));
}

TEST(BuildJobTimelineTest, AllocatedBeforeTheProgramStarts) {
  EXPECT_THAT(
      Lines(R"(
10:00:00 {"job_submitted":{"chips":4}}
10:02:00 {"allocation":{"chips":4}}
10:03:00 {"started":{}}
)",
            "10:05:00"),
      ElementsAre("10:00:00-10:02:00 - QUEUED", "10:02:00-10:03:00 - ALLOCATED",
                  "10:03:00 #1 ! STARTED",
                  "10:03:00-10:05:00 #1 IDLE ongoing"));  // rule 2
}

TEST(BuildJobTimelineTest, ImplicitSubmissionAndAttemptAtFirstStep) {
  // No job_submitted, no started: the first step starts attempt #1 with no
  // STARTED mark, and the zero-length QUEUED span is left out.
  EXPECT_THAT(Lines(R"(
10:00:00 {"step":{"step":1}}
10:00:10 {"step":{"step":2}}
)",
                    "10:00:30"),
              ElementsAre("10:00:00-10:00:30 #1 TRAINING steps 1-2 ongoing"));
}

TEST(BuildJobTimelineTest, AttemptIdsNameAttemptsAndDuplicateStartedIsIgnored) {
  EXPECT_THAT(
      Lines(R"(
10:00:00 {"attempt":"a1","started":{}}
10:00:10 {"attempt":"a1","started":{}}
10:00:20 {"attempt":"a1","interruption":{"reason":"FAILED"}}
10:00:30 {"attempt":"b2","started":{}}
)",
            "10:00:40"),
      ElementsAre("10:00:00 a1 ! STARTED", "10:00:00-10:00:20 a1 IDLE",
                  "10:00:20 a1 ! INTERRUPTED FAILED",
                  "10:00:20-10:00:30 - RECOVERING", "10:00:30 b2 ! STARTED",
                  "10:00:30-10:00:40 b2 IDLE ongoing"));
}

TEST(BuildJobTimelineTest, NoticeIsAMarkThatEndsNothing) {
  EXPECT_THAT(Lines(R"(
10:00:00 {"started":{}}
10:00:10 {"interruption":{"reason":"MAINTENANCE","notice":true}}
10:00:20 {"step":{"step":1}}
)",
                    "10:00:20"),
              ElementsAre("10:00:00 #1 ! STARTED",
                          "10:00:00-10:00:20 #1 TRAINING steps 1-1 ongoing",
                          "10:00:10 #1 ! NOTICE MAINTENANCE"));
}

TEST(BuildJobTimelineTest, ShortAllocationIsRecoveringUntilAllAllocatedAgain) {
  EXPECT_THAT(
      Lines(R"(
10:00:00 {"job_submitted":{"chips":8}}
10:00:00 {"allocation":{"chips":8}}
10:00:00 {"started":{}}
10:00:00 {"activity":{"kind":"CUSTOM","name":"eval"}}
10:01:00 {"allocation":{"chips":4}}
10:02:00 {"allocation":{"chips":8}}
)",
            "10:03:00"),
      ElementsAre("10:00:00 #1 ! STARTED", "10:00:00-10:01:00 #1 CUSTOM eval",
                  "10:01:00-10:02:00 #1 RECOVERING",
                  "10:02:00-10:03:00 #1 CUSTOM eval ongoing"));
}

// Rule 14: an elastic job is recovering only below min_chips (a resize to
// 4 of 8 chips continues its span).
TEST(BuildJobTimelineTest, ElasticJobRecoversOnlyBelowMinChips) {
  EXPECT_THAT(
      Lines(R"(
10:00:00 {"job_submitted":{"chips":8,"min_chips":4}}
10:00:00 {"allocation":{"chips":8}}
10:00:00 {"started":{}}
10:00:00 {"activity":{"kind":"CUSTOM","name":"eval"}}
10:01:00 {"allocation":{"chips":4}}
10:02:00 {"allocation":{"chips":2}}
)",
            "10:03:00"),
      ElementsAre("10:00:00 #1 ! STARTED", "10:00:00-10:02:00 #1 CUSTOM eval",
                  "10:02:00-10:03:00 #1 RECOVERING ongoing"));
}

TEST(BuildJobTimelineTest, ShortAllocationBeforeFirstRunStaysQueued) {
  EXPECT_THAT(Lines(R"(
10:00:00 {"job_submitted":{"chips":8}}
10:01:00 {"allocation":{"chips":4}}
10:02:00 {"allocation":{"chips":8}}
)",
                    "10:03:00"),
              ElementsAre("10:00:00-10:02:00 - QUEUED",
                          "10:02:00-10:03:00 - ALLOCATED ongoing"));
}

TEST(BuildJobTimelineTest, StepInAnotherActivitySwitchesBackToStepping) {
  EXPECT_THAT(
      Lines(R"(
10:00:00 {"started":{}}
10:00:00 {"activity":{"kind":"DATA_WAIT"}}
10:00:10 {"step":{"step":1}}
10:00:20 {"activity":{"kind":"CHECKPOINT"}}
10:00:25 {"checkpoint":{"step":1}}
10:00:25 {"activity":{"kind":"TRAINING"}}
10:00:35 {"step":{"step":2}}
)",
            "10:00:35"),
      ElementsAre("10:00:00 #1 ! STARTED", "10:00:00-10:00:10 #1 DATA_WAIT",
                  "10:00:10-10:00:20 #1 TRAINING steps 1-1",
                  "10:00:20-10:00:25 #1 CHECKPOINT ckpt 1@1",
                  "10:00:25-10:00:35 #1 TRAINING steps 2-2 ongoing"));
}

TEST(BuildJobTimelineTest, ServingWorkloadStepsAreServing) {
  EXPECT_THAT(Lines(R"(
10:00:00 {"job_submitted":{"chips":1,"workload":"SERVING"}}
10:00:00 {"started":{}}
10:00:10 {"step":{"step":5}}
10:00:20 {"job_ended":{"outcome":"CANCELLED"}}
)",
                    "10:01:00"),
              ElementsAre("10:00:00 #1 ! STARTED",
                          "10:00:00-10:00:20 #1 SERVING steps 5-5",
                          "10:00:20 #1 ! ENDED CANCELLED"));
}

TEST(BuildJobTimelineTest, StepAtTheSameTimeAsAnInterruptionBelongsBefore) {
  // Apply order (rule 1): step before interruption, so step 2 is in #1's
  // TRAINING span even though it is listed after the interruption.
  EXPECT_THAT(Lines(R"(
10:00:00 {"started":{}}
10:00:10 {"interruption":{"reason":"HOST_FAILURE"}}
10:00:10 {"step":{"step":2}}
)",
                    "10:00:20"),
              ElementsAre("10:00:00 #1 ! STARTED",
                          "10:00:00-10:00:10 #1 TRAINING steps 2-2",
                          "10:00:10 #1 ! INTERRUPTED HOST_FAILURE",
                          "10:00:10-10:00:20 - RECOVERING ongoing"));
}

TEST(BuildJobTimelineTest, EventsOutOfOrderAndAfterAsOf) {
  EXPECT_THAT(Lines(R"(
10:00:20 {"step":{"step":2}}
10:00:00 {"started":{}}
10:00:10 {"step":{"step":1}}
10:05:00 {"job_ended":{"outcome":"FAILED"}}
)",
                    "10:01:00"),
              ElementsAre("10:00:00 #1 ! STARTED",
                          "10:00:00-10:01:00 #1 TRAINING steps 1-2 ongoing"));
}

TEST(BuildJobTimelineTest, RestartWithoutInterruptionStartsANewAttempt) {
  EXPECT_THAT(Lines(R"(
10:00:00 {"started":{}}
10:00:10 {"step":{"step":1}}
10:00:30 {"started":{}}
10:00:40 {"step":{"step":1}}
)",
                    "10:00:40"),
              ElementsAre("10:00:00 #1 ! STARTED",
                          "10:00:00-10:00:30 #1 TRAINING steps 1-1",
                          "10:00:30 #2 ! STARTED",
                          "10:00:30-10:00:40 #2 TRAINING steps 1-1 ongoing"));
}

TEST(BuildJobTimelineTest, InterruptionOutsideAnAttemptIsOnlyAMark) {
  EXPECT_THAT(Lines(R"(
10:00:00 {"job_submitted":{"chips":2}}
10:00:10 {"interruption":{"reason":"OTHER"}}
)",
                    "10:00:20"),
              ElementsAre("10:00:00-10:00:20 - QUEUED ongoing",
                          "10:00:10 - ! INTERRUPTED OTHER"));
}

TEST(BuildJobTimelineTest, EventsAfterJobEndedAreIgnored) {
  EXPECT_THAT(Lines(R"(
10:00:00 {"started":{}}
10:00:10 {"job_ended":{"outcome":"SUCCEEDED"}}
10:00:20 {"step":{"step":9}}
)",
                    "10:00:30"),
              ElementsAre("10:00:00 #1 ! STARTED", "10:00:00-10:00:10 #1 IDLE",
                          "10:00:10 #1 ! ENDED SUCCEEDED"));
}

// SPEC rule 2: an attempt is IDLE until its first report; a first activity
// leaves that span IDLE, a first step makes the attempt's spans so far
// stepping (the short allocation's RECOVERING stays).
TEST(BuildJobTimelineTest, BeforeTheFirstReportAnAttemptIsIdle) {
  EXPECT_THAT(Lines(R"(
10:00:00 {"started":{}}
10:00:04 {"activity":{"kind":"TRAINING"}}
10:00:07 {"step":{"step":1}}
)",
                    "10:00:07"),
              ElementsAre("10:00:00 #1 ! STARTED", "10:00:00-10:00:04 #1 IDLE",
                          "10:00:04-10:00:07 #1 TRAINING steps 1-1 ongoing"));
}

TEST(BuildJobTimelineTest, AFirstStepMakesTheAttemptsSpansStepping) {
  const std::string events = R"(
10:00:00 {"job_submitted":{"chips":4,"workload":"SERVING"}}
10:00:00 {"allocation":{"chips":4}}
10:00:00 {"started":{}}
10:00:02 {"allocation":{"chips":2}}
10:00:04 {"allocation":{"chips":4}}
10:00:07 {"step":{"step":1}}
)";
  EXPECT_THAT(Lines(events, "10:00:05"),
              ElementsAre("10:00:00 #1 ! STARTED", "10:00:00-10:00:02 #1 IDLE",
                          "10:00:02-10:00:04 #1 RECOVERING",
                          "10:00:04-10:00:05 #1 IDLE ongoing"));
  EXPECT_THAT(
      Lines(events, "10:00:07"),
      ElementsAre("10:00:00 #1 ! STARTED", "10:00:00-10:00:02 #1 SERVING",
                  "10:00:02-10:00:04 #1 RECOVERING",
                  "10:00:04-10:00:07 #1 SERVING steps 1-1 ongoing"));
}

}  // namespace
}  // namespace goodput::core
