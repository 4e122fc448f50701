#include "agent/spool.h"

#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "agent/testing/test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace goodput::agent {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::MatchesRegex;
using testing::TempDir;

std::vector<v1::Event> Events(int n, const std::string& job = "job") {
  std::vector<v1::Event> events(n);
  for (int i = 0; i < n; ++i) {
    events[i].set_job_id(job);
    events[i].mutable_step()->set_step(i + 1);
    events[i].mutable_time()->set_seconds(1700000000 + i);
  }
  return events;
}

std::set<std::string> Files(const std::string& dir) {
  std::set<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    out.insert(e.path().filename().string());
  }
  return out;
}

std::unique_ptr<Spool> OpenOrDie(const std::string& dir,
                                 uint64_t max_bytes = uint64_t{1} << 30) {
  auto spool = Spool::Open({dir, max_bytes});
  EXPECT_TRUE(spool.ok()) << spool.status();
  return spool.ok() ? *std::move(spool) : nullptr;
}

TEST(SpoolTest, IdentityIsCreatedOnceAndKept) {
  TempDir tmp;
  const std::string dir = tmp.File("spool");
  std::string id;
  {
    auto spool = OpenOrDie(dir);
    id = spool->agent_id();
  }
  EXPECT_THAT(id, MatchesRegex("[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-"
                               "[89ab][0-9a-f]{3}-[0-9a-f]{12}"));
  EXPECT_EQ(OpenOrDie(dir)->agent_id(), id);
  EXPECT_NE(OpenOrDie(tmp.File("other"))->agent_id(), id);
}

TEST(SpoolTest, AppendAssignsSequencesAndWritesBatches) {
  TempDir tmp;
  auto spool = OpenOrDie(tmp.path());
  for (uint64_t want = 1; want <= 3; ++want) {
    auto seq = spool->Append(Events(2), 1000 + want);
    ASSERT_TRUE(seq.ok()) << seq.status();
    EXPECT_EQ(*seq, want);
  }
  EXPECT_THAT(spool->Pending(), ElementsAre(1, 2, 3));
  EXPECT_TRUE(Files(tmp.path())
                  .count("batch-00000000000000000002-0000000000000001002.pb"));
  auto batch = spool->Read(2);
  ASSERT_TRUE(batch.ok()) << batch.status();
  EXPECT_EQ(batch->agent_id(), spool->agent_id());
  EXPECT_EQ(batch->sequence(), 2u);
  ASSERT_EQ(batch->events_size(), 2);
  EXPECT_EQ(batch->events(1).step().step(), 2);
  EXPECT_EQ(spool->Stats().oldest_received_ns, 1001);
  EXPECT_EQ(spool->Stats().pending_batches, 3u);
}

TEST(SpoolTest, AckDeletesTheBatchAndEverythingBelow) {
  TempDir tmp;
  auto spool = OpenOrDie(tmp.path());
  for (int i = 0; i < 4; ++i) ASSERT_TRUE(spool->Append(Events(1), i).ok());
  const uint64_t bytes_before = spool->Stats().bytes;
  ASSERT_TRUE(spool->Ack(2).ok());
  EXPECT_THAT(spool->Pending(), ElementsAre(3, 4));
  EXPECT_LT(spool->Stats().bytes, bytes_before);
  EXPECT_TRUE(absl::IsNotFound(spool->Read(1).status()));
  EXPECT_TRUE(spool->Ack(2).ok());  // acking again is fine
  ASSERT_TRUE(spool->Ack(4).ok());
  EXPECT_THAT(spool->Pending(), IsEmpty());
  EXPECT_EQ(spool->Stats().bytes, 0u);
  EXPECT_EQ(spool->Stats().oldest_received_ns, std::nullopt);
  for (const std::string& f : Files(tmp.path())) {
    EXPECT_FALSE(absl::StartsWith(f, "batch-")) << f;
  }
}

TEST(SpoolTest, RestartKeepsPendingBatchesAndSequenceNeverGoesBack) {
  TempDir tmp;
  std::string id;
  {
    auto spool = OpenOrDie(tmp.path());
    id = spool->agent_id();
    for (int i = 0; i < 3; ++i) ASSERT_TRUE(spool->Append(Events(2), i).ok());
    ASSERT_TRUE(spool->Ack(1).ok());
  }
  {
    auto spool = OpenOrDie(tmp.path());
    EXPECT_EQ(spool->agent_id(), id);
    EXPECT_THAT(spool->Pending(), ElementsAre(2, 3));
    EXPECT_EQ(spool->Read(3)->events_size(), 2);
    EXPECT_GT(spool->Stats().bytes, 0u);
    ASSERT_TRUE(spool->Ack(3).ok());  // everything acked: no files left
  }
  auto spool = OpenOrDie(tmp.path());
  EXPECT_THAT(spool->Pending(), IsEmpty());
  EXPECT_EQ(*spool->Append(Events(1), 0), 4u);
  EXPECT_EQ(spool->agent_id(), id);
}

TEST(SpoolTest, HighWaterMarkIsRepairedFromFilesAtOpen) {
  TempDir tmp;
  {
    auto spool = OpenOrDie(tmp.path());
    for (int i = 0; i < 2; ++i) ASSERT_TRUE(spool->Append(Events(1), i).ok());
  }
  // A crash between batch 2's rename and its high-water write.
  std::ofstream(tmp.File("last_sequence")) << "1\n";
  {
    auto spool = OpenOrDie(tmp.path());
    ASSERT_TRUE(spool->Ack(2).ok());
  }
  EXPECT_EQ(*OpenOrDie(tmp.path())->Append(Events(1), 0), 3u);
}

TEST(SpoolTest, FullSpoolRefusesAndWritesNothing) {
  TempDir tmp;
  auto spool = OpenOrDie(tmp.path(), /*max_bytes=*/300);
  uint64_t last = 0;
  absl::StatusOr<uint64_t> seq;
  while ((seq = spool->Append(Events(3), 0)).ok()) last = *seq;
  ASSERT_GT(last, 0u);
  EXPECT_TRUE(absl::IsResourceExhausted(seq.status())) << seq.status();
  EXPECT_THAT(seq.status().message(), ::testing::HasSubstr("spool full"));
  const std::set<std::string> before = Files(tmp.path());
  EXPECT_TRUE(absl::IsResourceExhausted(spool->Append(Events(3), 0).status()));
  EXPECT_EQ(Files(tmp.path()), before);
  EXPECT_TRUE(spool->Stats().full);
  EXPECT_LE(spool->Stats().bytes, 300u);
  ASSERT_TRUE(spool->Ack(1).ok());
  EXPECT_FALSE(spool->Stats().full);
  EXPECT_EQ(*spool->Append(Events(3), 0), last + 1);  // no sequence burned
}

TEST(SpoolTest, OpenRemovesInterruptedWritesAndIgnoresStrangers) {
  TempDir tmp;
  { OpenOrDie(tmp.path()); }
  std::ofstream(
      tmp.File("batch-00000000000000000001-0000000000000000000.pb.tmp"))
      << "half";
  std::ofstream(tmp.File("README")) << "hello";
  auto spool = OpenOrDie(tmp.path());
  EXPECT_THAT(spool->Pending(), IsEmpty());
  EXPECT_FALSE(
      Files(tmp.path())
          .count("batch-00000000000000000001-0000000000000000000.pb.tmp"));
  EXPECT_TRUE(Files(tmp.path()).count("README"));
}

TEST(SpoolTest, CorruptBatchIsDataLossAndCanBeDiscarded) {
  TempDir tmp;
  {
    auto spool = OpenOrDie(tmp.path());
    ASSERT_TRUE(spool->Append(Events(1), 5).ok());
    ASSERT_TRUE(spool->Append(Events(1), 6).ok());
  }
  std::ofstream(tmp.File("batch-00000000000000000001-0000000000000000005.pb"))
      << "not a protobuf \xff\xff\xff";
  auto spool = OpenOrDie(tmp.path());
  EXPECT_TRUE(absl::IsDataLoss(spool->Read(1).status()));
  ASSERT_TRUE(spool->Discard(1).ok());
  EXPECT_THAT(spool->Pending(), ElementsAre(2));
  EXPECT_TRUE(spool->Read(2).ok());
}

TEST(SpoolTest, BatchesWithoutIdentityAreRefused) {
  TempDir tmp;
  {
    auto spool = OpenOrDie(tmp.path());
    ASSERT_TRUE(spool->Append(Events(1), 0).ok());
  }
  std::filesystem::remove(tmp.File("agent_id"));
  auto spool = Spool::Open({tmp.path(), 1 << 20});
  EXPECT_TRUE(absl::IsFailedPrecondition(spool.status())) << spool.status();
}

TEST(SpoolTest, EmptyBatchIsRefusedAndListenerHearsAppends) {
  TempDir tmp;
  auto spool = OpenOrDie(tmp.path());
  int heard = 0;
  spool->SetAppendListener([&heard] { ++heard; });
  EXPECT_TRUE(absl::IsInvalidArgument(spool->Append({}, 0).status()));
  EXPECT_EQ(heard, 0);
  ASSERT_TRUE(spool->Append(Events(1), 0).ok());
  EXPECT_EQ(heard, 1);
  EXPECT_EQ(spool->NextPendingAfter(0), 1u);
  EXPECT_EQ(spool->NextPendingAfter(1), std::nullopt);
}

}  // namespace
}  // namespace goodput::agent
