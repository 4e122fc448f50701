// The cap on concurrent heavy queries: refusals at the cap, counted, and
// slots given back.
#include "server/query_admission.h"

#include <string>

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

}  // namespace
}  // namespace goodput::server
