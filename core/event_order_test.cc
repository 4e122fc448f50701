#include "core/event_order.h"

#include <numeric>

#include "core/testing/timeline.h"
#include "gtest/gtest.h"

namespace goodput::core {
namespace {

using ::goodput::core::testing::ParseEvents;
using ::goodput::core::testing::Timeline;

TEST(EventOrderTest, SameTimeKindsApplyInSpecOrderThenArrival) {
  auto events = ParseEvents(Timeline(R"(
10:00:00 {"job_ended":{"outcome":"SUCCEEDED"}}
10:00:00 {"activity":{"kind":"INIT"}}
10:00:00 {"started":{}}
10:00:00 {"interruption":{"reason":"OTHER"}}
10:00:00 {"checkpoint":{"step":1}}
10:00:00 {"step":{"step":2}}
10:00:00 {"step":{"step":1}}
10:00:00 {"allocation":{"chips":1}}
10:00:00 {"job_submitted":{"chips":1}}
09:59:59.999 {"job_ended":{"outcome":"FAILED"}}
)"));
  std::vector<uint32_t> order(events.size());
  std::iota(order.begin(), order.end(), 0);
  SortForApply(events, &order);
  // Earlier time first; then submitted, allocation, steps in arrival
  // order (2 before 1), checkpoint, interruption, started, activity, ended.
  EXPECT_EQ(order, (std::vector<uint32_t>{9, 8, 7, 5, 6, 4, 3, 2, 1, 0}));
}

TEST(EventOrderTest, TimeNanosAndFormat) {
  auto e = ParseEvents(Timeline("10:00:00.250 {\"started\":{}}"))[0];
  int64_t t = EventTimeNanos(e);
  EXPECT_EQ(t % 1'000'000'000, 250'000'000);
  EXPECT_EQ(FormatTimeNanos(t), "2026-11-22T10:00:00.25Z");
  EXPECT_EQ(FormatTimeNanos(t - 250'000'000), "2026-11-22T10:00:00Z");
}

}  // namespace
}  // namespace goodput::core
