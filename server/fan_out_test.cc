#include "server/fan_out.h"

#include <atomic>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "cluster/lease_keeper.h"
#include "cluster/member_directory.h"
#include "cluster/partition_assigner.h"
#include "cluster/testing/fake_lease_store.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "util/clock.h"

namespace goodput::server {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr int64_t kTtl = 9LL * 1000 * 1000 * 1000;
constexpr int32_t kPartitions = 4;

class FanOutTest : public ::testing::Test {
 protected:
  FanOutTest()
      : clock_(1),
        store_(&clock_, kTtl),
        directory_(&store_),
        fan_out_(&directory_, kPartitions, [] { return std::string("a"); }) {}

  void AddMember(const std::string& id, const std::string& address) {
    ASSERT_TRUE(
        store_.Create(cluster::MemberKey(id), cluster::MemberValue(id, address))
            .ok());
  }
  // Each member answers "<id>" for the partitions `parts` gives it.
  FanOut::Ask<std::string> Answer(
      std::map<std::string, std::vector<int32_t>> parts) {
    return [this, parts](const cluster::Member& m,
                         bool self) -> absl::StatusOr<MemberPart<std::string>> {
      ++asked_;
      EXPECT_EQ(self, m.id == "a");
      return MemberPart<std::string>{
          absl::StrCat(m.id, "@", m.address, self ? " (self)" : ""),
          parts.at(m.id)};
    };
  }

  FakeClock clock_;
  cluster::FakeLeaseStore store_;
  cluster::MemberDirectory directory_;
  FanOut fan_out_;
  std::atomic<int> asked_{0};
};

TEST_F(FanOutTest, GathersEveryMembersPartInMemberOrder) {
  AddMember("b", "host-b:7700");
  AddMember("a", "host-a:7700");
  auto parts = fan_out_.Gather(Answer({{"a", {0, 3}}, {"b", {1, 2}}}));
  ASSERT_TRUE(parts.ok()) << parts.status();
  EXPECT_THAT(*parts, ElementsAre("a@host-a:7700 (self)", "b@host-b:7700"));
  EXPECT_EQ(asked_, 2);
}

TEST_F(FanOutTest, AMemberThatDoesNotAnswerFailsTheQueryNamingIt) {
  AddMember("a", "host-a:1");
  AddMember("b", "host-b:2");
  auto parts = fan_out_.Gather<std::string>(
      [](const cluster::Member& m,
         bool) -> absl::StatusOr<MemberPart<std::string>> {
        if (m.id == "b") return absl::DeadlineExceededError("too slow");
        return MemberPart<std::string>{"a", {0, 1, 2, 3}};
      });
  EXPECT_TRUE(absl::IsDeadlineExceeded(parts.status())) << parts.status();
  EXPECT_EQ(parts.status().message(),
            "cluster member b (host-b:2) did not answer: too slow; the "
            "fleet's answer would miss its partitions");
}

TEST_F(FanOutTest, PartitionsNoMemberAnsweredForFailTheQueryNamingThem) {
  AddMember("a", "host-a:1");
  AddMember("b", "host-b:2");
  auto parts = fan_out_.Gather(Answer({{"a", {0}}, {"b", {2}}}));
  EXPECT_TRUE(absl::IsUnavailable(parts.status())) << parts.status();
  EXPECT_THAT(parts.status().message(),
              HasSubstr("no member answers for partitions 1,3 (of 4): they "
                        "have no owner now"));
}

TEST_F(FanOutTest, APartitionAnsweredTwiceIsAskedOnceMoreThenAborted) {
  AddMember("a", "host-a:1");
  AddMember("b", "host-b:2");
  // A move under way: both answer for partition 1 the first time only.
  std::atomic<int> round{0};
  auto moving = [&](const cluster::Member& m,
                    bool) -> absl::StatusOr<MemberPart<std::string>> {
    const bool first = round++ < 2;
    if (m.id == "a") return MemberPart<std::string>{"a", {0, 1}};
    return MemberPart<std::string>{"b", first ? std::vector<int32_t>{1, 2, 3}
                                              : std::vector<int32_t>{2, 3}};
  };
  auto parts = fan_out_.Gather<std::string>(moving);
  ASSERT_TRUE(parts.ok()) << parts.status();
  EXPECT_EQ(round, 4);
  asked_ = 0;
  parts = fan_out_.Gather(Answer({{"a", {0, 1}}, {"b", {1, 2, 3}}}));
  EXPECT_TRUE(absl::IsAborted(parts.status())) << parts.status();
  EXPECT_THAT(parts.status().message(),
              HasSubstr("partitions 1 answered by two members"));
  EXPECT_EQ(asked_, 4);
}

TEST_F(FanOutTest, AMemberWithoutAnAddressFailsTheQueryBeforeAnyCall) {
  AddMember("a", "host-a:1");
  AddMember("old", "");
  auto parts = fan_out_.Gather(Answer({{"a", {0, 1, 2, 3}}}));
  EXPECT_TRUE(absl::IsUnavailable(parts.status()));
  EXPECT_THAT(parts.status().message(),
              HasSubstr("cluster member old advertises no address"));
  EXPECT_EQ(asked_, 0);
}

TEST_F(FanOutTest, AnUnreadableMemberListFailsTheQuery) {
  store_.set_unavailable(true);
  auto parts = fan_out_.Gather(Answer({}));
  EXPECT_TRUE(absl::IsUnavailable(parts.status()));
  EXPECT_THAT(parts.status().message(),
              HasSubstr("cluster: cannot list the members"));
}

TEST_F(FanOutTest, AJobGoesToItsPartitionsLeaseHolder) {
  AddMember("a", "host-a:1");
  AddMember("b", "host-b:2");
  const std::string job = "job-17";
  const int32_t p = cluster::PartitionOfJob(job, kPartitions);
  auto owner = fan_out_.OwnerOfJob(job);
  EXPECT_TRUE(absl::IsUnavailable(owner.status()));
  EXPECT_THAT(owner.status().message(),
              HasSubstr(absl::StrCat("job job-17's partition ", p,
                                     " has no owner now")));
  ASSERT_TRUE(store_.Create(cluster::LeaseKey(p), "b").ok());
  owner = fan_out_.OwnerOfJob(job);
  ASSERT_TRUE(owner.ok()) << owner.status();
  EXPECT_EQ(owner->first.address, "host-b:2");
  EXPECT_FALSE(owner->second);
  ASSERT_TRUE(store_.Delete(cluster::LeaseKey(p)).ok());
  ASSERT_TRUE(store_.Create(cluster::LeaseKey(p), "a").ok());
  owner = fan_out_.OwnerOfJob(job);
  ASSERT_TRUE(owner.ok()) << owner.status();
  EXPECT_EQ(owner->first.id, "a");
  EXPECT_TRUE(owner->second);  // this instance: answered locally
}

TEST(FanOutPartitionsTest, FormatAndParseAList) {
  EXPECT_EQ(FanOut::FormatPartitions({0, 3, 17}), "0,3,17");
  EXPECT_EQ(FanOut::FormatPartitions({}), "");
  auto parsed = FanOut::ParsePartitions("0,3,17");
  ASSERT_TRUE(parsed.ok());
  EXPECT_THAT(*parsed, ElementsAre(0, 3, 17));
  parsed = FanOut::ParsePartitions("");
  ASSERT_TRUE(parsed.ok());
  EXPECT_TRUE(parsed->empty());
  for (const char* bad : {"a", "1,-2", "1;2"}) {
    EXPECT_TRUE(absl::IsInvalidArgument(FanOut::ParsePartitions(bad).status()))
        << bad;
  }
}

}  // namespace
}  // namespace goodput::server
