#include "core/sliding_window.h"

#include <random>
#include <vector>

#include "core/config.h"
#include "core/job_ledger.h"
#include "gtest/gtest.h"

namespace goodput::core {
namespace {

constexpr int64_t kSec = kNanosPerSecond;

WindowAmounts Total(double total, double productive = 0) {
  WindowAmounts a;
  a.total = total;
  a.productive = productive;
  return a;
}

TEST(SlidingWindowTest, SumCoversTheBucketOfNowAndTheOnesBefore) {
  SlidingWindow w(60 * kSec, 6);  // 10 s buckets
  w.Add(5 * kSec, Total(1));      // bucket 0
  w.Add(15 * kSec, Total(2));     // bucket 1
  w.Add(65 * kSec, Total(4));     // bucket 6
  // As of 65 s: buckets 1..6, span [10 s, 65 s].
  EXPECT_EQ(w.Sum(65 * kSec).total, 6);
  EXPECT_EQ(w.SpanStart(65 * kSec), 10 * kSec);
  // Bucket 0 left memory when bucket 6 opened: as of 59 s only 1..5.
  EXPECT_EQ(w.Sum(59 * kSec).total, 2);
  w.Add(35 * kSec, Total(8));  // an older bucket still kept: inserted
  EXPECT_EQ(w.Sum(65 * kSec).total, 14);
  // As of 125 s: bucket 12; 7..12 hold nothing.
  EXPECT_EQ(w.Sum(125 * kSec).total, 0);
}

TEST(SlidingWindowTest, MemoryIsBoundedAndOldIncreasesAreDropped) {
  SlidingWindow w(60 * kSec, 6);
  for (int i = 0; i < 1000; ++i) w.Add(i * 10 * kSec, Total(1));
  EXPECT_LE(w.bucket_count(), 6u);
  EXPECT_EQ(w.Sum(9990 * kSec).total, 6);
  w.Add(9945 * kSec, Total(5));  // bucket 994, the oldest kept
  EXPECT_EQ(w.Sum(9990 * kSec).total, 11);
  w.Add(100 * kSec, Total(7));  // far too old
  EXPECT_EQ(w.dropped(), 1);
  EXPECT_EQ(w.Sum(9990 * kSec).total, 11);
}

// The window's ratio is the ratio of the counters' increases between the
// start of its span and now.
TEST(SlidingWindowTest, RatioEqualsRatioOfCounterIncreases) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> amount(0, 100);
  SlidingWindow w(300 * kSec, 30);
  struct Point {
    int64_t t;
    double total, productive;  // counters after this increase
  };
  std::vector<Point> counters = {{0, 0, 0}};
  int64_t t = 0;
  for (int i = 0; i < 2000; ++i) {
    t += static_cast<int64_t>(amount(rng) * 0.05 * kSec);
    const double total = amount(rng), productive = total * amount(rng) / 100;
    w.Add(t, Total(total, productive));
    counters.push_back({t, counters.back().total + total,
                        counters.back().productive + productive});
    if (i % 97 != 0) continue;
    const int64_t start = w.SpanStart(t);
    Point before{0, 0, 0};  // counters just before the span starts
    for (const Point& p : counters) {
      if (p.t < start) before = p;
    }
    const Point& now = counters.back();
    const TotalsRatios r = w.Sum(t).Ratios(false);
    ASSERT_TRUE(r.ratios.goodput.has_value());
    EXPECT_NEAR(
        *r.ratios.goodput,
        (now.productive - before.productive) / (now.total - before.total),
        1e-9);
  }
}

TEST(JobLedgerTest, CountersNeverDecreaseAndTheFallIsClamped) {
  JobLedger ledger;
  Recognized r;
  r.nanos[Index(Category::kProductive)] = 100;
  r.steps = 10;
  CounterIncrease up = ledger.Update(r);
  EXPECT_EQ(up.nanos[Index(Category::kProductive)], 100);
  EXPECT_EQ(up.steps, 10);
  // A rebuild lowers productive to 60: nothing is counted, 40 is clamped.
  r.nanos[Index(Category::kProductive)] = 60;
  r.steps = 8;
  up = ledger.Update(r);
  EXPECT_EQ(up.nanos[Index(Category::kProductive)], 0);
  EXPECT_EQ(up.clamped[Index(Category::kProductive)], 40);
  EXPECT_EQ(up.steps, 0);
  // It grows again: only what passes the high-water mark counts.
  r.nanos[Index(Category::kProductive)] = 130;
  up = ledger.Update(r);
  EXPECT_EQ(up.nanos[Index(Category::kProductive)], 30);
  EXPECT_EQ(up.clamped[Index(Category::kProductive)], 0);
  EXPECT_EQ(ledger.counted().nanos[Index(Category::kProductive)], 130);
}

TEST(JobLedgerTest, ObservationsAreConsumedOnce) {
  JobLedger ledger;
  EXPECT_EQ(ledger.Consume(3), 0u);
  EXPECT_EQ(ledger.Consume(5), 3u);
  EXPECT_EQ(ledger.Consume(2), 2u);  // a rebuilt, shorter list: none new
  EXPECT_EQ(ledger.Consume(6), 5u);
}

// A loaded window holds the same buckets: the same sums, the same
// drops, and the same further adds and evictions of old buckets.
TEST(SlidingWindowTest, SaveAndLoadKeepTheBuckets) {
  SlidingWindow w(60 * kSec, 6);
  for (int i = 0; i < 10; ++i) w.Add(i * 9 * kSec, Total(i, i / 2.0));
  w.Add(0, Total(100));  // dropped
  internal::v1::SlidingWindowState state;
  w.SaveState(&state);
  SlidingWindow loaded(60 * kSec, 6);
  ASSERT_TRUE(loaded.LoadState(state).ok());
  EXPECT_EQ(loaded.dropped(), 1);
  EXPECT_EQ(loaded.bucket_count(), w.bucket_count());
  for (SlidingWindow* x : {&w, &loaded}) x->Add(75 * kSec, Total(3, 1));
  for (int64_t now = 40 * kSec; now < 200 * kSec; now += 5 * kSec) {
    EXPECT_EQ(loaded.Sum(now).total, w.Sum(now).total) << now;
    EXPECT_EQ(loaded.Sum(now).productive, w.Sum(now).productive) << now;
  }
  EXPECT_EQ(loaded.bucket_count(), w.bucket_count());
}

// Rule 14's slice efficiency: held over requested elastic chip-seconds in
// the window, absent without any, and kept by a saved state.
TEST(SlidingWindowTest, SliceEfficiencyIsHeldOverRequestedAndIsSaved) {
  SlidingWindow w(60 * kSec, 6);
  EXPECT_FALSE(w.Sum(0).SliceEfficiency().has_value());
  WindowAmounts a;
  a.total = 10;
  w.Add(0, a);  // a fixed-size job's increase: still none
  EXPECT_FALSE(w.Sum(0).SliceEfficiency().has_value());
  a.elastic_held = 40;
  a.elastic_requested = 80;
  w.Add(10 * kSec, a);
  a.elastic_held = 20;
  a.elastic_requested = 20;
  w.Add(20 * kSec, a);
  EXPECT_DOUBLE_EQ(*w.Sum(20 * kSec).SliceEfficiency(), 60.0 / 100.0);
  internal::v1::SlidingWindowState state;
  w.SaveState(&state);
  SlidingWindow loaded(60 * kSec, 6);
  ASSERT_TRUE(loaded.LoadState(state).ok());
  EXPECT_DOUBLE_EQ(*loaded.Sum(20 * kSec).SliceEfficiency(), 0.6);
  // 80 s on, only the bucket of 20 s is still in the window.
  EXPECT_DOUBLE_EQ(*loaded.Sum(75 * kSec).SliceEfficiency(), 1.0);
}

TEST(SlidingWindowTest, LoadRefusesOtherShapesAndDisorder) {
  SlidingWindow w(60 * kSec, 6);
  w.Add(5 * kSec, Total(1));
  w.Add(25 * kSec, Total(1));
  internal::v1::SlidingWindowState state;
  w.SaveState(&state);
  EXPECT_EQ(SlidingWindow(60 * kSec, 12).LoadState(state).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(SlidingWindow(120 * kSec, 6).LoadState(state).code(),
            absl::StatusCode::kInvalidArgument);
  auto swapped = state;
  swapped.mutable_bucket()->SwapElements(0, 1);
  absl::Status s = w.LoadState(swapped);
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(s.message().substr(0, 15), "bucket[1].index") << s;
  auto far = state;
  far.mutable_bucket(1)->set_index(6);  // 6 buckets after bucket 0
  EXPECT_EQ(w.LoadState(far).code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(w.Sum(25 * kSec).total, 2);  // unchanged
}

}  // namespace
}  // namespace goodput::core
