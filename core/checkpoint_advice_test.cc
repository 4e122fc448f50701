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
}

}  // namespace
}  // namespace goodput::core
