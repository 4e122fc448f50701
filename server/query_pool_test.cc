// The query pool: work runs on its threads at the lowered priority, the
// caller gets it back done, and bad settings are refused by name.
#include "server/query_pool.h"

#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/notification.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace goodput::server {
namespace {

using ::testing::HasSubstr;

int ThisThreadsNice() {
  return getpriority(PRIO_PROCESS, static_cast<id_t>(syscall(SYS_gettid)));
}

TEST(QueryPoolTest, RunsOnAPoolThreadWithTheNiceValueAddedToTheProcesses) {
  const int base = ThisThreadsNice();
  auto pool = QueryPool::Start({.threads = 2, .nice = 7});
  ASSERT_TRUE(pool.ok()) << pool.status();
  int nice = -100;
  std::thread::id where;
  (*pool)->Run([&] {
    nice = ThisThreadsNice();
    where = std::this_thread::get_id();
  });
  EXPECT_EQ(nice, std::min(19, base + 7));
  EXPECT_NE(where, std::this_thread::get_id());
  EXPECT_EQ(ThisThreadsNice(), base);  // the caller's priority is its own
}

TEST(QueryPoolTest, NiceZeroKeepsThePriority) {
  const int base = ThisThreadsNice();
  auto pool = QueryPool::Start({.threads = 1, .nice = 0});
  ASSERT_TRUE(pool.ok()) << pool.status();
  int nice = -100;
  (*pool)->Run([&] { nice = ThisThreadsNice(); });
  EXPECT_EQ(nice, base);
}

TEST(QueryPoolTest, RunReturnsOnlyAfterItsWorkAndEveryCallerGetsItsOwn) {
  auto pool = QueryPool::Start({.threads = 2, .nice = 1});
  ASSERT_TRUE(pool.ok()) << pool.status();
  constexpr int kCallers = 8;
  std::vector<int> results(kCallers, 0);
  std::vector<std::thread> callers;
  for (int i = 0; i < kCallers; ++i) {
    callers.emplace_back([&, i] {
      int mine = 0;
      (*pool)->Run([&] { mine = i * i + 1; });
      results[i] = mine;  // set by the pool before Run returned
    });
  }
  for (std::thread& t : callers) t.join();
  for (int i = 0; i < kCallers; ++i) EXPECT_EQ(results[i], i * i + 1);
}

TEST(QueryPoolTest, AWaitingCallerIsServedByAnotherThread) {
  auto pool = QueryPool::Start({.threads = 2, .nice = 1});
  ASSERT_TRUE(pool.ok()) << pool.status();
  absl::Notification release;
  std::thread held(
      [&] { (*pool)->Run([&] { release.WaitForNotification(); }); });
  // The second thread answers while the first is held; a one-thread pool
  // (or one that ran tasks on a single thread) would deadlock here.
  (*pool)->Run([&] { release.Notify(); });
  held.join();
}

TEST(QueryPoolTest, RefusesOutOfRangeSettingsByName) {
  auto high = QueryPool::Start({.threads = 1, .nice = 20});
  ASSERT_FALSE(high.ok());
  EXPECT_EQ(high.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(high.status().message()),
              HasSubstr("--query_nice=20"));
  EXPECT_FALSE(QueryPool::Start({.threads = 1, .nice = -1}).ok());
  auto none = QueryPool::Start({.threads = 0, .nice = 1});
  ASSERT_FALSE(none.ok());
  EXPECT_THAT(std::string(none.status().message()), HasSubstr("0"));
}

}  // namespace
}  // namespace goodput::server
