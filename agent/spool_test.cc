#include "agent/spool.h"

#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "agent/testing/test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "util/fault_injecting_file_system.h"
#include "util/posix_file_system.h"

namespace goodput::agent {
namespace {

using Fault = FaultInjectingFileSystem::Fault;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
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

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void WriteAll(const std::string& path, const std::string& data) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << data;
}

// The spool on the real disk under a FaultInjectingFileSystem.
class FaultySpoolTest : public ::testing::Test {
 protected:
  std::unique_ptr<Spool> Open() {
    auto spool = Spool::Open({tmp_.path(), uint64_t{1} << 30, &faulty_});
    EXPECT_TRUE(spool.ok()) << spool.status();
    return spool.ok() ? *std::move(spool) : nullptr;
  }
  std::set<std::string> BatchFiles() const {
    std::set<std::string> out;
    for (const std::string& f : Files(tmp_.path())) {
      if (f != "agent_id" && f != "last_sequence" && f != "lock" &&
          f != "dead-letter") {
        out.insert(f);
      }
    }
    return out;
  }

  TempDir tmp_;
  PosixFileSystem posix_;
  FaultInjectingFileSystem faulty_{&posix_};
};

TEST_F(FaultySpoolTest, NoSpaceIsSpoolFullAndLosesNothingAcknowledged) {
  auto spool = Open();
  ASSERT_TRUE(spool->Append(Events(2), 1).ok());
  const std::set<std::string> before = BatchFiles();
  faulty_.Inject(Fault::kNoSpace);
  auto refused = spool->Append(Events(2), 2);
  EXPECT_TRUE(absl::IsResourceExhausted(refused.status())) << refused.status();
  EXPECT_THAT(refused.status().message(), HasSubstr("spool full: no space"));
  SpoolStats stats = spool->Stats();
  EXPECT_TRUE(stats.full);
  EXPECT_FALSE(stats.failing);
  EXPECT_EQ(stats.no_space, 1u);
  EXPECT_EQ(stats.write_errors, 1u);
  EXPECT_THAT(stats.last_error, HasSubstr("No space left on device"));
  EXPECT_EQ(BatchFiles(), before);  // no half-written file, no .tmp
  // The disk has room again: the next batch takes the next sequence.
  EXPECT_EQ(*spool->Append(Events(1), 3), 2u);
  EXPECT_FALSE(spool->Stats().full);
  spool.reset();
  spool = Open();
  EXPECT_THAT(spool->Pending(), ElementsAre(1, 2));
  EXPECT_EQ(spool->Read(1)->events_size(), 2);
}

class FailedWriteTest : public FaultySpoolTest,
                        public ::testing::WithParamInterface<Fault> {};

TEST_P(FailedWriteTest, IsAnErrorThatLosesNothingAcknowledged) {
  auto spool = Open();
  ASSERT_TRUE(spool->Append(Events(2), 1).ok());
  const std::set<std::string> before = BatchFiles();
  faulty_.Inject(GetParam());
  auto failed = spool->Append(Events(2), 2);
  ASSERT_FALSE(failed.ok());
  EXPECT_FALSE(absl::IsResourceExhausted(failed.status())) << failed.status();
  ASSERT_EQ(faulty_.fired(GetParam()), 1);
  SpoolStats stats = spool->Stats();
  EXPECT_TRUE(stats.failing);
  EXPECT_FALSE(stats.full);
  EXPECT_EQ(stats.write_errors, 1u);
  EXPECT_EQ(stats.last_error, failed.status().ToString());
  EXPECT_EQ(stats.pending_batches, 1u);
  EXPECT_EQ(BatchFiles(), before);
  EXPECT_EQ(*spool->Append(Events(3), 3), 2u);  // no sequence burned
  EXPECT_FALSE(spool->Stats().failing);
  spool.reset();
  spool = Open();
  EXPECT_THAT(spool->Pending(), ElementsAre(1, 2));
  EXPECT_EQ(spool->Read(1)->events_size(), 2);
  EXPECT_EQ(spool->Read(2)->events_size(), 3);
}

// A batch file's fsync comes after Append, from the FileSyncer: its
// failure is the next Commit's (below).
INSTANTIATE_TEST_SUITE_P(Faults, FailedWriteTest,
                         ::testing::Values(Fault::kRenameFails,
                                           Fault::kTornWrite));

TEST_F(FaultySpoolTest, FailedBatchFileFsyncFailsTheCommitAndIsRetried) {
  auto spool = Open();
  ASSERT_TRUE(spool->Append(Events(2), 1).ok());
  ASSERT_TRUE(spool->Commit().ok());
  faulty_.Inject(Fault::kFsyncFails);           // the next batch file's fsync
  ASSERT_EQ(*spool->Append(Events(3), 2), 2u);  // renamed: a kill keeps it
  absl::Status s = spool->Commit();
  EXPECT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("fdatasync"));
  EXPECT_THAT(s.message(), HasSubstr("batch-00000000000000000002-"));
  EXPECT_EQ(faulty_.fired(Fault::kFsyncFails), 1);
  SpoolStats stats = spool->Stats();
  EXPECT_TRUE(stats.failing);
  EXPECT_EQ(stats.sync_errors, 1u);
  EXPECT_EQ(stats.pending_batches, 2u);  // the batch stays and is sent
  EXPECT_EQ(spool->Read(2)->events_size(), 3);
  EXPECT_TRUE(spool->Commit().ok());  // fsync'ed again, then the directory
  spool.reset();
  spool = Open();
  EXPECT_THAT(spool->Pending(), ElementsAre(1, 2));
}

// Counts the fsyncs the spool asks for: one per WriteFile and SyncFile
// (the FileSyncer's threads), one per SyncDir. SyncFile of a batch file
// waits for `gate` while it is armed.
class CountingFileSystem : public PosixFileSystem {
 public:
  absl::Status WriteFile(const std::string& path,
                         absl::string_view data) override {
    ++file_syncs;
    return PosixFileSystem::WriteFile(path, data);
  }
  absl::Status SyncFile(const std::string& path) override {
    if (gated) gate.WaitForNotification();
    ++file_syncs;
    return PosixFileSystem::SyncFile(path);
  }
  absl::Status SyncDir(const std::string& dir) override {
    ++dir_syncs;
    file_syncs_at_dir_sync = file_syncs.load();
    return PosixFileSystem::SyncDir(dir);
  }
  std::atomic<int> file_syncs{0};
  std::atomic<int> dir_syncs{0};
  std::atomic<int> file_syncs_at_dir_sync{0};  // when the last began
  std::atomic<bool> gated{false};
  absl::Notification gate;
};

// Copies the files of `from` into `to`: what a kill -9 leaves behind (the
// page cache survives a killed process; the lock does not).
void CopyAsKilled(const std::string& from, const std::string& to) {
  for (const std::string& f : Files(from)) {
    if (f == "lock" || f == "dead-letter") continue;
    std::filesystem::copy_file(from + "/" + f, to + "/" + f);
  }
}

TEST(SpoolSyncTest, ABatchCostsOneFsyncAndCommitOneForAllOfThem) {
  TempDir tmp;
  CountingFileSystem fs;
  auto spool = Spool::Open({tmp.path(), uint64_t{1} << 30, &fs});
  ASSERT_TRUE(spool.ok()) << spool.status();
  const int files_at_open = fs.file_syncs;
  const int dirs_at_open = fs.dir_syncs;
  // The first Append also reserves sequences 1..1024 (file + directory).
  ASSERT_EQ(*(*spool)->Append(Events(2), 1), 1u);
  EXPECT_EQ(fs.dir_syncs - dirs_at_open, 1);
  EXPECT_EQ((*spool)->Stats().reserved_sequence, 1024u);
  for (int i = 0; i < 9; ++i) ASSERT_TRUE((*spool)->Append(Events(2), 2).ok());
  EXPECT_EQ(fs.dir_syncs - dirs_at_open, 1);
  // Waits for the ten batch files' fsyncs, then one for the ten renames.
  ASSERT_TRUE((*spool)->Commit().ok());
  EXPECT_EQ(fs.file_syncs - files_at_open, 11);  // the block, one per batch
  EXPECT_EQ(fs.dir_syncs - dirs_at_open, 2);
  ASSERT_TRUE((*spool)->Commit().ok());  // nothing new: no fsync
  EXPECT_EQ(fs.dir_syncs - dirs_at_open, 2);
  EXPECT_EQ((*spool)->Stats().reserved_sequence, 1024u);
}

TEST(SpoolSyncTest, AppendLeavesTheFsyncToTheSyncerAndCommitWaitsForIt) {
  TempDir tmp;
  CountingFileSystem fs;
  auto spool = Spool::Open({tmp.path(), uint64_t{1} << 30, &fs});
  ASSERT_TRUE(spool.ok()) << spool.status();
  ASSERT_TRUE((*spool)->Append(Events(1), 1).ok());  // reserves the block
  ASSERT_TRUE((*spool)->Commit().ok());
  const int files_before = fs.file_syncs;
  fs.gated = true;  // batch files' fsyncs wait for the gate
  ASSERT_EQ(*(*spool)->Append(Events(2), 2), 2u);  // returns all the same
  ASSERT_EQ(*(*spool)->Append(Events(2), 3), 3u);
  EXPECT_EQ((*spool)->Read(3)->events_size(), 2);  // renamed, readable
  EXPECT_EQ(fs.file_syncs - files_before, 0);
  std::thread opener([&] { fs.gate.Notify(); });  // while Commit waits
  EXPECT_TRUE((*spool)->Commit().ok());
  // Both files' fsyncs were done when the directory's began.
  EXPECT_EQ(fs.file_syncs_at_dir_sync - files_before, 2);
  opener.join();
}

// Remove of a batch file waits for `gate` while `gated`, or fails (EIO)
// while `fail`.
class SlowRemoveFileSystem : public PosixFileSystem {
 public:
  absl::Status Remove(const std::string& path) override {
    if (gated && absl::StrContains(path, "/batch-")) {
      in_remove.Notify();
      gate.WaitForNotification();
    }
    if (fail) return absl::ErrnoToStatus(EIO, absl::StrCat("unlink ", path));
    return PosixFileSystem::Remove(path);
  }
  std::atomic<bool> gated{false};
  std::atomic<bool> fail{false};
  absl::Notification in_remove;
  absl::Notification gate;
};

// Ack deletes the files outside the spool's lock: an Append (the intake)
// goes on while an unlink waits (a disk mounted with `discard`).
TEST(SpoolAckTest, AppendDoesNotWaitForTheUnlinksOfAnAck) {
  TempDir tmp;
  SlowRemoveFileSystem fs;
  auto spool = Spool::Open({tmp.path(), uint64_t{1} << 30, &fs});
  ASSERT_TRUE(spool.ok()) << spool.status();
  ASSERT_TRUE((*spool)->Append(Events(2), 1).ok());
  fs.gated = true;
  std::thread ack([&] { EXPECT_TRUE((*spool)->Ack(1).ok()); });
  fs.in_remove.WaitForNotification();
  absl::Notification appended;
  std::thread append([&] {
    EXPECT_EQ(*(*spool)->Append(Events(1), 2), 2u);
    appended.Notify();
  });
  // Bounded only so that a regression fails instead of hanging.
  EXPECT_TRUE(appended.WaitForNotificationWithTimeout(absl::Seconds(30)));
  EXPECT_THAT((*spool)->Pending(), ElementsAre(2));  // 1 already gone
  fs.gate.Notify();
  ack.join();
  append.join();
  EXPECT_EQ(Files(tmp.path())
                .count("batch-00000000000000000001-0000000000000000001.pb"),
            0u);
}

// A failed unlink leaves the batch pending (sent again, answered as a
// duplicate) with its bytes counted, as before.
TEST(SpoolAckTest, AFailedUnlinkLeavesTheBatchPending) {
  TempDir tmp;
  SlowRemoveFileSystem fs;
  auto spool = Spool::Open({tmp.path(), uint64_t{1} << 30, &fs});
  ASSERT_TRUE(spool.ok()) << spool.status();
  for (int i = 0; i < 3; ++i) ASSERT_TRUE((*spool)->Append(Events(2), i).ok());
  const uint64_t bytes = (*spool)->Stats().bytes;
  fs.fail = true;
  EXPECT_FALSE((*spool)->Ack(2).ok());
  EXPECT_THAT((*spool)->Pending(), ElementsAre(1, 2, 3));
  EXPECT_EQ((*spool)->Stats().bytes, bytes);
  fs.fail = false;
  ASSERT_TRUE((*spool)->Ack(2).ok());
  EXPECT_THAT((*spool)->Pending(), ElementsAre(3));
  EXPECT_LT((*spool)->Stats().bytes, bytes);
}

TEST(SpoolSyncTest, AKilledAgentSkipsTheRestOfItsReservedBlock) {
  TempDir tmp;
  TempDir killed;
  {
    auto spool = OpenOrDie(tmp.path());
    for (int i = 0; i < 3; ++i) ASSERT_TRUE(spool->Append(Events(1), i).ok());
    ASSERT_TRUE(spool->Commit().ok());
    CopyAsKilled(tmp.path(), killed.path());
  }  // a clean close gives the block back
  auto clean = OpenOrDie(tmp.path());
  EXPECT_THAT(clean->Pending(), ElementsAre(1, 2, 3));
  EXPECT_EQ(*clean->Append(Events(1), 9), 4u);
  auto after_kill = OpenOrDie(killed.path());
  EXPECT_THAT(after_kill->Pending(), ElementsAre(1, 2, 3));
  ASSERT_TRUE(after_kill->Ack(3).ok());  // even with nothing left pending
  EXPECT_EQ(*after_kill->Append(Events(1), 9), 1025u);
}

TEST(SpoolSyncTest, NewBlockIsReservedWhenTheOldOneIsUsedUp) {
  TempDir tmp;
  CountingFileSystem fs;
  Spool::Options options{tmp.path(), uint64_t{1} << 30, &fs};
  options.sequence_block = 4;
  auto spool = Spool::Open(options);
  ASSERT_TRUE(spool.ok());
  for (int i = 0; i < 4; ++i) {
    ASSERT_TRUE((*spool)->Append(Events(1), i).ok());
    ASSERT_TRUE((*spool)->Ack(i + 1).ok());
  }
  EXPECT_EQ((*spool)->Stats().reserved_sequence, 4u);
  ASSERT_TRUE((*spool)->Commit().ok());  // no fsync of batches 1-4 pending
  const int files_before = fs.file_syncs;
  EXPECT_EQ(*(*spool)->Append(Events(1), 0), 5u);
  EXPECT_EQ((*spool)->Stats().reserved_sequence, 8u);
  ASSERT_TRUE((*spool)->Commit().ok());
  EXPECT_EQ(fs.file_syncs - files_before, 2);  // the block and the batch
}

TEST_F(FaultySpoolTest, FailedCommitIsReportedAndRetriedLosingNothing) {
  auto spool = Open();
  ASSERT_TRUE(spool->Append(Events(2), 1).ok());
  faulty_.Inject(Fault::kFsyncFails, 2);
  absl::Status s = spool->Commit();
  EXPECT_FALSE(s.ok());
  SpoolStats stats = spool->Stats();
  EXPECT_TRUE(stats.failing);
  EXPECT_EQ(stats.sync_errors, 1u);
  EXPECT_EQ(stats.last_error, s.ToString());
  EXPECT_FALSE(spool->Commit().ok());  // the directory is synced again
  EXPECT_EQ(faulty_.fired(Fault::kFsyncFails), 2);
  EXPECT_TRUE(spool->Commit().ok());
  EXPECT_EQ(spool->Stats().sync_errors, 2u);
  EXPECT_THAT(spool->Pending(), ElementsAre(1));
  EXPECT_EQ(spool->Read(1)->events_size(), 2);
}

class FailedReservationTest : public FaultySpoolTest,
                              public ::testing::WithParamInterface<Fault> {};

TEST_P(FailedReservationTest, WritesNoBatchAndUsesNoSequence) {
  auto spool = Open();
  faulty_.Inject(GetParam());  // the block's last_sequence file fails
  auto failed = spool->Append(Events(2), 1);
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(faulty_.fired(GetParam()), 1);
  const bool no_space = GetParam() == Fault::kNoSpace;
  EXPECT_EQ(spool->Stats().failing, !no_space);
  EXPECT_EQ(spool->Stats().full, no_space);
  EXPECT_EQ(spool->Stats().reserved_sequence, 0u);
  EXPECT_THAT(BatchFiles(), IsEmpty());
  EXPECT_EQ(*spool->Append(Events(3), 2), 1u);
  EXPECT_EQ(spool->Stats().reserved_sequence, 1024u);
}

INSTANTIATE_TEST_SUITE_P(Faults, FailedReservationTest,
                         ::testing::Values(Fault::kFsyncFails,
                                           Fault::kRenameFails,
                                           Fault::kTornWrite, Fault::kNoSpace));

TEST(SpoolChecksumTest, OneChangedByteOfAJobIdIsDataLoss) {
  TempDir tmp;
  auto spool = OpenOrDie(tmp.path());
  ASSERT_TRUE(spool->Append(Events(1, "job-a"), 7).ok());
  const std::string file =
      tmp.File("batch-00000000000000000001-0000000000000000007.pb");
  std::string data = ReadAll(file);
  ASSERT_TRUE(absl::StartsWith(data, "GPB1"));
  const size_t at = data.find("job-a");
  ASSERT_NE(at, std::string::npos);
  data[at + 4] = 'b';  // still a valid protobuf, of the wrong job
  WriteAll(file, data);
  auto batch = spool->Read(1);
  EXPECT_TRUE(absl::IsDataLoss(batch.status())) << batch.status();
  EXPECT_THAT(batch.status().message(), HasSubstr("checksum mismatch"));
}

// The file holds exactly Batch::SerializeAsString() after its header
// (written without building a Batch), and the uplink sends those bytes
// without the agent-local event_ids.
TEST(SpoolWireTest, FileIsTheBatchAndTheWireIsItWithoutTheEventIds) {
  TempDir tmp;
  auto ids = EventIds::Open(tmp.File("event_ids"), 100);
  ASSERT_TRUE(ids.ok()) << ids.status();
  auto spool = OpenOrDie(tmp.File("spool"));
  spool->SetEventIds(ids->get());
  ASSERT_TRUE(spool->Append(Events(3, "job-a"), 7, {11, 0, 13}).ok());
  auto batch = spool->Read(1);
  ASSERT_TRUE(batch.ok()) << batch.status();
  EXPECT_THAT(batch->event_ids(), ElementsAre(11, 0, 13));
  ASSERT_EQ(batch->events_size(), 3);
  EXPECT_EQ(batch->events(2).step().step(), 3);
  const std::string file = ReadAll(
      tmp.File("spool/batch-00000000000000000001-0000000000000000007.pb"));
  EXPECT_EQ(file.substr(8), batch->SerializeAsString());
  auto wire = spool->ReadWire(1);
  ASSERT_TRUE(wire.ok()) << wire.status();
  batch->clear_event_ids();
  EXPECT_EQ(*wire, batch->SerializeAsString());
}

TEST(SpoolWireTest, ReadWireChecksTheBatchItSends) {
  TempDir tmp;
  auto spool = OpenOrDie(tmp.path());
  ASSERT_TRUE(spool->Append(Events(2), 7).ok());
  auto wire = spool->ReadWire(1);
  ASSERT_TRUE(wire.ok()) << wire.status();
  v1::Batch batch;
  ASSERT_TRUE(batch.ParseFromString(*wire));
  EXPECT_EQ(batch.sequence(), 1u);
  EXPECT_EQ(batch.agent_id(), spool->agent_id());
  EXPECT_EQ(batch.events_size(), 2);
  // A bare (headerless) file of another sequence under this name.
  const std::string file =
      tmp.File("batch-00000000000000000001-0000000000000000007.pb");
  batch.set_sequence(2);
  WriteAll(file, batch.SerializeAsString());
  auto wrong = spool->ReadWire(1);
  EXPECT_TRUE(absl::IsDataLoss(wrong.status())) << wrong.status();
  EXPECT_THAT(wrong.status().message(), HasSubstr("not batch 1"));
  WriteAll(file, std::string("\x0a\x7f", 2));  // a length past the end
  EXPECT_TRUE(absl::IsDataLoss(spool->ReadWire(1).status()));
}

TEST(SpoolChecksumTest, BareBatchFilesOfEarlierAgentsStillLoad) {
  TempDir tmp;
  std::string id;
  {
    auto spool = OpenOrDie(tmp.path());
    id = spool->agent_id();
  }
  v1::Batch old;
  old.set_agent_id(id);
  old.set_sequence(4);
  *old.add_events() = Events(1, "old-job")[0];
  WriteAll(tmp.File("batch-00000000000000000004-0000000000000000009.pb"),
           old.SerializeAsString());
  auto spool = OpenOrDie(tmp.path());
  auto batch = spool->Read(4);
  ASSERT_TRUE(batch.ok()) << batch.status();
  EXPECT_EQ(batch->events(0).job_id(), "old-job");
  EXPECT_EQ(*spool->Append(Events(1), 0), 5u);
}

TEST(SpoolDeadLetterTest, MovesTheBatchAndItsReasonOutOfTheQueue) {
  TempDir tmp;
  {
    auto spool = OpenOrDie(tmp.path());
    ASSERT_TRUE(spool->Append(Events(2), 5).ok());
    ASSERT_TRUE(spool->Append(Events(1), 6).ok());
    const uint64_t bytes = spool->Stats().bytes;
    ASSERT_TRUE(spool->DeadLetter(1, "server refused: too big").ok());
    EXPECT_THAT(spool->Pending(), ElementsAre(2));
    EXPECT_LT(spool->Stats().bytes, bytes);
    EXPECT_EQ(spool->Stats().dead_letters, 1u);
  }
  const std::string dead =
      tmp.File("dead-letter/batch-00000000000000000001-0000000000000000005.pb");
  EXPECT_EQ(ReadAll(dead + ".reason"), "server refused: too big\n");
  EXPECT_TRUE(absl::StartsWith(ReadAll(dead), "GPB1"));
  auto spool = OpenOrDie(tmp.path());  // dead letters are not pending
  EXPECT_THAT(spool->Pending(), ElementsAre(2));
  EXPECT_EQ(*spool->Append(Events(1), 0), 3u);
}

TEST(SpoolLockTest, ADirectoryInUseIsRefusedUntilReleased) {
  TempDir tmp;
  auto first = OpenOrDie(tmp.path());
  auto second = Spool::Open({tmp.path(), 1 << 20});
  EXPECT_TRUE(absl::IsFailedPrecondition(second.status())) << second.status();
  EXPECT_THAT(
      second.status().message(),
      HasSubstr(absl::StrCat("in use by another agent (", tmp.File("lock"),
                             " is locked by pid ", ::getpid(), ")")));
  const std::string id = first->agent_id();
  first.reset();
  EXPECT_EQ(OpenOrDie(tmp.path())->agent_id(), id);
}

}  // namespace
}  // namespace goodput::agent
