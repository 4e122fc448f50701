#include "core/job_hosts.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace goodput::core {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

constexpr int64_t kMin = 60'000'000'000;

TEST(JobHostsTest, HostsOfTheLastMinutesSortedByName) {
  JobHosts hosts(10 * kMin, 8);
  hosts.Add("b", 0);
  hosts.Add("a", 1 * kMin);
  hosts.Add("", 2 * kMin);  // no host: ignored
  EXPECT_THAT(hosts.Current(), ElementsAre("a", "b"));
}

TEST(JobHostsTest, AnEarlierAttemptsHostsDropOutAfterRecent) {
  JobHosts hosts(10 * kMin, 8);
  hosts.Add("old", 0);
  hosts.Add("new", 10 * kMin);  // exactly 10 min after "old": still current
  EXPECT_THAT(hosts.Current(), ElementsAre("new", "old"));
  hosts.Add("new", 10 * kMin + 1);  // one ns more: "old" is stale
  EXPECT_THAT(hosts.Current(), ElementsAre("new"));
  hosts.Add("old", 0);  // an older event again: still stale
  EXPECT_THAT(hosts.Current(), ElementsAre("new"));
  hosts.Add("old", 5 * kMin);  // a late but newer event of "old": current
  EXPECT_THAT(hosts.Current(), ElementsAre("new", "old"));
}

TEST(JobHostsTest, KeepsAtMostMaxHostsDroppingTheStalest) {
  JobHosts hosts(100 * kMin, 2);
  hosts.Add("a", 3 * kMin);
  hosts.Add("b", 1 * kMin);
  hosts.Add("c", 2 * kMin);  // b (1 min) is the stalest
  EXPECT_THAT(hosts.Current(), ElementsAre("a", "c"));
  JobHosts none(kMin, 2);
  EXPECT_THAT(none.Current(), IsEmpty());
}

}  // namespace
}  // namespace goodput::core
