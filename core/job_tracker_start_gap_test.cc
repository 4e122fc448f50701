// SPEC section 3 rule 2, the time of an attempt before its first report:
// hand-computed timelines for reports, as-of reports, windows, the compile
// estimate (rule 4), recognition-time counters and snapshots around it.
// Times are on 2026-11-22 (UTC); the job is "j"; stall_after is 600 s.
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/event_order.h"
#include "core/job_tracker.h"
#include "core/testing/expect.h"
#include "core/testing/timeline.h"
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

class StartGapTest : public ::testing::Test {
 protected:
  // Replays `text` (see Timeline) and returns job "j" as of `as_of`
  // ("HH:MM:SS"); events after `as_of` are left out.
  JobReport Run(const std::string& text, const std::string& as_of) {
    report_ = Replay(ParseEvents(Timeline(text)), config_, At(as_of));
    return Job(report_, "j");
  }

  Config config_;
  FleetReport report_;
};

// The SPEC's first example: the first report is an activity.
constexpr char kTrainingAt4[] = R"(
10:00:00 {"job_submitted":{"chips":4}}
10:00:00 {"started":{}}
10:00:04 {"activity":{"kind":"TRAINING"}}
10:00:07 {"step":{"step":1}}
10:00:10 {"step":{"step":2}}
)";

// The SPEC's second example: an attempt that reports only steps.
constexpr char kStepsOnly[] = R"(
10:00:00 {"job_submitted":{"chips":4}}
10:00:00 {"started":{}}
10:00:07 {"step":{"step":1}}
10:00:10 {"step":{"step":2}}
)";

// --- The SPEC's examples.

TEST_F(StartGapTest, FirstReportAnActivityLeavesTheGapIdle) {
  JobReport j = Run(kTrainingAt4, "10:00:10");
  // idle 0 -> 4; steps of 3 (4 -> 7) and 3 (7 -> 10). Rule 4: step 1's 3 s
  // is not above the mean 3 of step 2: no compile.
  ExpectSeconds(j, 10, {{"idle", 4}, {"productive", 6}});
  EXPECT_EQ(j.last_step, 2);
}

TEST_F(StartGapTest, FirstReportAStepTakesTheGapAsItsTime) {
  JobReport j = Run(kStepsOnly, "10:00:10");
  // Steps of 7 (0 -> 7) and 3; rule 4: 7 - mean 3 = 4 compile.
  ExpectSeconds(j, 10, {{"compile", 4}, {"productive", 6}});
}

// --- As of before and after the first report.

TEST_F(StartGapTest, BeforeTheFirstStepTheAttemptIsIdleNotInFlight) {
  JobReport j = Run(kStepsOnly, "10:00:05");
  ExpectSeconds(j, 5, {{"idle", 5}});
  EXPECT_EQ(j.at_risk_ns, 0);  // nothing in flight
  EXPECT_EQ(j.state, JobStateKind::kRunning);
  EXPECT_FALSE(j.last_step.has_value());
}

TEST_F(StartGapTest, AtTheFirstStepTheGapIsThatStepsTime) {
  JobReport j = Run(kStepsOnly, "10:00:07");
  // Step 1 = 7 s; no non-first step yet, so no compile; not durable.
  ExpectSeconds(j, 7, {{"productive", 7}});
  EXPECT_EQ(j.at_risk_ns, S(7));
}

TEST_F(StartGapTest, AfterTheFirstStepTimeIsInFlight) {
  JobReport j = Run(kStepsOnly, "10:00:08");
  // Step 1 = 7, then 1 s in flight toward step 2: productive and at risk.
  ExpectSeconds(j, 8, {{"productive", 8}});
  EXPECT_EQ(j.at_risk_ns, S(8));
}

TEST_F(StartGapTest, BeforeTheFirstActivityTheAttemptIsIdle) {
  JobReport j = Run(kTrainingAt4, "10:00:03");
  ExpectSeconds(j, 3, {{"idle", 3}});
  EXPECT_EQ(j.at_risk_ns, 0);
}

// The peer library's case (docs/migrating.md): started at 0, first
// activity at 5: those 5 s are not productive.
TEST_F(StartGapTest, FirstActivityAfterAGapKeepsItIdle) {
  JobReport j = Run(R"(
10:00:00 {"started":{}}
10:00:05 {"activity":{"kind":"INIT"}}
10:00:20 {"activity":{"kind":"TRAINING"}}
10:00:30 {"step":{"step":1}}
10:00:40 {"step":{"step":2}}
)",
                    "10:00:40");
  // idle 5, init 15, steps of 10 and 10 (no compile excess).
  ExpectSeconds(j, 40, {{"idle", 5}, {"init", 15}, {"productive", 20}});
}

TEST_F(StartGapTest, AttemptEndedBeforeAnyReportIsIdleNotLost) {
  JobReport j = Run(R"(
10:00:00 {"started":{}}
10:00:05 {"interruption":{"reason":"FAILED"}}
10:00:08 {"started":{}}
10:00:08 {"activity":{"kind":"TRAINING"}}
10:00:18 {"step":{"step":1}}
)",
                    "10:00:18");
  // Attempt 1 reported nothing: idle 5 (the old reading made it lost).
  // Recovery 3; step 1 = 10.
  ExpectSeconds(j, 18, {{"idle", 5}, {"recovery", 3}, {"productive", 10}});
  EXPECT_EQ(j.interruptions, 1);
}

// A hang before the first report stays idle; the step takes only the part
// within stall_after of the job's last event (as any in-flight time).
TEST_F(StartGapTest, HangBeforeTheFirstStepStaysIdle) {
  JobReport j = Run(R"(
10:00:00 {"started":{}}
10:15:00 {"step":{"step":1}}
)",
                    "10:15:00");
  // 0 -> 600 s becomes step 1's time, 600 -> 900 s is a hang.
  ExpectSeconds(j, 900, {{"productive", 600}, {"idle", 300}});
}

// --- Several attempts.

constexpr char kRestart[] = R"(
10:00:00 {"job_submitted":{"chips":4}}
10:00:00 {"started":{}}
10:00:00 {"activity":{"kind":"COMPILE"}}
10:00:05 {"activity":{"kind":"TRAINING"}}
10:00:15 {"step":{"step":1}}
10:00:25 {"step":{"step":2}}
10:00:25 {"checkpoint":{"step":2}}
10:00:30 {"interruption":{"reason":"PREEMPTED"}}
10:00:50 {"started":{}}
10:01:02 {"step":{"step":3}}
10:01:10 {"step":{"step":4}}
)";

TEST_F(StartGapTest, RestartGapFromTheNewStartedToItsFirstStep) {
  JobReport j = Run(kRestart, "10:01:10");
  // Attempt 1: compile 5, steps of 10 and 10 (COMPILE seen: no estimate),
  // 5 s in flight lost. Recovery 30 -> 50. Attempt 2: step 3 takes 50 -> 62
  // = 12; step 4 = 8. Mean of non-first steps (10 + 8) / 2 = 9, so step 3
  // has 12 - 9 = 3 compile and 9 productive.
  // compile 5 + 3 = 8; productive 10 + 10 + 9 + 8 = 37; 8+37+5+20 = 70.
  ExpectSeconds(
      j, 70,
      {{"compile", 8}, {"productive", 37}, {"lost", 5}, {"recovery", 20}});
}

TEST_F(StartGapTest, RestartBeforeItsFirstStepIsIdle) {
  JobReport j = Run(kRestart, "10:00:55");
  // As above through recovery, then 5 s of attempt 2 with nothing reported.
  ExpectSeconds(j, 55,
                {{"compile", 5},
                 {"productive", 20},
                 {"lost", 5},
                 {"recovery", 20},
                 {"idle", 5}});
  EXPECT_EQ(j.at_risk_ns, 0);  // steps 1, 2 durable; nothing in flight
}

// An attempt without `started` after an earlier one ended begins when the
// job is all-allocated again (docs/semantics.md "Rule 2").
TEST_F(StartGapTest, RestartWithoutStartedBeginsAtTheNewAllocation) {
  JobReport j = Run(R"(
10:00:00 {"job_submitted":{"chips":2}}
10:00:00 {"allocation":{"chips":2}}
10:00:00 {"started":{}}
10:00:00 {"activity":{"kind":"TRAINING"}}
10:00:10 {"step":{"step":1}}
10:00:15 {"interruption":{"reason":"PREEMPTED"}}
10:00:25 {"allocation":{"chips":2}}
10:00:32 {"step":{"step":2}}
10:00:35 {"step":{"step":3}}
)",
                    "10:00:35");
  // Attempt 1: step 1 = 10, 5 in flight lost; recovery 15 -> 25. Attempt
  // 2: step 2 takes 25 -> 32 = 7, step 3 = 3. Mean of non-first = 3: step
  // 1 has 10 - 3 = 7 compile, step 2 7 - 3 = 4. compile 11; productive
  // 3 + 3 + 3 = 9; lost 5; recovery 10: 35.
  ExpectSeconds(
      j, 35,
      {{"compile", 11}, {"productive", 9}, {"lost", 5}, {"recovery", 10}});
}

// --- Serving workloads.

constexpr char kServing[] = R"(
10:00:00 {"job_submitted":{"chips":1,"workload":"SERVING"}}
10:00:00 {"started":{}}
10:00:06 {"step":{"step":1}}
10:00:10 {"step":{"step":2}}
)";

TEST_F(StartGapTest, ServingStepsOnlyTakeTheGap) {
  JobReport j = Run(kServing, "10:00:10");
  // Windows of 6 and 4: 6 - mean 4 = 2 compile.
  ExpectSeconds(j, 10, {{"compile", 2}, {"productive", 8}});
}

TEST_F(StartGapTest, ServingBeforeItsFirstStepIsIdle) {
  JobReport j = Run(kServing, "10:00:05");
  ExpectSeconds(j, 5, {{"idle", 5}});
}

TEST_F(StartGapTest, ServingInterruptedBeforeItsFirstReportIsIdle) {
  JobReport j = Run(R"(
10:00:00 {"job_submitted":{"chips":1,"workload":"SERVING"}}
10:00:00 {"started":{}}
10:00:05 {"interruption":{"reason":"PREEMPTED"}}
)",
                    "10:00:05");
  // In-flight serving time would stay productive; this is not in flight.
  ExpectSeconds(j, 5, {{"idle", 5}});
}

// --- The job's first all-allocation when there is no `started`.

constexpr char kAllocatedThenSteps[] = R"(
10:00:00 {"job_submitted":{"chips":4}}
10:00:10 {"allocation":{"chips":4}}
10:00:17 {"step":{"step":1}}
10:00:20 {"step":{"step":2}}
)";

TEST_F(StartGapTest, NoStartedTheGapRunsFromTheFirstAllAllocation) {
  JobReport j = Run(kAllocatedThenSteps, "10:00:20");
  // queued 10; step 1 takes 10 -> 17 = 7: 7 - mean 3 = 4 compile.
  ExpectSeconds(j, 20, {{"queued", 10}, {"compile", 4}, {"productive", 6}});
}

TEST_F(StartGapTest, NoStartedBeforeTheFirstStepIsIdle) {
  JobReport j = Run(kAllocatedThenSteps, "10:00:15");
  ExpectSeconds(j, 15, {{"queued", 10}, {"idle", 5}});
  EXPECT_EQ(j.at_risk_ns, 0);
}

TEST_F(StartGapTest, NoStartedFirstActivityKeepsTheGapIdle) {
  JobReport j = Run(R"(
10:00:00 {"job_submitted":{"chips":4}}
10:00:10 {"allocation":{"chips":4}}
10:00:15 {"activity":{"kind":"TRAINING"}}
10:00:18 {"step":{"step":1}}
10:00:21 {"step":{"step":2}}
)",
                    "10:00:21");
  ExpectSeconds(j, 21, {{"queued", 10}, {"idle", 5}, {"productive", 6}});
}

TEST_F(StartGapTest, StartedAfterTheAllocationBeginsTheAttempt) {
  JobReport j = Run(R"(
10:00:00 {"job_submitted":{"chips":4}}
10:00:00 {"allocation":{"chips":4}}
10:00:04 {"started":{}}
10:00:07 {"step":{"step":1}}
10:00:10 {"step":{"step":2}}
)",
                    "10:00:10");
  // Allocated, nothing running 0 -> 4: idle. Step 1 takes only 4 -> 7.
  ExpectSeconds(j, 10, {{"idle", 4}, {"productive", 6}});
}

TEST_F(StartGapTest, ShortAllocationInTheGapStaysRecovery) {
  JobReport j = Run(R"(
10:00:00 {"job_submitted":{"chips":4}}
10:00:00 {"allocation":{"chips":4}}
10:00:00 {"started":{}}
10:00:02 {"allocation":{"chips":2}}
10:00:04 {"allocation":{"chips":4}}
10:00:07 {"step":{"step":1}}
10:00:10 {"step":{"step":2}}
)",
                    "10:00:10");
  // Only the idle time becomes step 1's: 0 -> 2 and 4 -> 7 = 5; recovery
  // 2. Rule 4: 5 - mean 3 = 2 compile.
  ExpectSeconds(j, 10, {{"recovery", 2}, {"compile", 2}, {"productive", 6}});
}

// --- Rule 4 around the gap.

TEST_F(StartGapTest, CompileActivityAsFirstReportKeepsTheGapIdle) {
  JobReport j = Run(R"(
10:00:00 {"started":{}}
10:00:03 {"activity":{"kind":"COMPILE"}}
10:00:13 {"activity":{"kind":"TRAINING"}}
10:00:20 {"step":{"step":1}}
10:00:23 {"step":{"step":2}}
)",
                    "10:00:23");
  // COMPILE before the first step: no estimate, step 1 is all productive.
  ExpectSeconds(j, 23, {{"idle", 3}, {"compile", 10}, {"productive", 10}});
}

TEST_F(StartGapTest, CompileEstimateExcludesTheGapBeforeAnActivity) {
  JobReport j = Run(R"(
10:00:00 {"started":{}}
10:00:02 {"activity":{"kind":"INIT"}}
10:00:05 {"activity":{"kind":"TRAINING"}}
10:00:15 {"step":{"step":1}}
10:00:18 {"step":{"step":2}}
10:00:21 {"step":{"step":3}}
)",
                    "10:00:21");
  // idle 2, init 3; step 1 = 10 (5 -> 15), mean 3: compile 7, productive
  // 3 + 3 + 3 = 9: 2 + 3 + 7 + 9 = 21.
  ExpectSeconds(j, 21,
                {{"idle", 2}, {"init", 3}, {"compile", 7}, {"productive", 9}});
}

// --- Windows (rule 11).

TEST_F(StartGapTest, WindowCutsTheGapOfAStepOnlyAttempt) {
  config_.since_ns = At("10:00:02");
  JobReport j = Run(kStepsOnly, "10:00:10");
  // Step 1 spans 0 -> 7 with its 4 s compile first: [2, 4) compile, [4, 7)
  // productive; step 2 productive 3. Window 2 -> 10 = 8.
  ExpectSeconds(j, 8, {{"compile", 2}, {"productive", 6}});
}

TEST_F(StartGapTest, WindowCutsTheGapBeforeTheFirstStep) {
  config_.since_ns = At("10:00:02");
  JobReport j = Run(kStepsOnly, "10:00:05");
  ExpectSeconds(j, 3, {{"idle", 3}});
}

TEST_F(StartGapTest, WindowCutsTheGapBeforeAnActivity) {
  config_.since_ns = At("10:00:02");
  JobReport j = Run(kTrainingAt4, "10:00:10");
  ExpectSeconds(j, 8, {{"idle", 2}, {"productive", 6}});
}

TEST_F(StartGapTest, WindowAfterTheGapStartsSeesOnlyItsPart) {
  config_.since_ns = At("10:00:08");
  JobReport j = Run(kStepsOnly, "10:00:10");
  // Step 1 (0 -> 7) is before the window; step 2's 8 -> 10 is in it.
  ExpectSeconds(j, 2, {{"productive", 2}});
}

// --- Recognition time (counters).

class StartGapCountersTest : public ::testing::Test {
 protected:
  // Applies `text`'s events in apply order, checking after each that no
  // counter decreased.
  void Run(const std::string& text) {
    std::vector<v1::Event> events = ParseEvents(Timeline(text));
    std::vector<uint32_t> order(events.size());
    for (uint32_t i = 0; i < order.size(); ++i) order[i] = i;
    SortForApply(events, &order);
    for (uint32_t i : order) {
      ASSERT_TRUE(job_.Apply(events[i]).ok());
      const Recognized now = job_.Recognize();
      for (int c = 0; c < kNumCategories; ++c) {
        EXPECT_GE(now.nanos[c], last_.nanos[c]) << CategoryName(Category(c));
      }
      last_ = now;
    }
  }

  // Expects exactly `seconds` per category name (others zero).
  void ExpectCounted(const std::map<std::string, double>& seconds) {
    const Recognized r = job_.Recognize();
    for (int c = 0; c < kNumCategories; ++c) {
      const char* name = CategoryName(Category(c));
      auto it = seconds.find(name);
      EXPECT_EQ(r.nanos[c], it == seconds.end() ? 0 : S(it->second)) << name;
    }
  }

  Config config_;
  JobTracker job_{"j", &config_};
  Recognized last_;
};

TEST_F(StartGapCountersTest, TheGapIsNotCountedUntilTheFirstReport) {
  Run(R"(
10:00:00 {"started":{}}
10:00:03 {"interruption":{"reason":"PREEMPTED","notice":true}}
)");
  // The report shows 3 s idle; the counters wait for the first report.
  ExpectSeconds(job_.Report(At("10:00:03")), 3, {{"idle", 3}});
  ExpectCounted({});
  Run(R"(10:00:05 {"activity":{"kind":"INIT"}})");
  ExpectCounted({{"idle", 5}});  // decided at the activity
}

TEST_F(StartGapCountersTest, AnAttemptEndingBeforeAnyReportCountsIdle) {
  Run(R"(
10:00:00 {"started":{}}
10:00:05 {"interruption":{"reason":"FAILED"}}
)");
  ExpectCounted({{"idle", 5}});
}

TEST_F(StartGapCountersTest, AStepFirstCountsTheGapAsStepTimeNeverAsIdle) {
  Run(R"(
10:00:00 {"job_submitted":{"chips":1}}
10:00:00 {"started":{}}
10:00:07 {"step":{"step":1}}
)");
  ExpectCounted({});  // step 1 is first of its attempt: its share waits
  Run(R"(
10:00:10 {"step":{"step":2}}
10:00:13 {"step":{"step":3}}
10:00:16 {"step":{"step":4}}
10:00:19 {"step":{"step":5}}
10:00:22 {"step":{"step":6}}
10:00:25 {"step":{"step":7}}
10:00:28 {"step":{"step":8}}
10:00:31 {"step":{"step":9}}
10:00:34 {"step":{"step":10}}
10:00:37 {"step":{"step":11}}
)");
  // Step 11 is the 10th after step 1: its compile share is frozen at
  // 7 - mean 3 = 4; the rest waits for durability. Idle was never counted.
  ExpectCounted({{"compile", 4}});
  Run(R"(
10:00:37 {"checkpoint":{"step":11}}
10:00:37 {"job_ended":{"outcome":"SUCCEEDED"}}
)");
  // Durable: step 1's 3 and steps 2-11's 30: 4 + 33 = 37, the lifetime.
  ExpectCounted({{"compile", 4}, {"productive", 33}});
}

// --- Snapshots in the gap.

TEST(StartGapStateTest, SavedInTheGapRestoresAndContinuesAsAReplay) {
  Config config;
  std::vector<v1::Event> events = ParseEvents(Timeline(kStepsOnly));
  JobTracker full("j", &config), head("j", &config);
  for (const v1::Event& e : events) ASSERT_TRUE(full.Apply(e).ok());
  ASSERT_TRUE(head.Apply(events[0]).ok());
  ASSERT_TRUE(head.Apply(events[1]).ok());
  internal::v1::JobTrackerState state;
  head.SaveState(&state);
  absl::StatusOr<JobTracker> restored = JobTracker::FromState(state, &config);
  ASSERT_TRUE(restored.ok()) << restored.status();
  ExpectSeconds(restored->Report(At("10:00:05")), 5, {{"idle", 5}});
  for (size_t i = 2; i < events.size(); ++i) {
    ASSERT_TRUE(restored->Apply(events[i]).ok());
  }
  ExpectSeconds(restored->Report(At("10:00:10")), 10,
                {{"compile", 4}, {"productive", 6}});
}

// A notice inside the gap: a state saved there holds a gap.
constexpr char kNoticeInTheGap[] = R"(
10:00:00 {"started":{}}
10:00:03 {"interruption":{"reason":"MAINTENANCE","notice":true}}
10:00:07 {"step":{"step":1}}
10:00:10 {"step":{"step":2}}
)";

// Every timeline above, saved after each event (in the gap or not) and
// restored, then given the rest: the same report as one replay, also under
// a window that starts at the saved cursor (the clipped-state path).
TEST(StartGapStateTest, EveryCutRestoresToTheReplay) {
  for (const char* text : {kTrainingAt4, kStepsOnly, kRestart, kServing,
                           kAllocatedThenSteps, kNoticeInTheGap}) {
    std::vector<v1::Event> events = ParseEvents(Timeline(text));
    std::vector<uint32_t> order(events.size());
    for (uint32_t i = 0; i < order.size(); ++i) order[i] = i;
    SortForApply(events, &order);
    const int64_t end = EventTimeNanos(events[order.back()]) + S(1);
    for (size_t cut = 1; cut < order.size(); ++cut) {
      SCOPED_TRACE(absl::StrCat(text, " cut after event ", cut));
      Config plain;
      JobTracker head("j", &plain);
      for (size_t i = 0; i < cut; ++i) {
        ASSERT_TRUE(head.Apply(events[order[i]]).ok());
      }
      internal::v1::JobTrackerState state;
      head.SaveState(&state);
      Config windowed;
      windowed.since_ns = head.cursor_ns();
      for (const Config* config : {&plain, &windowed}) {
        absl::StatusOr<JobTracker> t = JobTracker::FromState(state, config);
        ASSERT_TRUE(t.ok()) << t.status();
        for (size_t i = cut; i < order.size(); ++i) {
          ASSERT_TRUE(t->Apply(events[order[i]]).ok());
        }
        const JobReport want = Job(Replay(events, *config, end), "j");
        const JobReport got = t->Report(end);
        EXPECT_EQ(got.nanos, want.nanos);
        EXPECT_EQ(got.total_ns, want.total_ns);
        EXPECT_EQ(got.at_risk_ns, want.at_risk_ns);
      }
    }
  }
}

TEST(StartGapStateTest, AVersionOneRecordIsRebuiltNotLoaded) {
  Config config;
  JobTracker job("j", &config);
  ASSERT_TRUE(job.Apply(ParseEvents(Timeline(kStepsOnly))[1]).ok());
  internal::v1::JobTrackerState state;
  job.SaveState(&state);
  state.set_version(1);  // held the gap in the open step
  absl::StatusOr<JobTracker> t = JobTracker::FromState(state, &config);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(t.status().message().substr(0, 8), "version:");
}

}  // namespace
}  // namespace goodput::core
