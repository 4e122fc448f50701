// LogTailer on real files in a temp dir with a fake clock: appends and
// partial lines, job ids from paths, rotation (rename and a new file, late
// writes to the renamed one), truncation, a restart ("kill") mid-file and a
// failed delivery, with nothing lost or doubled; and bounded memory on a
// line without a newline.
#include "logs/log_tailer.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "clients/cpp/event_json.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "report/replay.h"
#include "report/report_json.h"

namespace goodput::logs {
namespace {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;

constexpr int64_t kSec = 1000 * 1000 * 1000;
constexpr int64_t kT0 = int64_t{1795341600} * kSec;

constexpr char kProfile[] = R"(
name: t
time_format: '%Y-%m-%d %H:%M:%S'
line_prefix: '^(?P<time>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d) '
rules:
  - kind: start
    pattern: 'start'
  - kind: step
    pattern: 'step (?P<step>\d+)'
  - kind: checkpoint_done
    pattern: 'saved (?P<step>\d+)'
  - kind: restore_done
    pattern: 'restored (?P<step>\d+)'
)";

// "2026-11-22 10:00:SS step N\n".
std::string StepLine(int second, int step) {
  return absl::StrFormat("2026-11-22 10:%02d:%02d step %d\n", second / 60,
                         second % 60, step);
}

class LogTailerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string dir = ::testing::TempDir() + "/log_tailer_XXXXXX";
    ASSERT_NE(mkdtemp(dir.data()), nullptr);
    dir_ = dir;
    auto p = ParseLogProfile(kProfile, "t");
    ASSERT_TRUE(p.ok()) << p.status();
    profile_ = std::make_unique<LogProfile>(*std::move(p));
    options_.glob = dir_ + "/*/train.log";  // rotated names are outside
    options_.job_id_pattern = "/(?P<job_id>[^/]+)/train\\.log";
    options_.state_path = dir_ + "/state";
  }

  // A new tailer on the same state file: what an agent restart does.
  void Restart() {
    tailer_ = std::make_unique<LogTailer>(
        profile_.get(), options_, &clock_,
        [this](const std::vector<v1::Event>& events) {
          if (fail_next_) {
            fail_next_ = false;
            return absl::UnavailableError("spool full");
          }
          for (const auto& e : events) {
            delivered_.push_back(client::EventToJsonLine(e));
          }
          return absl::OkStatus();
        });
    ASSERT_TRUE(tailer_->Init().ok());
  }

  TailStats Poll() {
    absl::StatusOr<TailStats> s = tailer_->Poll();
    EXPECT_TRUE(s.ok()) << s.status();
    return s.ok() ? *s : TailStats{};
  }

  void Append(const std::string& path, const std::string& text) {
    std::ofstream out(path, std::ios::app | std::ios::binary);
    out << text;
  }

  std::string Job(const std::string& job) {
    std::string dir = dir_ + "/" + job;
    mkdir(dir.c_str(), 0755);
    return dir + "/train.log";
  }

  // Step numbers delivered, in order, as "job:step".
  std::vector<std::string> Steps() const {
    std::vector<std::string> out;
    for (const std::string& line : delivered_) {
      size_t job = line.find("\"job_id\":\"") + 10;
      size_t step = line.find("\"step\":{\"step\":\"");
      if (step == std::string::npos) continue;
      out.push_back(
          line.substr(job, line.find('"', job) - job) + ":" +
          line.substr(step + 16, line.find('"', step + 16) - step - 16));
    }
    return out;
  }

  std::string dir_;
  std::unique_ptr<LogProfile> profile_;
  TailOptions options_;
  FakeClock clock_{kT0};
  std::unique_ptr<LogTailer> tailer_;
  std::vector<std::string> delivered_;
  bool fail_next_ = false;
};

TEST_F(LogTailerTest, FollowsAppendsHoldsPartialLinesAndNamesJobsByPath) {
  Restart();
  std::string a = Job("llm-7"), b = Job("llm-8");
  Append(a, StepLine(1, 1) + "2026-11-22 10:00:02 st");
  Append(b, StepLine(1, 100));
  Poll();
  Append(a, "ep 2\n");
  Poll();
  EXPECT_THAT(Steps(), ElementsAre("llm-7:1", "llm-8:100", "llm-7:2"));
  EXPECT_THAT(delivered_[0], ::testing::HasSubstr(R"("attempt":"0")"));
}

TEST_F(LogTailerTest, RotationReadsTheOldFileToItsEndFirst) {
  Restart();
  std::string log = Job("j");
  Append(log, StepLine(1, 1));
  Poll();
  // logrotate: rename, a late write to the old file, then a new file.
  ASSERT_EQ(rename(log.c_str(), (log + ".1").c_str()), 0);
  Append(log + ".1", StepLine(2, 2));
  Append(log, StepLine(3, 3));
  Poll();
  Append(log, StepLine(4, 4));
  clock_.Advance(10 * kSec);  // past rotate_wait: the old file is dropped
  Poll();
  Append(log + ".1", StepLine(5, 99));  // no one reads it any more
  Poll();
  EXPECT_THAT(Steps(), ElementsAre("j:1", "j:2", "j:3", "j:4"));
}

TEST_F(LogTailerTest, AGlobThatTakesRotatedNamesReadsOlderFilesFirst) {
  options_.glob = dir_ + "/*/train.log*";
  Restart();
  std::string log = Job("j");
  Append(log, StepLine(1, 1));
  Poll();
  ASSERT_EQ(rename(log.c_str(), (log + ".1").c_str()), 0);
  Append(log, StepLine(3, 3));
  Append(log + ".1", StepLine(2, 2));
  Poll();
  EXPECT_THAT(Steps(), ElementsAre("j:1", "j:2", "j:3"));
}

TEST_F(LogTailerTest, ATruncatedFileIsReadFromTheStart) {
  Restart();
  std::string log = Job("j");
  Append(log, StepLine(1, 1) + StepLine(2, 2));
  Poll();
  ASSERT_EQ(truncate(log.c_str(), 0), 0);  // copytruncate
  Append(log, StepLine(3, 3));
  EXPECT_EQ(Poll().truncations, 1);
  EXPECT_THAT(Steps(), ElementsAre("j:1", "j:2", "j:3"));
}

TEST_F(LogTailerTest, ARestartMidFileLosesAndDoublesNothing) {
  std::string log = Job("j");
  std::string text = "2026-11-22 10:00:00 start\n";
  for (int i = 1; i <= 30; ++i) text += StepLine(i, i);
  text +=
      "2026-11-22 10:00:31 saved 30\n2026-11-22 10:01:00 start\n"
      "2026-11-22 10:01:01 restored 30\n";
  for (int i = 31; i <= 40; ++i) text += StepLine(60 + i, i);
  // The reference: one tailer reading it all at once.
  Restart();
  Append(log, text);
  Poll();
  std::vector<std::string> once = delivered_;
  // Again, in pieces cut mid-line, with a new tailer (a killed agent) after
  // each piece, and one failed delivery.
  ASSERT_EQ(unlink(log.c_str()), 0);
  ASSERT_EQ(unlink(options_.state_path.c_str()), 0);
  delivered_.clear();
  for (size_t cut = 0; cut < text.size(); cut += 97) {
    Restart();
    Append(log, text.substr(cut, 97));
    if (cut == 97 * 5) {
      fail_next_ = true;
      EXPECT_FALSE(tailer_->Poll().ok());
    }
    Poll();
  }
  EXPECT_THAT(delivered_, ElementsAreArray(once));
  // started, 30 steps, checkpoint; started, RESTORE, TRAINING, 10 steps.
  EXPECT_THAT(once, ::testing::SizeIs(45));
}

TEST_F(LogTailerTest, ALineWithoutNewlineKeepsMemoryBounded) {
  options_.max_line = 1024;
  Restart();
  std::string log = Job("j");
  std::string big(1 << 20, 'x');
  for (int i = 0; i < 10; ++i) {
    Append(log, big);
    Poll();
    EXPECT_LE(tailer_->pending_bytes(), 1024u);
  }
  Append(log, "\n" + StepLine(1, 1));
  Poll();
  EXPECT_THAT(Steps(), ElementsAre("j:1"));
}

TEST_F(LogTailerTest, RepeatedEventsAfterACrashChangeNoReport) {
  // The window the state file cannot close: delivered, then killed before
  // the rename. The lines are read again; their events carry attempts.
  std::string log = Job("j");
  Restart();
  Append(log, StepLine(0, 0) + "2026-11-22 10:00:01 start\n" + StepLine(2, 1) +
                  StepLine(3, 2) + "2026-11-22 10:00:04 saved 2\n" +
                  StepLine(5, 3));
  Poll();
  std::vector<std::string> once = delivered_;
  std::vector<std::string> twice = once;
  twice.insert(twice.end(), once.begin() + 2, once.end());
  auto report = [](const std::vector<std::string>& lines) {
    report::Replayer r{report::ReplayOptions()};
    std::istringstream in(absl::StrJoin(lines, ""));
    EXPECT_TRUE(r.AddInput(in, "t").ok());
    auto result = r.Finish();
    EXPECT_TRUE(result.ok());
    return *report::WriteReportJson(result->report);
  };
  EXPECT_EQ(report(once), report(twice));
}

TEST_F(LogTailerTest, ABadJobIdPatternIsAnError) {
  options_.job_id_pattern = "/(?P<job>[^/]+)/";
  LogTailer t(profile_.get(), options_, &clock_,
              [](const std::vector<v1::Event>&) { return absl::OkStatus(); });
  EXPECT_THAT(t.Init().message(), ::testing::HasSubstr("(?P<job_id>...)"));
}

}  // namespace
}  // namespace goodput::logs
