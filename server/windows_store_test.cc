// WindowsStore over the in-memory store: the state comes back whole, a
// save writes only the parts whose jobs changed, a save cut short leaves
// the last committed state (and its leftovers are deleted), and a record of
// the old layout (version 2, every job in it) loads and moves into parts.
#include "server/windows_store.h"

#include <map>
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "storage/memory_event_store.h"

namespace goodput::server {
namespace {

using State = internal::v1::FleetMetricsState;

// A state of `jobs` jobs ("job-0"...), job i with key_event_ns i + `shift`.
State Fleet(int jobs, int64_t shift = 0) {
  State state;
  state.set_version(3);
  state.set_now_ns(12345);
  for (int i = 0; i < jobs; ++i) {
    State::Job* job = state.add_jobs();
    job->set_id(absl::StrCat("job-", i));
    job->set_key_event_ns(i + shift);
    job->set_updated(true);
  }
  return state;
}

// job id -> key_event_ns, and the fleet part's now_ns as "" .
std::map<std::string, int64_t> Summary(const State& state) {
  std::map<std::string, int64_t> out = {{"", state.now_ns()}};
  for (const State::Job& job : state.jobs()) out[job.id()] = job.key_event_ns();
  return out;
}

class WindowsStoreTest : public ::testing::Test {
 protected:
  // The meta records (name -> bytes).
  std::map<std::string, std::string> Records() {
    std::map<std::string, std::string> out;
    EXPECT_TRUE(
        store_
            .ScanMeta("",
                      [&](const std::string& name, const std::string& value) {
                        out[name] = value;
                        return absl::OkStatus();
                      })
            .ok());
    return out;
  }
  // What a new process loads.
  std::map<std::string, int64_t> Reload() {
    WindowsStore restarted(&store_);
    auto state = restarted.Load();
    EXPECT_TRUE(state.ok()) << state.status();
    if (!state.ok() || !*state) return {};
    EXPECT_EQ((*state)->job_parts_size(), 0);
    return Summary(**state);
  }

  storage::MemoryEventStore store_;
};

TEST_F(WindowsStoreTest, AStateComesBackWholeFromItsParts) {
  WindowsStore windows(&store_);
  ASSERT_TRUE(windows.Save(Fleet(1000)).ok());
  // The record and one record per part with jobs (1,000 jobs leave few of
  // the 256 empty).
  EXPECT_GT(Records().size(), 200u);
  EXPECT_LE(Records().size(), 1 + WindowsStore::kParts);
  EXPECT_EQ(Reload(), Summary(Fleet(1000)));
}

TEST_F(WindowsStoreTest, ASaveWritesOnlyThePartsWhoseJobsChanged) {
  WindowsStore windows(&store_);
  ASSERT_TRUE(windows.Save(Fleet(1000)).ok());
  const auto before = Records();
  ASSERT_TRUE(windows.Save(Fleet(1000)).ok());
  EXPECT_EQ(Records(), before);  // nothing changed: nothing written
  State changed = Fleet(1000);
  changed.mutable_jobs(7)->set_key_event_ns(-1);
  ASSERT_TRUE(windows.Save(changed).ok());
  const auto after = Records();
  ASSERT_EQ(after.size(), before.size());  // the old part is deleted
  int differ = 0;
  for (const auto& [name, value] : after) {
    differ += before.count(name) == 0 ? 1 : 0;
  }
  EXPECT_EQ(differ, 1);  // the changed job's part, under a new name
  EXPECT_NE(after.at(WindowsStore::kRecord), before.at(WindowsStore::kRecord));
  EXPECT_EQ(Reload(), Summary(changed));
}

TEST_F(WindowsStoreTest, JobsThatLeaveLeaveTheirPartsAndEmptyPartsGo) {
  WindowsStore windows(&store_);
  ASSERT_TRUE(windows.Save(Fleet(1000)).ok());
  ASSERT_TRUE(windows.Save(Fleet(3)).ok());
  EXPECT_LE(Records().size(), 1u + 3u);
  EXPECT_EQ(Reload(), Summary(Fleet(3)));
}

// A failed part write and then a failed record write (as a kill between
// them would leave it): the committed state stays; the next save goes on
// and deletes what the failed ones wrote.
TEST_F(WindowsStoreTest, ASaveCutShortLeavesTheCommittedState) {
  WindowsStore windows(&store_, /*max_write_bytes=*/1);  // a part a write
  ASSERT_TRUE(windows.Save(Fleet(1000)).ok());
  const size_t records = Records().size();
  store_.FailMetaWrite(5, absl::UnavailableError("disk"));  // the 5th part
  EXPECT_FALSE(windows.Save(Fleet(1000, 1)).ok());
  EXPECT_EQ(Reload(), Summary(Fleet(1000)));
  const int parts = static_cast<int>(records) - 1;  // all change
  store_.FailMetaWrite(parts + 1, absl::UnavailableError("disk"));  // record
  EXPECT_FALSE(windows.Save(Fleet(1000, 2)).ok());
  EXPECT_GT(Records().size(), records);  // parts written, not named
  EXPECT_EQ(Reload(), Summary(Fleet(1000)));
  EXPECT_EQ(Records().size(), records);  // the reload deleted them
  ASSERT_TRUE(windows.Save(Fleet(1000, 3)).ok());
  EXPECT_EQ(Records().size(), records);
  EXPECT_EQ(Reload(), Summary(Fleet(1000, 3)));
}

// The default: parts go several to a write, and all of them arrive.
TEST_F(WindowsStoreTest, PartsGoSeveralToAWrite) {
  WindowsStore windows(&store_);
  ASSERT_TRUE(windows.Save(Fleet(1000)).ok());
  store_.FailMetaWrite(2, absl::UnavailableError("disk"));
  // Every part fits in one write: the second one is the record's.
  EXPECT_EQ(windows.Save(Fleet(1000, 1)).message(), "meta/windows: disk");
  EXPECT_EQ(Reload(), Summary(Fleet(1000)));
}

TEST_F(WindowsStoreTest, AVersionTwoRecordLoadsAndMovesIntoParts) {
  State old = Fleet(20);
  old.set_version(2);
  ASSERT_TRUE(
      store_.WriteMeta(WindowsStore::kRecord, old.SerializeAsString()).ok());
  WindowsStore windows(&store_);
  auto loaded = windows.Load();
  ASSERT_TRUE(loaded.ok() && *loaded) << loaded.status();
  EXPECT_EQ(Summary(**loaded), Summary(old));
  State now = **loaded;
  now.set_version(3);
  ASSERT_TRUE(windows.Save(now).ok());
  State record;
  ASSERT_TRUE(record.ParseFromString(Records().at(WindowsStore::kRecord)));
  EXPECT_EQ(record.jobs_size(), 0);
  EXPECT_GT(record.job_parts_size(), 0);
  EXPECT_EQ(Reload(), Summary(old));
}

TEST_F(WindowsStoreTest, AMissingPartIsAnErrorNamingIt) {
  WindowsStore windows(&store_);
  ASSERT_TRUE(windows.Save(Fleet(10)).ok());
  State record;
  ASSERT_TRUE(record.ParseFromString(Records().at(WindowsStore::kRecord)));
  const std::string part = record.job_parts(0);
  ASSERT_TRUE(store_.DeleteMeta({part}).ok());
  WindowsStore restarted(&store_);
  auto loaded = restarted.Load();
  EXPECT_EQ(loaded.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(loaded.status().message().find(part), std::string::npos)
      << loaded.status();
}

}  // namespace
}  // namespace goodput::server
