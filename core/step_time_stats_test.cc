#include "core/step_time_stats.h"

#include <cstdint>

#include "gtest/gtest.h"

namespace goodput::core {
namespace {

constexpr int64_t kS = kNanosPerSecond;

// Bucket centers are within 2^(1/128) - 1 = 0.54% of the time they stand for.
constexpr double kBucketError = 0.0055;

TEST(StepTimeStatsTest, NothingBeforeTheFirstStep) {
  StepTimeStats s;
  EXPECT_FALSE(s.Summary());
  s.Add(10 * kS, 0, 0);  // no steps: ignored
  EXPECT_FALSE(s.Summary());
}

TEST(StepTimeStatsTest, BucketsAreLogSpaced) {
  EXPECT_EQ(StepTimeStats::BucketOf(1), 0);
  EXPECT_EQ(StepTimeStats::BucketOf(2), 64);  // 64 log2(2)
  EXPECT_EQ(StepTimeStats::BucketOf(1024), 640);
  EXPECT_EQ(StepTimeStats::BucketOf(1023), 639);
  // 1 s = 2^29.897 ns: bucket floor(64 x 29.897) = 1913.
  EXPECT_EQ(StepTimeStats::BucketOf(kS), 1913);
  EXPECT_NEAR(StepTimeStats::BucketSeconds(1913), 1.0, kBucketError);
}

// Per-step times 8, 10, 12, 14 s: the lower median is 10 (two of four
// steps at or below it; the upper one would be 12); deviations from 10
// are 2, 0, 2, 4: MAD 2. One step reported alone each time.
TEST(StepTimeStatsTest, BaselineIsTheLowerMedianAndMad) {
  StepTimeStats s;
  int64_t t = 0;
  for (int64_t sec : {14, 8, 12, 10}) s.Add(sec * kS, 1, t += sec * kS);
  auto sum = s.Summary();
  ASSERT_TRUE(sum);
  EXPECT_EQ(sum->baseline_steps, 4);
  EXPECT_NEAR(sum->baseline_median_s, 10, 10 * kBucketError);
  EXPECT_NEAR(sum->baseline_mad_s, 2, 0.15);
  // Recent: all four (40 s, 4 steps); exact lower median 10.
  EXPECT_EQ(sum->recent_steps, 4);
  EXPECT_DOUBLE_EQ(sum->recent_p50_s, 10);
  ASSERT_TRUE(sum->ratio);
  EXPECT_NEAR(*sum->ratio, 1, kBucketError);
}

// A report of k steps counts k steps of time / k: 30 s over 3 steps is
// three 10 s steps, outweighing two 20 s steps.
TEST(StepTimeStatsTest, KStepReportsAreDividedAndWeighted) {
  StepTimeStats s;
  s.Add(20 * kS, 1, 20 * kS);
  s.Add(30 * kS, 3, 50 * kS);
  s.Add(20 * kS, 1, 70 * kS);
  auto sum = s.Summary();
  ASSERT_TRUE(sum);
  EXPECT_EQ(sum->baseline_steps, 5);
  EXPECT_EQ(sum->recent_steps, 5);
  EXPECT_NEAR(sum->baseline_median_s, 10, 10 * kBucketError);
  EXPECT_DOUBLE_EQ(sum->recent_p50_s, 10);
  // Deviations 10, 0, 0, 0, 10: MAD 0.
  EXPECT_DOUBLE_EQ(sum->baseline_mad_s, 0);
}

// 150 steps of 1 s, then 100 of 2 s: the recent window is exactly the last
// 100 steps (2 s), the baseline's median is still 1 s (150 of 250 steps).
TEST(StepTimeStatsTest, RecentIsTheLastHundredSteps) {
  StepTimeStats s;
  int64_t t = 0;
  for (int i = 0; i < 150; ++i) s.Add(kS, 1, t += kS);
  for (int i = 0; i < 100; ++i) s.Add(2 * kS, 1, t += 2 * kS);
  auto sum = s.Summary();
  ASSERT_TRUE(sum);
  EXPECT_EQ(sum->baseline_steps, 250);
  EXPECT_EQ(sum->recent_steps, 100);
  EXPECT_DOUBLE_EQ(sum->recent_p50_s, 2);
  EXPECT_NEAR(sum->baseline_median_s, 1, kBucketError);
  EXPECT_NEAR(*sum->ratio, 2, 2 * kBucketError);
  // One more fast step: 99 slow and 1 fast; the median stays 2 s.
  s.Add(kS, 1, t += kS);
  sum = s.Summary();
  EXPECT_EQ(sum->recent_steps, 100);
  EXPECT_DOUBLE_EQ(sum->recent_p50_s, 2);
}

// The recent p50 is the lower median: of an even count, the smaller middle
// value, with one step per report (a selection) and with k-step reports (a
// sort) alike.
TEST(StepTimeStatsTest, RecentIsTheLowerMedianWithOneOrManyStepsPerReport) {
  StepTimeStats unit;
  int64_t t = 0;
  for (int64_t ms : {400, 100, 300, 200}) unit.Add(ms * kS / 1000, 1, t += kS);
  EXPECT_DOUBLE_EQ(unit.Summary()->recent_p50_s, 0.2);
  unit.Add(kS / 1000, 1, t += kS);  // 1, 100, 200, 300, 400 ms
  EXPECT_DOUBLE_EQ(unit.Summary()->recent_p50_s, 0.2);
  StepTimeStats weighted;
  t = 0;
  weighted.Add(3 * 100 * kS / 1000, 3, t += kS);  // 3 steps of 100 ms
  weighted.Add(400 * kS / 1000, 1, t += kS);
  weighted.Add(2 * 300 * kS / 1000, 2, t += kS);  // 100 x3, 300 x2, 400
  EXPECT_DOUBLE_EQ(weighted.Summary()->recent_p50_s, 0.1);
  weighted.Add(2 * 500 * kS / 1000, 2, t += kS);  // ... and 500 x2: 8 steps
  EXPECT_DOUBLE_EQ(weighted.Summary()->recent_p50_s, 0.3);
}

// Reports of 30 steps: the window takes whole reports until it holds at
// least 100 steps (4 reports, 120 steps).
TEST(StepTimeStatsTest, RecentTakesWholeReports) {
  StepTimeStats s;
  for (int i = 1; i <= 6; ++i) s.Add(30 * kS, 30, i * 30 * kS);
  EXPECT_EQ(s.Summary()->recent_steps, 120);
  EXPECT_EQ(s.Summary()->baseline_steps, 180);
}

// One 60 s step a minute, 20 minutes: the window holds the steps that
// completed at most 15 min before the newest (at minutes 5..20: 16 steps).
TEST(StepTimeStatsTest, RecentIsAtMostFifteenMinutes) {
  StepTimeStats s;
  for (int m = 1; m <= 20; ++m) s.Add(60 * kS, 1, m * 60 * kS);
  EXPECT_EQ(s.Summary()->recent_steps, 16);
  // A newest step long after the rest: it alone is recent.
  s.Add(3600 * kS, 1, 80 * 60 * kS);
  auto sum = s.Summary();
  EXPECT_EQ(sum->recent_steps, 1);
  EXPECT_DOUBLE_EQ(sum->recent_p50_s, 3600);
  EXPECT_NEAR(sum->baseline_median_s, 60, 60 * kBucketError);
}

TEST(StepTimeStatsTest, SaveAndLoadKeepTheRingOrder) {
  StepTimeStats s;
  int64_t t = 0;
  for (int i = 0; i < 230; ++i) s.Add((1 + i % 7) * kS, 1 + i % 3, t += kS);
  internal::v1::JobTrackerState::StepTimes saved;
  s.SaveState(&saved);
  ASSERT_EQ(saved.recent_size(), 0);  // version 7: columns only
  const auto& columns = saved.recent_columns();
  ASSERT_EQ(columns.steps_size(), 100);
  ASSERT_EQ(columns.per_step_ns_size(), 100);
  ASSERT_EQ(columns.at_delta_ns_size(), 100);
  int64_t at_ns = 0;
  for (int64_t delta : columns.at_delta_ns()) at_ns += delta;
  EXPECT_EQ(at_ns, t);  // newest last
  EXPECT_EQ(columns.at_delta_ns(99), kS);
  EXPECT_EQ(columns.steps(99), 1 + 229 % 3);
  EXPECT_EQ(columns.per_step_ns(99), (1 + 229 % 7) * kS / (1 + 229 % 3));
  StepTimeStats back;
  ASSERT_TRUE(back.LoadState(saved).ok());
  for (int i = 0; i < 37; ++i) {  // wraps the ring again
    s.Add(9 * kS, 2, t += kS);
    back.Add(9 * kS, 2, t);
  }
  auto a = s.Summary(), b = back.Summary();
  EXPECT_EQ(a->baseline_steps, b->baseline_steps);
  EXPECT_EQ(a->recent_steps, b->recent_steps);
  EXPECT_EQ(a->recent_p50_s, b->recent_p50_s);
  EXPECT_EQ(a->baseline_median_s, b->baseline_median_s);
  EXPECT_EQ(a->baseline_mad_s, b->baseline_mad_s);
  internal::v1::JobTrackerState::StepTimes again, again_back;
  s.SaveState(&again);
  back.SaveState(&again_back);
  EXPECT_EQ(again.SerializeAsString(), again_back.SerializeAsString());
}

TEST(StepTimeStatsTest, LoadRejectsInconsistentStates) {
  StepTimeStats s;
  s.Add(kS, 1, kS);
  s.Add(2 * kS, 1, 3 * kS);
  internal::v1::JobTrackerState::StepTimes good;
  s.SaveState(&good);
  auto expect_loss = [&](internal::v1::JobTrackerState::StepTimes bad) {
    StepTimeStats t;
    absl::Status st = t.LoadState(bad);
    EXPECT_EQ(st.code(), absl::StatusCode::kDataLoss) << st;
    EXPECT_FALSE(t.Summary());  // unchanged
  };
  auto bad = good;
  bad.mutable_baseline(1)->set_index(good.baseline(0).index());
  expect_loss(bad);
  bad = good;
  bad.mutable_baseline(0)->set_steps(0);
  expect_loss(bad);
  bad = good;
  bad.mutable_recent_columns()->set_steps(0, 0);
  expect_loss(bad);
  bad = good;
  bad.clear_baseline();
  expect_loss(bad);
  bad = good;
  bad.mutable_recent_columns()->add_steps(1);  // a column longer
  expect_loss(bad);
  bad = good;
  bad.add_recent()->set_steps(1);  // both forms
  expect_loss(bad);
  bad = good;
  for (int i = 0; i < 100; ++i) {
    bad.mutable_recent_columns()->add_per_step_ns(kS);
    bad.mutable_recent_columns()->add_at_delta_ns(kS);
    bad.mutable_recent_columns()->add_steps(1);
  }
  expect_loss(bad);
}

// `columns` (version 7) as the messages of versions 3 to 6.
internal::v1::JobTrackerState::StepTimes AsMessages(
    internal::v1::JobTrackerState::StepTimes columns) {
  const auto& c = columns.recent_columns();
  int64_t at_ns = 0;
  for (int i = 0; i < c.steps_size(); ++i) {
    auto* r = columns.add_recent();
    r->set_per_step_ns(c.per_step_ns(i));
    r->set_at_ns(at_ns += c.at_delta_ns(i));
    r->set_steps(c.steps(i));
  }
  columns.clear_recent_columns();
  return columns;
}

TEST(StepTimeStatsTest, AnOlderRecordsMessagesLoadAsTheColumnsDo) {
  StepTimeStats s;
  int64_t t = 1'795'341'600 * kS;
  for (int i = 0; i < 130; ++i) s.Add((1 + i % 5) * kS, 1 + i % 2, t += kS);
  internal::v1::JobTrackerState::StepTimes saved;
  s.SaveState(&saved);
  StepTimeStats back;
  ASSERT_TRUE(back.LoadState(AsMessages(saved)).ok());
  internal::v1::JobTrackerState::StepTimes again;
  back.SaveState(&again);
  EXPECT_EQ(again.SerializeAsString(), saved.SerializeAsString());
  EXPECT_LT(saved.ByteSizeLong(), AsMessages(saved).ByteSizeLong() * 2 / 3);
}

}  // namespace
}  // namespace goodput::core
