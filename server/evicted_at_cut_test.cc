#include "server/evicted_at_cut.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "storage/memory_event_store.h"

namespace goodput::server {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

storage::JobSnapshot Snapshot(const std::string& job_id, uint64_t through_batch,
                              bool events_deleted = false) {
  storage::JobSnapshot s;
  s.report.job_id = job_id;
  s.through_batch = through_batch;
  s.events_deleted = events_deleted;
  return s;
}

std::vector<std::string> Ids(const std::vector<storage::JobSnapshot>& all) {
  std::vector<std::string> ids;
  for (const storage::JobSnapshot& s : all) ids.push_back(s.report.job_id);
  return ids;
}

class EvictedAtCutTest : public ::testing::Test {
 protected:
  void Store(std::vector<storage::JobSnapshot> snapshots) {
    ASSERT_TRUE(store_.WriteSnapshots(snapshots).ok());
  }
  storage::MemoryEventStore store_;
};

TEST_F(EvictedAtCutTest, NothingEvictedReadsNothing) {
  Store({Snapshot("a", 3)});
  EvictedAtCut none;
  none.AddHeld("b");
  auto got = none.Read(&store_);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_TRUE(got->empty());
}

TEST_F(EvictedAtCutTest, GivesTheSnapshotsOfTheJobsNotHeldInIdOrder) {
  Store(
      {Snapshot("d", 2), Snapshot("a", 3), Snapshot("c", 5), Snapshot("b", 4)});
  EvictedAtCut cut(/*through_batch=*/5);
  cut.AddHeld("c");
  core::JobReport held;
  held.job_id = "a";
  cut.AddHeld(std::vector<core::JobReport>{held});
  auto got = cut.Read(&store_);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_THAT(Ids(*got), ElementsAre("b", "d"));
}

TEST_F(EvictedAtCutTest, ASnapshotAfterTheCutOfAJobNotHeldThenAborts) {
  Store({Snapshot("a", 3), Snapshot("new", 6)});
  EvictedAtCut cut(/*through_batch=*/5);
  auto got = cut.Read(&store_);
  EXPECT_TRUE(absl::IsAborted(got.status())) << got.status();
  EXPECT_THAT(got.status().message(), HasSubstr("job new"));
  EXPECT_THAT(got.status().message(), HasSubstr("after batch 5"));
}

TEST_F(EvictedAtCutTest, ASnapshotAfterTheCutOfAHeldJobIsLeftOut) {
  Store({Snapshot("a", 3), Snapshot("held", 6)});
  EvictedAtCut cut(/*through_batch=*/5);
  cut.AddHeld("held");
  auto got = cut.Read(&store_);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_THAT(Ids(*got), ElementsAre("a"));
}

// Retention restates an evicted job's final report with events_deleted and
// a through_batch past every batch: that is no newer state.
TEST_F(EvictedAtCutTest, ARetiredSnapshotIsTheJobsFinalReport) {
  Store({Snapshot("old", std::numeric_limits<uint64_t>::max(),
                  /*events_deleted=*/true)});
  EvictedAtCut cut(/*through_batch=*/5);
  auto got = cut.Read(&store_);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_THAT(Ids(*got), ElementsAre("old"));
}

}  // namespace
}  // namespace goodput::server
