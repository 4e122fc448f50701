#include "agent/file_syncer.h"

#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "agent/testing/test_util.h"
#include "gtest/gtest.h"
#include "util/fault_injecting_file_system.h"
#include "util/posix_file_system.h"

namespace goodput::agent {
namespace {

using Fault = FaultInjectingFileSystem::Fault;
using testing::TempDir;

// The real disk, but SyncFile of a path ending in `gated` waits for `gate`.
class GatedFileSystem : public PosixFileSystem {
 public:
  explicit GatedFileSystem(std::string gated) : gated_(std::move(gated)) {}
  absl::Status SyncFile(const std::string& path) override {
    if (absl::EndsWith(path, gated_)) gate.WaitForNotification();
    return PosixFileSystem::SyncFile(path);
  }
  absl::Notification gate;

 private:
  const std::string gated_;
};

std::string Written(FileSystem* fs, const TempDir& tmp,
                    absl::string_view name) {
  const std::string path = tmp.File(name);
  EXPECT_TRUE(fs->WriteFileUnsynced(path, "data").ok());
  return path;
}

TEST(FileSyncerTest, SyncThroughReturnsOnlyOnceEveryFileUpToItIsSynced) {
  TempDir tmp;
  GatedFileSystem fs("");  // every file waits for the gate
  FileSyncer syncer(&fs, 2, 64);
  for (int i = 1; i <= 3; ++i) {
    syncer.Add(i, Written(&fs, tmp, absl::StrCat("f", i)));
  }
  EXPECT_EQ(syncer.syncs(), 0);  // the gate holds every sync
  // Opened from another thread while this one waits in SyncThrough (or
  // before it gets there: then the fdatasyncs still take milliseconds).
  std::thread opener([&] { fs.gate.Notify(); });
  EXPECT_TRUE(syncer.SyncThrough(3).ok());
  EXPECT_EQ(syncer.syncs(), 3);
  opener.join();
}

TEST(FileSyncerTest, SyncThroughDoesNotWaitForLaterFiles) {
  TempDir tmp;
  GatedFileSystem fs("late");
  FileSyncer syncer(&fs, 2, 64);
  syncer.Add(1, Written(&fs, tmp, "early"));
  syncer.Add(2, Written(&fs, tmp, "late"));
  EXPECT_TRUE(syncer.SyncThrough(1).ok());  // would hang on "late"
  EXPECT_EQ(syncer.syncs(), 1);
  fs.gate.Notify();
  EXPECT_TRUE(syncer.SyncThrough(2).ok());
  EXPECT_EQ(syncer.syncs(), 2);
}

TEST(FileSyncerTest, AFailedSyncIsReportedOnceThenRetried) {
  TempDir tmp;
  PosixFileSystem posix;
  FaultInjectingFileSystem faulty(&posix);
  FileSyncer syncer(&faulty, 1, 64);
  faulty.Inject(Fault::kFsyncFails);
  syncer.Add(1, Written(&faulty, tmp, "f1"));
  absl::Status s = syncer.SyncThrough(1);
  EXPECT_FALSE(s.ok());
  EXPECT_TRUE(absl::StrContains(s.message(), "f1")) << s;
  EXPECT_EQ(syncer.syncs(), 0);
  EXPECT_TRUE(syncer.SyncThrough(1).ok());  // retried, now it works
  EXPECT_EQ(syncer.syncs(), 1);
  EXPECT_EQ(faulty.fired(Fault::kFsyncFails), 1);
}

// The real disk; the first SyncFile fails; records what is written and
// renamed.
class FirstSyncFailsFileSystem : public PosixFileSystem {
 public:
  absl::Status SyncFile(const std::string& path) override {
    if (!failed) {
      failed = true;
      return absl::DataLossError(absl::StrCat("fdatasync ", path, ": EIO"));
    }
    ++later_syncs;
    return PosixFileSystem::SyncFile(path);
  }
  absl::Status WriteFile(const std::string& path,
                         absl::string_view data) override {
    written.push_back(path);
    return PosixFileSystem::WriteFile(path, data);
  }
  absl::Status Rename(const std::string& from, const std::string& to) override {
    renamed.emplace_back(from, to);
    return PosixFileSystem::Rename(from, to);
  }
  bool failed = false;
  int later_syncs = 0;
  std::vector<std::string> written;
  std::vector<std::pair<std::string, std::string>> renamed;
};

// After a failed fsync the pages may be gone while they still read back:
// the retry writes the file again (synced) and renames it over, instead of
// a second fsync of the same file.
TEST(FileSyncerTest, AFailedSyncIsRetriedByWritingTheFileAgain) {
  TempDir tmp;
  FirstSyncFailsFileSystem fs;
  FileSyncer syncer(&fs, 1, 64);
  const std::string path = Written(&fs, tmp, "f1");
  syncer.Add(1, path);
  EXPECT_FALSE(syncer.SyncThrough(1).ok());
  EXPECT_TRUE(syncer.SyncThrough(1).ok());
  EXPECT_EQ(fs.later_syncs, 0);
  EXPECT_EQ(fs.written, std::vector<std::string>{path + ".tmp"});
  ASSERT_EQ(fs.renamed.size(), 1u);
  EXPECT_EQ(fs.renamed[0], std::make_pair(path + ".tmp", path));
  EXPECT_EQ(*fs.ReadFile(path), "data");
  EXPECT_FALSE(fs.Exists(path + ".tmp"));
}

TEST(FileSyncerTest, AFileDeletedBeforeItsSyncNeedsNone) {
  TempDir tmp;
  PosixFileSystem fs;
  FileSyncer syncer(&fs, 1, 64);
  syncer.Add(1, tmp.File("acked-and-deleted"));
  EXPECT_TRUE(syncer.SyncThrough(1).ok());
  EXPECT_EQ(syncer.syncs(), 0);
}

TEST(FileSyncerTest, DestructorSyncsWhatWasAdded) {
  TempDir tmp;
  GatedFileSystem fs("");
  auto syncer = std::make_unique<FileSyncer>(&fs, 1, 64);
  syncer->Add(1, Written(&fs, tmp, "f1"));
  fs.gate.Notify();
  syncer.reset();  // joins after the queue is empty; no crash, no hang
  SUCCEED();
}

}  // namespace
}  // namespace goodput::agent
