#include "agent/backoff.h"

#include "gtest/gtest.h"

namespace goodput::agent {
namespace {

TEST(BackoffTest, DoublesWithJitterUpToTheMax) {
  Backoff backoff(absl::Milliseconds(100), absl::Seconds(10), /*seed=*/42);
  absl::Duration cap = absl::Milliseconds(100);
  for (int i = 0; i < 20; ++i) {
    const absl::Duration d = backoff.Next();
    EXPECT_GE(d, cap / 2) << "attempt " << i;
    EXPECT_LE(d, cap) << "attempt " << i;
    cap = std::min(cap * 2, absl::Seconds(10));
  }
}

TEST(BackoffTest, ResetStartsOverAndJitterVaries) {
  Backoff backoff(absl::Milliseconds(100), absl::Seconds(10), /*seed=*/7);
  for (int i = 0; i < 10; ++i) backoff.Next();
  EXPECT_GE(backoff.Next(), absl::Seconds(5));
  backoff.Reset();
  EXPECT_LE(backoff.Next(), absl::Milliseconds(100));
  // Jitter: not every first delay is the same.
  bool differs = false;
  Backoff a(absl::Milliseconds(100), absl::Seconds(10), 1);
  Backoff b(absl::Milliseconds(100), absl::Seconds(10), 2);
  for (int i = 0; i < 5; ++i) differs |= a.Next() != b.Next();
  EXPECT_TRUE(differs);
}

}  // namespace
}  // namespace goodput::agent
