#include "core/checkpoint_advice.h"

#include <cmath>

#include "gtest/gtest.h"

namespace goodput::core {
namespace {

// 64 chips, 72 h of running time, 12 interruptions (M = 6 h = 21600 s),
// 72 hourly saves of 60 s (C = 60 s), 12 restarts of 600 s in all (R = 50 s).
CheckpointObservation HourlySaver() {
  CheckpointObservation o;
  o.run_seconds = 72 * 3600;
  o.interruptions = 12;
  o.checkpoint_seconds = 72 * 60;
  o.checkpoints = 72;
  o.restart_seconds = 600;
  o.chips = 64;
  return o;
}

TEST(CheckpointAdviceTest, YoungDalyIntervalAndExpectedShares) {
  const auto a = AdviseCheckpoint(HourlySaver(), 0);
  ASSERT_TRUE(a);
  EXPECT_DOUBLE_EQ(a->mtbi_seconds, 21600);
  EXPECT_FALSE(a->mtbi_from_segment);
  EXPECT_DOUBLE_EQ(a->save_seconds, 60);
  EXPECT_DOUBLE_EQ(a->restart_seconds, 50);
  // sqrt(2 x 60 x 21600) = sqrt(2,592,000) = 1609.97 s (26.8 min).
  EXPECT_NEAR(a->advised_interval_seconds, 1609.968944, 1e-6);
  // At 3600 s: 60/3600 + (3600 + 60)/43200 = 0.016667 + 0.084722.
  EXPECT_NEAR(*a->actual_interval_seconds, 3600, 1e-9);
  EXPECT_NEAR(*a->expected_share_at_actual, 60.0 / 3600 + 3660.0 / 43200,
              1e-12);
  // At the optimum: 60/1609.97 + 1669.97/43200 = 0.037268 + 0.038657.
  EXPECT_NEAR(a->expected_share_at_advised, 0.0759245, 1e-6);
  EXPECT_LT(a->expected_share_at_advised, *a->expected_share_at_actual);
}

TEST(CheckpointAdviceTest, FewInterruptionsUseTheSegmentRateScaledToChips) {
  CheckpointObservation o = HourlySaver();
  o.interruptions = 2;  // below kMinOwnInterruptions
  // Segment: one interruption per 100 chip-hours; 64 chips: M = 100/64 h.
  const auto a = AdviseCheckpoint(o, 1.0 / (100 * 3600));
  ASSERT_TRUE(a);
  EXPECT_TRUE(a->mtbi_from_segment);
  EXPECT_DOUBLE_EQ(a->mtbi_seconds, 100.0 * 3600 / 64);  // 5625 s
  EXPECT_NEAR(a->advised_interval_seconds, std::sqrt(2 * 60 * 5625.0), 1e-9);
}

TEST(CheckpointAdviceTest, NothingToAdviseWithoutSavesOrInterruptions) {
  CheckpointObservation no_saves = HourlySaver();
  no_saves.checkpoints = 0;
  EXPECT_FALSE(AdviseCheckpoint(no_saves, 1e-6));
  CheckpointObservation calm = HourlySaver();
  calm.interruptions = 0;
  EXPECT_FALSE(AdviseCheckpoint(calm, 0));  // and a calm segment
  ASSERT_TRUE(AdviseCheckpoint(calm, 1e-6));
  EXPECT_DOUBLE_EQ(AdviseCheckpoint(calm, 1e-6)->restart_seconds, 0);
  CheckpointObservation free_saves = HourlySaver();
  free_saves.checkpoint_seconds = 0;  // asynchronous: C = 0, no interval
  EXPECT_FALSE(AdviseCheckpoint(free_saves, 0));
}

// Per-segment advice (issue 18 part 2). Hand-computed segment of two
// TRAINING jobs:
// A: 64 chips, 74 h (1 h queued, 1 h recovery: 72 h running), 12
//    interruptions, 72 saves of 60 s.
// B: 8 chips, 16 h running, 1 interruption, 16 saves of 30 s.
// Sums: run 88 h, 72 x 64 + 16 x 8 = 4736 chip-hours, 13 interruptions
// (2.745e-3 per chip-hour), 88 saves, 4320 + 480 = 4800 s saving.
constexpr int64_t kHourNs = 3600LL * 1000000000LL;

JobReport TrainingJob(int64_t chips, int64_t hours, int64_t interruptions,
                      int64_t saves, int64_t save_seconds) {
  JobReport j;
  j.chips = chips;
  j.workload = v1::JobSubmitted::TRAINING;
  j.total_ns = hours * kHourNs;
  j.nanos[Index(Category::kCheckpoint)] = saves * save_seconds * 1000000000LL;
  j.interruptions = interruptions;
  j.checkpoints = saves;
  return j;
}

CheckpointSums SegmentOfAandB() {
  JobReport a = TrainingJob(64, 74, 12, 72, 60);
  a.nanos[Index(Category::kQueued)] = kHourNs;
  a.nanos[Index(Category::kRecovery)] = kHourNs;
  const JobReport b = TrainingJob(8, 16, 1, 16, 30);
  JobReport serving = TrainingJob(8, 10, 5, 10, 30);
  serving.workload = v1::JobSubmitted::SERVING;
  const JobReport no_chips = TrainingJob(0, 10, 5, 10, 30);
  CheckpointSums sums;
  for (const JobReport& j : {a, b, serving, no_chips}) {
    AddCheckpointSums(j, &sums);
  }
  return sums;
}

TEST(CheckpointSegmentTest, SumsTrainingJobsWithChipsOnly) {
  const CheckpointSums s = SegmentOfAandB();
  EXPECT_DOUBLE_EQ(s.run_seconds, 88 * 3600.0);
  EXPECT_DOUBLE_EQ(s.run_chip_seconds, 4736 * 3600.0);
  EXPECT_EQ(s.interruptions, 13);
  EXPECT_EQ(s.checkpoints, 88);
  EXPECT_DOUBLE_EQ(s.checkpoint_seconds, 4800);
  EXPECT_DOUBLE_EQ(s.restart_seconds, 3600);  // A's hour of recovery
  EXPECT_DOUBLE_EQ(InterruptionsPerChipSecond(s), 13 / (4736 * 3600.0));
  CheckpointSums twice = s;
  AddCheckpointSums(s, &twice);
  EXPECT_EQ(twice.interruptions, 26);
  EXPECT_DOUBLE_EQ(twice.run_chip_seconds, 2 * 4736 * 3600.0);
}

// The segment's own: M = 88 h / 13 = 24369.2 s, C = 4800 / 88 = 54.5 s,
// R = 3600 / 13 s; advised sqrt(2 x 54.5 x 24369.2) = 1630.5 s; actual
// 88 h / 88 saves = 3600 s.
TEST(CheckpointSegmentTest, SegmentAdviceIsItsOwnM) {
  const auto a = AdviseSet(SegmentOfAandB());
  ASSERT_TRUE(a);
  EXPECT_NEAR(a->mtbi_seconds, 88 * 3600.0 / 13, 1e-9);
  EXPECT_NEAR(a->save_seconds, 4800.0 / 88, 1e-12);
  EXPECT_NEAR(a->restart_seconds, 3600.0 / 13, 1e-12);
  EXPECT_NEAR(a->advised_interval_seconds, 1630.479, 1e-3);
  EXPECT_DOUBLE_EQ(*a->actual_interval_seconds, 3600);
  CheckpointSums few = SegmentOfAandB();
  few.interruptions = kMinOwnInterruptions - 1;
  EXPECT_FALSE(AdviseSet(few));
}

// B has 1 interruption: M = 1 / (rate x 8 chips) = 4736 / (13 x 8) h =
// 45.54 h = 163938.5 s; C = 30 s: advised sqrt(2 x 30 x 163938.5) =
// 3136.3 s. A has 12: its own M, 6 h.
TEST(CheckpointSegmentTest, AJobWithFewInterruptionsScalesTheSegmentRate) {
  const CheckpointSums seg = SegmentOfAandB();
  const auto b = AdviseJobInSegment(TrainingJob(8, 16, 1, 16, 30), seg);
  ASSERT_TRUE(b);
  EXPECT_TRUE(b->mtbi_from_segment);
  EXPECT_NEAR(b->mtbi_seconds, 4736.0 / (13 * 8) * 3600, 1e-6);
  EXPECT_NEAR(b->advised_interval_seconds, 3136.289, 1e-3);
  JobReport a = TrainingJob(64, 74, 12, 72, 60);
  a.nanos[Index(Category::kQueued)] = kHourNs;
  a.nanos[Index(Category::kRecovery)] = kHourNs;
  const auto own = AdviseJobInSegment(a, seg);
  ASSERT_TRUE(own);
  EXPECT_FALSE(own->mtbi_from_segment);
  EXPECT_DOUBLE_EQ(own->mtbi_seconds, 21600);
  // Without the segment, B has no M.
  EXPECT_FALSE(AdviseJob(TrainingJob(8, 16, 1, 16, 30), 0));
}

}  // namespace
}  // namespace goodput::core
