#include "agent/client_spool_reader.h"

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace goodput::agent {
namespace {

using ::testing::ElementsAre;

std::string Record(const std::string& id, int step) {
  return "{\"id\":\"" + id +
         "\",\"event\":{\"time\":\"2026-11-22T10:00:00.123Z\",\"job_id\":\"j\","
         "\"attempt\":\"a\",\"step\":{\"step\":" +
         std::to_string(step) + "}}}\n";
}

class ClientSpoolReaderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = ::testing::TempDir() + "/client_spool_XXXXXX";
    dir_ = std::string(mkdtemp(tmpl.data())) + "/spool";
    ClientSpoolReader::Options o{dir_};
    o.pid_alive = [this](pid_t pid) { return pid == live_pid_; };
    reader_ = std::make_unique<ClientSpoolReader>(
        o,
        [this](v1::Event e, uint64_t) {
          log_.push_back("add " + std::to_string(e.step().step()));
        },
        [this] { log_.push_back("flush"); }, &clock_);
    ASSERT_TRUE(reader_->Init().ok());
  }
  void TearDown() override {
    std::filesystem::remove_all(std::filesystem::path(dir_).parent_path());
  }
  void Write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ + "/" + name) << text;
  }
  bool Exists(const std::string& name) {
    return std::filesystem::exists(dir_ + "/" + name);
  }

  std::string dir_;
  pid_t live_pid_ = 100;
  FakeClock clock_{int64_t{1796000000} * 1000000000};  // after the events
  std::vector<std::string> log_;
  std::unique_ptr<ClientSpoolReader> reader_;
};

TEST_F(ClientSpoolReaderTest, InitCreatesAWorldWritableDirectory) {
  auto perms = std::filesystem::status(dir_).permissions();
  EXPECT_EQ(perms & std::filesystem::perms::others_write,
            std::filesystem::perms::others_write);
}

TEST_F(ClientSpoolReaderTest, ClosedFilesAreIngestedFlushedThenDeleted) {
  Write("spool-100-aa.jsonl", Record("i1", 1) + Record("i2", 2));
  Write("spool-100-bb.jsonl", Record("i3", 3));
  ClientSpoolScan scan = reader_->Scan();
  EXPECT_EQ(scan.files, 2);
  EXPECT_EQ(scan.events, 3);
  EXPECT_THAT(log_, ElementsAre("add 1", "add 2", "flush", "add 3", "flush"));
  EXPECT_FALSE(Exists("spool-100-aa.jsonl"));
  EXPECT_FALSE(Exists("spool-100-bb.jsonl"));
}

TEST_F(ClientSpoolReaderTest, OpenFileWaitsForItsWriterToExit) {
  Write("spool-100-aa.open", Record("i1", 1));
  Write("spool-200-bb.open", Record("i2", 2));
  EXPECT_EQ(reader_->Scan().events, 1);  // pid 200 is gone, 100 alive
  EXPECT_THAT(log_, ElementsAre("add 2", "flush"));
  EXPECT_TRUE(Exists("spool-100-aa.open"));
  live_pid_ = 0;
  EXPECT_EQ(reader_->Scan().events, 1);
  EXPECT_FALSE(Exists("spool-100-aa.open"));
}

TEST_F(ClientSpoolReaderTest, DuplicateIdsCountOnce) {
  Write("spool-1-aa.jsonl", Record("same", 1) + Record("same", 1));
  Write("spool-1-bb.jsonl", Record("same", 1) + Record("other", 2));
  ClientSpoolScan scan = reader_->Scan();
  EXPECT_EQ(scan.events, 2);
  EXPECT_EQ(scan.duplicates, 2);
  EXPECT_THAT(log_, ElementsAre("add 1", "flush", "add 2", "flush"));
}

TEST_F(ClientSpoolReaderTest, BadAndPartialLinesAreDroppedOthersKept) {
  std::string partial = Record("p", 9);
  partial.pop_back();
  Write("spool-1-aa.jsonl",
        Record("i1", 1) + "not json\n" +
            "{\"id\":\"x\",\"event\":{\"job_id\":\"j\",\"step\":{}}}\n" +
            "{\"event\":{}}\n" + partial);
  ClientSpoolScan scan = reader_->Scan();
  EXPECT_EQ(scan.events, 1);
  EXPECT_EQ(scan.rejected, 4);
  EXPECT_FALSE(Exists("spool-1-aa.jsonl"));
}

TEST_F(ClientSpoolReaderTest, OtherFilesAreLeftAlone) {
  Write("notes.txt", "hello\n");
  Write("spool-x-aa.jsonl", Record("i", 1));
  EXPECT_EQ(reader_->Scan().files, 0);
  EXPECT_TRUE(Exists("notes.txt"));
  EXPECT_TRUE(Exists("spool-x-aa.jsonl"));
}

}  // namespace
}  // namespace goodput::agent
