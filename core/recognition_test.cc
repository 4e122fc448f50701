// Recognition time (docs/metrics.md "Recognition time"): JobTracker's
// settled totals on hand-computed timelines, checked after every event for
// monotonicity, and against the report once the job has ended. Times are on
// 2026-11-22 (UTC); the job is "j".
#include <string>
#include <vector>

#include "core/event_order.h"
#include "core/fleet_tracker.h"
#include "core/job_tracker.h"
#include "core/testing/random_fleet.h"
#include "core/testing/timeline.h"
#include "gtest/gtest.h"

namespace goodput::core {
namespace {

using ::goodput::core::testing::ParseEvents;
using ::goodput::core::testing::S;
using ::goodput::core::testing::T;
using ::goodput::core::testing::Timeline;

const int kQueued = Index(Category::kQueued),
          kRecovery = Index(Category::kRecovery),
          kCompile = Index(Category::kCompile),
          kRestore = Index(Category::kRestore),
          kDataWait = Index(Category::kDataWait),
          kIdle = Index(Category::kIdle),
          kProductive = Index(Category::kProductive),
          kLost = Index(Category::kLost);

class RecognitionTest : public ::testing::Test {
 protected:
  // Applies `text`'s events in apply order, checking after each that no
  // recognized total decreased; returns the tracker.
  JobTracker& Run(const std::string& text) {
    std::vector<v1::Event> events = ParseEvents(Timeline(text));
    std::vector<uint32_t> order(events.size());
    for (uint32_t i = 0; i < order.size(); ++i) order[i] = i;
    SortForApply(events, &order);
    for (uint32_t i : order) {
      EXPECT_TRUE(job_.Apply(events[i]).ok());
      ExpectNotBelow(job_.Recognize(), last_);
      last_ = job_.Recognize();
    }
    return job_;
  }
  // Applies events one line at a time (no reordering).
  void Apply(const std::string& line) { Run(line); }

  static void ExpectNotBelow(const Recognized& now, const Recognized& before) {
    for (int c = 0; c < kNumCategories; ++c) {
      EXPECT_GE(now.nanos[c], before.nanos[c]) << CategoryName(Category(c));
    }
    EXPECT_GE(now.costed_productive_ns, before.costed_productive_ns);
    EXPECT_GE(now.ideal_seconds, before.ideal_seconds - 1e-12);
  }

  // Expects exactly `seconds` per category index (others zero).
  static void ExpectNanos(const Recognized& r,
                          const std::map<int, double>& seconds) {
    for (int c = 0; c < kNumCategories; ++c) {
      auto it = seconds.find(c);
      EXPECT_EQ(r.nanos[c], it == seconds.end() ? 0 : S(it->second))
          << CategoryName(Category(c));
    }
  }

  Config config_;
  JobTracker job_{"j", &config_};
  Recognized last_;
};

// Preemption with lost work, as in job_tracker_test's kPreempted.
TEST_F(RecognitionTest, StepTimeCountsWhenItsFateIsKnown) {
  Run(R"(
10:00:00 {"job_submitted":{"chips":8}}
10:01:00 {"allocation":{"chips":8}}
10:01:00 {"started":{}}
10:01:10 {"step":{"step":1}}
10:01:20 {"step":{"step":2}}
10:01:30 {"checkpoint":{"step":2}}
10:01:30 {"step":{"step":3}}
10:01:40 {"step":{"step":4}}
)");
  // queued 10:00-10:01 = 60. Step 1 is the attempt's first step: nothing
  // of it counts before its compile share is frozen. Step 2 (10 s) is
  // durable; steps 3 and 4 (20 s) are at risk, not counted.
  ExpectNanos(job_.Recognize(), {{kQueued, 60}, {kProductive, 10}});
  EXPECT_EQ(job_.Recognize().at_risk_ns, S(20 + 0));  // step 1 is durable
  Apply(R"(10:01:45 {"interruption":{"reason":"PREEMPTED"}})");
  // The attempt's end freezes step 1's compile share at 10 - mean 10 = 0:
  // its 10 s are durable productive. The open 5 s are lost.
  ExpectNanos(job_.Recognize(), {{kQueued, 60}, {kProductive, 20}, {kLost, 5}});
  Run(R"(
10:02:45 {"started":{}}
10:02:45 {"activity":{"kind":"RESTORE","step":2}}
10:02:55 {"activity":{"kind":"TRAINING"}}
)");
  // The resume point (2) decides steps 3 and 4 (20 s) lost; recovery is
  // 10:01:45-10:02:45 = 60; restore 10:02:45-10:02:55 = 10.
  ExpectNanos(job_.Recognize(), {{kQueued, 60},
                                 {kRecovery, 60},
                                 {kRestore, 10},
                                 {kProductive, 20},
                                 {kLost, 25}});
  Run(R"(
10:03:05 {"step":{"step":3}}
10:03:05 {"job_ended":{"outcome":"SUCCEEDED"}}
)");
  // The new first step (10 s, compile 10 - mean 10 = 0) is
  // durable at SUCCEEDED. Total 185 s, as the report says.
  const Recognized r = job_.Recognize();
  ExpectNanos(r, {{kQueued, 60},
                  {kRecovery, 60},
                  {kRestore, 10},
                  {kProductive, 30},
                  {kLost, 25}});
  EXPECT_EQ(job_.Report(T("2026-11-22T10:03:05Z")).nanos, r.nanos);
  EXPECT_EQ(r.interruptions[ReasonIndex(v1::Interruption::PREEMPTED)], 1);
  EXPECT_EQ(r.steps, 3);
  EXPECT_EQ(r.last_step_ns, T("2026-11-22T10:03:05Z"));
  EXPECT_EQ(r.last_checkpoint_ns, T("2026-11-22T10:01:30Z"));
  EXPECT_EQ(r.state, JobStateKind::kEnded);
  EXPECT_EQ(r.chips, 8);
}

TEST_F(RecognitionTest, ObservationsOfStartupRecoveryAndAttempts) {
  Run(R"(
10:00:00 {"job_submitted":{"chips":8}}
10:01:00 {"started":{}}
10:01:10 {"step":{"step":1}}
10:01:45 {"interruption":{"reason":"PREEMPTED"}}
10:02:45 {"started":{}}
10:03:05 {"step":{"step":2}}
)");
  const std::vector<Observation>& o = job_.observations();
  ASSERT_EQ(o.size(), 4u);
  // Startup 10:01:00 -> 10:01:10; attempt 10:01:00 -> 10:01:45; startup
  // 10:02:45 -> 10:03:05; recover 10:01:45 -> 10:03:05.
  EXPECT_EQ(o[0].kind, ObservationKind::kStartup);
  EXPECT_EQ(o[0].nanos, S(10));
  EXPECT_EQ(o[1].kind, ObservationKind::kTimeBetweenInterruptions);
  EXPECT_EQ(o[1].nanos, S(45));
  EXPECT_EQ(o[2].kind, ObservationKind::kStartup);
  EXPECT_EQ(o[2].nanos, S(20));
  EXPECT_EQ(o[3].kind, ObservationKind::kTimeToRecover);
  EXPECT_EQ(o[3].nanos, S(80));
}

TEST_F(RecognitionTest, CompileShareFrozenAtTheTenthFurtherStep) {
  Run(R"(
10:00:00 {"job_submitted":{"chips":1}}
10:00:00 {"started":{}}
10:00:30 {"step":{"step":1}}
10:00:40 {"step":{"step":2}}
10:00:50 {"step":{"step":3}}
10:01:00 {"step":{"step":4}}
10:01:10 {"step":{"step":5}}
10:01:20 {"step":{"step":6}}
10:01:30 {"step":{"step":7}}
10:01:40 {"step":{"step":8}}
10:01:50 {"step":{"step":9}}
10:02:00 {"step":{"step":10}}
)");
  EXPECT_EQ(job_.Recognize().nanos[kCompile], 0);  // not frozen yet
  Apply(R"(10:02:10 {"step":{"step":11}})");
  // Step 11 is the 10th after step 1: 30 - mean(100 / 10) = 20 compile.
  EXPECT_EQ(job_.Recognize().nanos[kCompile], S(20));
  Run(R"(
10:02:40 {"step":{"step":12}}
10:02:40 {"checkpoint":{"step":12}}
10:02:40 {"job_ended":{"outcome":"SUCCEEDED"}}
)");
  // The report recomputes: 30 - 130 / 11 = 18.18 s compile; the counters
  // keep 20 and move the difference to productive: 10 + 100 + 30 = 140.
  const Recognized r = job_.Recognize();
  ExpectNanos(r, {{kCompile, 20}, {kProductive, 140}});
  const JobReport report = job_.Report(T("2026-11-22T10:02:40Z"));
  EXPECT_EQ(report.nanos[kCompile], S(30) - S(130) / 11);
  int64_t sum = 0;
  for (int64_t n : r.nanos) sum += n;
  EXPECT_EQ(sum, report.total_ns);
}

TEST_F(RecognitionTest, FirstStepSharesAndInputWait) {
  Run(R"(
10:00:00 {"job_submitted":{"chips":2}}
10:00:00 {"started":{}}
10:00:30 {"step":{"step":1,"input_wait_seconds":4}}
10:00:40 {"step":{"step":2}}
10:00:40 {"interruption":{"reason":"FAILED"}}
)");
  // Attempt end freezes step 1: 30 - mean 10 = 20 compile (of the 26 left
  // after 4 s input wait), 6 s productive pending (no checkpoint, no
  // resume yet) is not counted; step 2 (10 s) is pending too.
  ExpectNanos(job_.Recognize(), {{kCompile, 20}, {kDataWait, 4}});
  Apply(R"(10:01:00 {"job_ended":{"outcome":"FAILED"}})");
  // FAILED loses everything pending: 6 + 10; recovery 10:00:40-10:01:00.
  ExpectNanos(job_.Recognize(),
              {{kCompile, 20}, {kDataWait, 4}, {kLost, 16}, {kRecovery, 20}});
  EXPECT_EQ(
      job_.Recognize().interruptions[ReasonIndex(v1::Interruption::FAILED)], 1);
}

TEST_F(RecognitionTest, NoticesAndRestartsByReason) {
  Run(R"(
10:00:00 {"job_submitted":{"chips":1}}
10:00:00 {"started":{}}
10:00:10 {"step":{"step":1}}
10:00:20 {"interruption":{"reason":"MAINTENANCE","notice":true}}
10:00:30 {"started":{}}
10:00:40 {"interruption":{"reason":"HOST_FAILURE"}}
)");
  const Recognized r = job_.Recognize();
  EXPECT_EQ(r.notices[ReasonIndex(v1::Interruption::MAINTENANCE)], 1);
  // A started without an interruption ends the attempt as OTHER.
  EXPECT_EQ(r.interruptions[ReasonIndex(v1::Interruption::OTHER)], 1);
  EXPECT_EQ(r.interruptions[ReasonIndex(v1::Interruption::HOST_FAILURE)], 1);
  EXPECT_EQ(job_.Report(T("2026-11-22T10:00:40Z")).interruptions, 2);
}

TEST_F(RecognitionTest, ServingStepsCountAtCompletion) {
  Run(R"(
10:00:00 {"job_submitted":{"chips":4,"workload":"SERVING"}}
10:00:00 {"started":{}}
10:00:10 {"step":{"step":1}}
10:00:20 {"step":{"step":2,"idle_seconds":3}}
)");
  // Step 1 waits for its freeze; step 2 is durable at once: 7 s + 3 idle.
  ExpectNanos(job_.Recognize(), {{kProductive, 7}, {kIdle, 3}});
  EXPECT_EQ(job_.Recognize().at_risk_ns, 0);
}

TEST_F(RecognitionTest, ProgramGoodputAboveOneAndCosts) {
  // tpu-v5p: 459e12 FLOP/s per chip; 1 chip, 10 s steps. Step 2's ideal
  // time is 9.18e15 / 459e12 = 20 s > 10 s: PG above one.
  Run(R"(
10:00:00 {"job_submitted":{"chips":1,"accelerator":"tpu-v5p"}}
10:00:00 {"started":{}}
10:00:10 {"step":{"step":1,"flops":2.295e15}}
10:00:20 {"step":{"step":2,"flops":9.18e15}}
10:00:30 {"step":{"step":3,"flops":2.295e15}}
10:00:30 {"checkpoint":{"step":3}}
)");
  const Recognized r = job_.Recognize();
  EXPECT_EQ(r.pg_above_one_steps, 1);
  // Steps 2 and 3 are durable (step 1 awaits its freeze): 20 s costed,
  // ideal 20 + 5 s.
  EXPECT_EQ(r.costed_productive_ns, S(20));
  EXPECT_DOUBLE_EQ(r.ideal_seconds, 25);
}

// Over random fleets: applying events one by one never lowers a settled
// total, and once every job has ended the settled total equals the report.
// A saved state from before exclusions has one category fewer: it loads,
// with excluded 0 (state_fields.h, LoadCategoryArray); two fewer is corrupt.
TEST(RecognitionStateTest, ARecordWithoutExcludedLoads) {
  Recognized r;
  for (int c = 0; c < kNumCategories; ++c) r.nanos[c] = c + 1;
  r.chip_seconds[Index(Category::kLost)] = 2.5;
  internal::v1::RecognizedState state;
  SaveRecognized(r, &state);
  state.mutable_nanos()->RemoveLast();
  state.mutable_chip_seconds()->RemoveLast();
  Recognized back;
  ASSERT_TRUE(LoadRecognized(state, "high", &back).ok());
  EXPECT_EQ(back.nanos[Index(Category::kLost)], Index(Category::kLost) + 1);
  EXPECT_EQ(back.nanos[Index(Category::kExcluded)], 0);
  EXPECT_EQ(back.chip_seconds[Index(Category::kLost)], 2.5);
  state.mutable_nanos()->RemoveLast();
  EXPECT_EQ(LoadRecognized(state, "high", &back).code(),
            absl::StatusCode::kDataLoss);
}

// Issue 18: step times survive the metrics state; a record without them
// (written before) loads with none.
TEST(RecognitionStateTest, StepTimeRoundTrips) {
  Recognized r;
  r.step_time = StepTimeSummary{200, 2.0, 0.25, 80, 3.0, std::nullopt};
  r.step_time->SetRatio();
  internal::v1::RecognizedState state;
  SaveRecognized(r, &state);
  Recognized back;
  ASSERT_TRUE(LoadRecognized(state, "high", &back).ok());
  ASSERT_TRUE(back.step_time);
  EXPECT_TRUE(*back.step_time == *r.step_time);
  EXPECT_DOUBLE_EQ(*back.step_time->ratio, 1.5);
  state.clear_step_baseline_steps();
  ASSERT_TRUE(LoadRecognized(state, "high", &back).ok());
  EXPECT_FALSE(back.step_time);
}

TEST(RecognitionPropertyTest, MonotoneAndEqualToReportAtTheEnd) {
  for (uint32_t seed = 1; seed <= 30; ++seed) {
    std::vector<v1::Event> events = testing::RandomFleet(seed, 8, 60);
    std::vector<uint32_t> order(events.size());
    for (uint32_t i = 0; i < order.size(); ++i) order[i] = i;
    SortForApply(events, &order);
    Config config;
    FleetTracker fleet(&config);
    std::map<std::string, Recognized> last;
    for (uint32_t i : order) {
      if (!fleet.Apply(events[i]).ok() || events[i].has_heartbeat()) continue;
      const JobTracker* job = fleet.FindJob(events[i].job_id());
      Recognized now = job->Recognize();
      const Recognized& before = last[job->job_id()];
      for (int c = 0; c < kNumCategories; ++c) {
        ASSERT_GE(now.nanos[c], before.nanos[c])
            << "seed " << seed << " " << job->job_id() << " "
            << CategoryName(Category(c));
      }
      ASSERT_GE(now.costed_productive_ns, before.costed_productive_ns);
      last[job->job_id()] = now;
    }
    for (const auto& [id, r] : last) {
      const JobTracker* job = fleet.FindJob(id);
      if (!job->ended()) continue;
      const JobReport report = job->Report(job->last_event_ns());
      int64_t sum = 0;
      for (int64_t n : r.nanos) sum += n;
      EXPECT_EQ(sum, report.total_ns) << "seed " << seed << " " << id;
      EXPECT_EQ(r.at_risk_ns, 0) << id;
    }
  }
}

}  // namespace
}  // namespace goodput::core
