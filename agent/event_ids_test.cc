#include "agent/event_ids.h"

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "agent/spool.h"
#include "agent/testing/test_util.h"
#include "gtest/gtest.h"

namespace goodput::agent {
namespace {

using testing::TempDir;

std::unique_ptr<EventIds> OpenIds(const std::string& path, size_t max = 100) {
  auto ids = EventIds::Open(path, max);
  EXPECT_TRUE(ids.ok()) << ids.status();
  return ids.ok() ? *std::move(ids) : nullptr;
}

std::vector<v1::Event> Events(int n) {
  std::vector<v1::Event> events(n);
  for (int i = 0; i < n; ++i) {
    events[i].set_job_id("job");
    events[i].mutable_step()->set_step(i + 1);
  }
  return events;
}

TEST(EventIdsTest, HashIsStableAndNeverZero) {
  // FNV-1a 64 of "a": a journal written by one build is read by the next.
  EXPECT_EQ(EventIds::Hash("a"), 0xaf63dc4c8601ec8cull);
  EXPECT_NE(EventIds::Hash(""), 0u);
  EXPECT_NE(EventIds::Hash("x"), EventIds::Hash("y"));
}

TEST(EventIdsTest, ClaimOnceReleaseAgain) {
  TempDir tmp;
  auto ids = OpenIds(tmp.File("event_ids"));
  EXPECT_TRUE(ids->Claim(7));
  EXPECT_FALSE(ids->Claim(7));  // a resend
  ids->Release({7});            // its batch was dropped
  EXPECT_TRUE(ids->Claim(7));   // so the resend is taken
  EXPECT_FALSE(ids->Claim(0));  // 0 is "no id", never taken
}

TEST(EventIdsTest, RecordedIdsSurviveReopenClaimedOnesDoNot) {
  TempDir tmp;
  const std::string path = tmp.File("event_ids");
  {
    auto ids = OpenIds(path);
    ASSERT_TRUE(ids->Claim(1));
    ASSERT_TRUE(ids->Claim(2));
    ASSERT_TRUE(ids->Record({1}).ok());  // 1 was spooled, 2 was not
  }
  auto ids = OpenIds(path);
  EXPECT_TRUE(ids->Contains(1));
  EXPECT_FALSE(ids->Contains(2));
}

TEST(EventIdsTest, KeepsTheNewestMaxIdsAcrossCompaction) {
  TempDir tmp;
  const std::string path = tmp.File("event_ids");
  {
    auto ids = OpenIds(path, 10);
    for (uint64_t id = 1; id <= 35; ++id) ASSERT_TRUE(ids->Record({id}).ok());
    EXPECT_EQ(ids->size(), 10u);
    EXPECT_FALSE(ids->Contains(25));
    EXPECT_TRUE(ids->Contains(26));
  }
  EXPECT_LE(std::filesystem::file_size(path), 2 * 10 * 8u);
  auto ids = OpenIds(path, 10);
  EXPECT_EQ(ids->size(), 10u);
  EXPECT_TRUE(ids->Contains(35));
  EXPECT_TRUE(ids->Contains(26));
}

TEST(EventIdsTest, SyncWritesToDiskOnlyWhatIsNew) {
  TempDir tmp;
  auto ids = OpenIds(tmp.File("ids"));
  ASSERT_TRUE(ids->Sync().ok());
  EXPECT_EQ(ids->syncs(), 0);  // nothing recorded yet
  ASSERT_TRUE(ids->Record({1, 2}).ok());
  ASSERT_TRUE(ids->Sync().ok());
  EXPECT_EQ(ids->syncs(), 1);
  ASSERT_TRUE(ids->Sync().ok());       // an ack with nothing new
  ASSERT_TRUE(ids->Record({0}).ok());  // no id: nothing written
  ASSERT_TRUE(ids->Sync().ok());
  EXPECT_EQ(ids->syncs(), 1);
  ASSERT_TRUE(ids->Record({3}).ok());
  ASSERT_TRUE(ids->Sync().ok());
  EXPECT_EQ(ids->syncs(), 2);
}

TEST(EventIdsTest, TornLastEntryIsIgnored) {
  TempDir tmp;
  const std::string path = tmp.File("event_ids");
  {
    auto ids = OpenIds(path);
    ASSERT_TRUE(ids->Record({5}).ok());
  }
  std::ofstream(path, std::ios::app) << "abc";  // a kill mid-write
  auto ids = OpenIds(path);
  EXPECT_TRUE(ids->Contains(5));
  EXPECT_EQ(ids->size(), 1u);
  EXPECT_EQ(std::filesystem::file_size(path), 8u);
}

TEST(EventIdsSpoolTest, AppendRecordsIdsAndKeepsThemInTheBatchFile) {
  TempDir tmp;
  auto ids = OpenIds(tmp.File("event_ids"));
  auto spool = Spool::Open({tmp.File("spool")});
  ASSERT_TRUE(spool.ok());
  (*spool)->SetEventIds(ids.get());
  auto seq = (*spool)->Append(Events(2), 1, {11, 0});
  ASSERT_TRUE(seq.ok());
  EXPECT_TRUE(ids->Contains(11));
  auto batch = (*spool)->Read(*seq);
  ASSERT_TRUE(batch.ok());
  ASSERT_EQ(batch->event_ids_size(), 2);
  EXPECT_EQ(batch->event_ids(0), 11u);
  EXPECT_FALSE((*spool)->Append(Events(2), 1, {1}).ok());  // sizes differ
}

TEST(EventIdsSpoolTest, NewestBatchIdsAreRecoveredWhenTheJournalMissedThem) {
  TempDir tmp;
  const std::string dir = tmp.File("spool");
  {
    auto spool = Spool::Open({dir});
    ASSERT_TRUE(spool.ok());
    auto journal = OpenIds(tmp.File("other_journal"));
    (*spool)->SetEventIds(journal.get());
    ASSERT_TRUE((*spool)->Append(Events(1), 1, {21}).ok());
    ASSERT_TRUE((*spool)->Append(Events(1), 1, {22}).ok());
  }
  // As if killed after the batch file, before its journal write: a fresh
  // journal knows nothing, the spool tells it the newest batch's ids.
  auto ids = OpenIds(tmp.File("event_ids"));
  auto spool = Spool::Open({dir});
  ASSERT_TRUE(spool.ok());
  (*spool)->SetEventIds(ids.get());
  EXPECT_TRUE(ids->Contains(22));
  EXPECT_FALSE(ids->Contains(21));  // older batches were journaled in order
}

}  // namespace
}  // namespace goodput::agent
