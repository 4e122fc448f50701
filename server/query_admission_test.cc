// The cap on concurrent heavy queries: refusals at the cap, counted, and
// slots given back.
#include "server/query_admission.h"

#include <algorithm>
#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace goodput::server {
namespace {

using ::testing::HasSubstr;

TEST(QueryAdmissionTest, RefusesBeyondTheCapNamingTheFlag) {
  int refused = 0;
  QueryAdmission admission(2, [&refused] { ++refused; });
  EXPECT_TRUE(admission.Enter().ok());
  EXPECT_TRUE(admission.Enter().ok());
  absl::Status s = admission.Enter();
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(std::string(s.message()),
              HasSubstr("--max_concurrent_queries=2"));
  EXPECT_EQ(refused, 1);
  EXPECT_EQ(admission.running(), 2);  // a refusal holds no slot
}

TEST(QueryAdmissionTest, LeaveFreesASlot) {
  int refused = 0;
  QueryAdmission admission(1, [&refused] { ++refused; });
  ASSERT_TRUE(admission.Enter().ok());
  EXPECT_FALSE(admission.Enter().ok());
  admission.Leave();
  EXPECT_EQ(admission.running(), 0);
  EXPECT_TRUE(admission.Enter().ok());
  EXPECT_EQ(refused, 1);
}

TEST(QueryAdmissionTest, WorksWithoutACallback) {
  QueryAdmission admission(1, nullptr);
  ASSERT_TRUE(admission.Enter().ok());
  EXPECT_EQ(admission.Enter().code(), absl::StatusCode::kResourceExhausted);
}

// Many threads entering and leaving at once: never more than the cap
// inside, every attempt either admitted or counted as refused.
TEST(QueryAdmissionTest, ConcurrentQueriesNeverExceedTheCap) {
  constexpr int kCap = 3, kThreads = 8, kAttempts = 2000;
  std::atomic<int> refused{0}, admitted{0}, inside{0}, most{0};
  QueryAdmission admission(kCap, [&refused] { ++refused; });
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < kAttempts; ++i) {
        if (!admission.Enter().ok()) continue;
        ++admitted;
        const int now = ++inside;
        int seen = most.load();
        while (now > seen && !most.compare_exchange_weak(seen, now)) {
        }
        --inside;
        admission.Leave();
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_LE(most.load(), kCap);
  EXPECT_EQ(admitted + refused, kThreads * kAttempts);
  EXPECT_EQ(admission.running(), 0);
}

}  // namespace
}  // namespace goodput::server
