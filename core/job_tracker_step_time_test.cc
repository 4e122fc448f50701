// Slow steps (issue 18 part 1, docs/semantics.md "Slow steps"): the
// tracker feeds StepTimeStats the steps that are not first of an attempt,
// with a k-step report as k steps and time in other activities left out;
// the statistics survive a snapshot (live == replay), and a version-4
// record loads with none yet.
// Times are on 2026-11-22 (UTC); the job is "j".
#include <string>
#include <vector>

#include "core/event_order.h"
#include "core/job_tracker.h"
#include "core/testing/timeline.h"
#include "gtest/gtest.h"

namespace goodput::core {
namespace {

using ::goodput::core::testing::ParseEvents;
using ::goodput::core::testing::T;
using ::goodput::core::testing::Timeline;

int64_t At(const std::string& hms) { return T("2026-11-22T" + hms + "Z"); }

// Attempt a: step 1 (first: 30 s, left out), steps 2 and 3 of 10 s, a 20 s
// save, step 4 (10 s: the save is not step time), steps 5-6 in one report
// (20 s: two steps of 10 s). Attempt b: step 7 (first: 60 s, left out),
// steps 8-12 of 25 s. Baseline: 5 steps of 10 s, 5 of 25 s: lower median
// 10 s, deviations 0 (x5) and 15 (x5): MAD 0. Recent (15 min before
// 10:23:05, i.e. from 10:08:05): steps 8-12, p50 25 s. Ratio 2.5.
constexpr char kTwoAttempts[] = R"(
10:00:00 {"job_submitted":{"chips":8,"workload":"TRAINING"}}
10:00:00 {"attempt":"a","started":{}}
10:00:10 {"attempt":"a","activity":{"kind":"TRAINING"}}
10:00:40 {"attempt":"a","step":{"step":1}}
10:00:50 {"attempt":"a","step":{"step":2}}
10:01:00 {"attempt":"a","step":{"step":3}}
10:01:00 {"attempt":"a","activity":{"kind":"CHECKPOINT"}}
10:01:20 {"attempt":"a","activity":{"kind":"TRAINING"}}
10:01:30 {"attempt":"a","step":{"step":4}}
10:01:50 {"attempt":"a","step":{"step":6}}
10:02:00 {"interruption":{"reason":"PREEMPTED"}}
10:20:00 {"attempt":"b","started":{}}
10:20:00 {"attempt":"b","activity":{"kind":"TRAINING"}}
10:21:00 {"attempt":"b","step":{"step":7}}
10:21:25 {"attempt":"b","step":{"step":8}}
10:21:50 {"attempt":"b","step":{"step":9}}
10:22:15 {"attempt":"b","step":{"step":10}}
10:22:40 {"attempt":"b","step":{"step":11}}
10:23:05 {"attempt":"b","step":{"step":12}}
)";

constexpr double kBucketError = 0.0055;  // StepTimeStats' bucket centers

class JobTrackerStepTimeTest : public ::testing::Test {
 protected:
  // The events of `text` in apply order.
  static std::vector<v1::Event> Ordered(const std::string& text) {
    const std::vector<v1::Event> events = ParseEvents(Timeline(text));
    std::vector<uint32_t> order(events.size());
    for (uint32_t i = 0; i < order.size(); ++i) order[i] = i;
    SortForApply(events, &order);
    std::vector<v1::Event> out;
    for (uint32_t i : order) out.push_back(events[i]);
    return out;
  }

  JobTracker Track(const std::vector<v1::Event>& events) {
    JobTracker t("j", &config_);
    for (const v1::Event& e : events) EXPECT_TRUE(t.Apply(e).ok());
    return t;
  }

  Config config_;
};

TEST_F(JobTrackerStepTimeTest, BaselineAndRecentOfTwoAttempts) {
  const JobReport r = Track(Ordered(kTwoAttempts)).Report(At("10:30:00"));
  ASSERT_TRUE(r.step_time);
  const StepTimeSummary& st = *r.step_time;
  EXPECT_EQ(st.baseline_steps, 10);
  EXPECT_NEAR(st.baseline_median_s, 10, 10 * kBucketError);
  EXPECT_DOUBLE_EQ(st.baseline_mad_s, 0);
  EXPECT_EQ(st.recent_steps, 5);
  EXPECT_DOUBLE_EQ(st.recent_p50_s, 25);
  ASSERT_TRUE(st.ratio);
  EXPECT_NEAR(*st.ratio, 2.5, 2.5 * kBucketError);
  // The counters' view (metrics) says the same.
  EXPECT_TRUE(Track(Ordered(kTwoAttempts)).Recognize().step_time == st);
}

TEST_F(JobTrackerStepTimeTest, NoneUntilAStepThatIsNotFirst) {
  std::vector<v1::Event> events = Ordered(kTwoAttempts);
  events.resize(4);  // through step 1 (first of its attempt)
  EXPECT_FALSE(Track(events).Report(At("10:00:40")).step_time);
  events = Ordered(kTwoAttempts);
  events.resize(5);  // step 2
  const JobReport r = Track(events).Report(At("10:00:50"));
  ASSERT_TRUE(r.step_time);
  EXPECT_EQ(r.step_time->baseline_steps, 1);
  EXPECT_DOUBLE_EQ(r.step_time->recent_p50_s, 10);
}

// A tracker saved after any prefix and loaded goes on to the same step
// times as one that applied everything.
TEST_F(JobTrackerStepTimeTest, SnapshotsKeepStepTimes) {
  const std::vector<v1::Event> events = Ordered(kTwoAttempts);
  const JobTracker whole = Track(events);
  for (size_t cut = 0; cut <= events.size(); ++cut) {
    JobTracker part = Track({events.begin(), events.begin() + cut});
    internal::v1::JobTrackerState state;
    part.SaveState(&state);
    EXPECT_EQ(state.version(), kJobTrackerStateVersion);
    absl::StatusOr<JobTracker> back = JobTracker::FromState(state, &config_);
    ASSERT_TRUE(back.ok()) << back.status();
    for (size_t i = cut; i < events.size(); ++i) {
      ASSERT_TRUE(back->Apply(events[i]).ok());
    }
    EXPECT_TRUE(back->Report(At("10:30:00")).step_time ==
                whole.Report(At("10:30:00")).step_time)
        << cut;
  }
}

// A version-4 record has no step times: it loads with none, and the steps
// after it count.
TEST_F(JobTrackerStepTimeTest, AVersionFourRecordLoadsWithoutStepTimes) {
  const std::vector<v1::Event> events = Ordered(kTwoAttempts);
  const size_t cut = events.size() - 2;  // before steps 11 and 12
  JobTracker part = Track({events.begin(), events.begin() + cut});
  internal::v1::JobTrackerState state;
  part.SaveState(&state);
  state.set_version(4);
  state.clear_step_times();
  absl::StatusOr<JobTracker> back = JobTracker::FromState(state, &config_);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_FALSE(back->Report(At("10:22:15")).step_time);
  EXPECT_EQ(back->Report(At("10:22:15")).nanos,
            part.Report(At("10:22:15")).nanos);
  for (size_t i = cut; i < events.size(); ++i) {
    ASSERT_TRUE(back->Apply(events[i]).ok());
  }
  const JobReport r = back->Report(At("10:30:00"));
  ASSERT_TRUE(r.step_time);
  EXPECT_EQ(r.step_time->baseline_steps, 2);
  EXPECT_NEAR(r.step_time->baseline_median_s, 25, 25 * kBucketError);
}

TEST_F(JobTrackerStepTimeTest, ACorruptStepTimesRecordIsDataLoss) {
  JobTracker t = Track(Ordered(kTwoAttempts));
  internal::v1::JobTrackerState state;
  t.SaveState(&state);
  state.mutable_step_times()->mutable_recent_columns()->set_steps(0, -1);
  absl::StatusOr<JobTracker> back = JobTracker::FromState(state, &config_);
  EXPECT_EQ(back.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(back.status().message().find("step_times"), std::string::npos);
}

}  // namespace
}  // namespace goodput::core
