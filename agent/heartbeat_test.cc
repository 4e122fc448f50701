#include "agent/heartbeat.h"

#include <memory>

#include "agent/batcher.h"
#include "agent/spool.h"
#include "agent/testing/test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace goodput::agent {
namespace {

constexpr int64_t kStart = int64_t{1790000000} * 1000000000 + 123456789;

TEST(HeartbeatTest, EmitsAtFirstPollThenEveryInterval) {
  testing::TempDir tmp;
  FakeClock clock(kStart);
  auto spool = Spool::Open({tmp.path(), 1 << 20});
  ASSERT_TRUE(spool.ok());
  Batcher batcher({/*batch_events=*/1, absl::Milliseconds(200), "h", {}},
                  spool->get(), &clock);
  Heartbeat heartbeat({4, "tpu-v5p", "host-9", absl::Seconds(60)}, &batcher,
                      &clock);
  heartbeat.Poll();
  heartbeat.Poll();  // not due again yet
  ASSERT_EQ((*spool)->Pending().size(), 1u);
  clock.Advance(absl::ToInt64Nanoseconds(absl::Seconds(59)));
  heartbeat.Poll();
  EXPECT_EQ((*spool)->Pending().size(), 1u);
  clock.Advance(absl::ToInt64Nanoseconds(absl::Seconds(1)));
  heartbeat.Poll();
  EXPECT_EQ((*spool)->Pending().size(), 2u);
  EXPECT_EQ(heartbeat.sent(), 2);

  auto first = (*spool)->Read(1);
  ASSERT_TRUE(first.ok());
  const v1::Event& e = first->events(0);
  EXPECT_EQ(e.host(), "host-9");
  EXPECT_EQ(e.heartbeat().chips(), 4);
  EXPECT_EQ(e.heartbeat().accelerator(), "tpu-v5p");
  EXPECT_EQ(e.time().seconds(), 1790000000);
  EXPECT_EQ(e.time().nanos(), 123456789);
  EXPECT_EQ(heartbeat.NextDueNanos(),
            kStart + absl::ToInt64Nanoseconds(absl::Seconds(120)));
}

}  // namespace
}  // namespace goodput::agent
