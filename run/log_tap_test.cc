// goodput-run --log_profile end to end in process: the real
// PosixProcessRunner runs sh, LogTap passes its stdout and stderr on to
// files and turns the lines into events next to the launcher's own.
#include "run/log_tap.h"

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "run/launcher.h"
#include "run/locked_event_sink.h"
#include "run/posix_process_runner.h"
#include "util/proto_time.h"

namespace goodput::run {
namespace {

using ::testing::ElementsAre;

constexpr int64_t kSec = 1000 * 1000 * 1000;
constexpr int64_t kNow = int64_t{1795341600} * kSec;  // 2026-11-22T10:00:00Z

class RecordingSink : public EventSink {
 public:
  void Send(const v1::Event& e) override { events.push_back(e); }
  // "kind[:step]@seconds after kNow/attempt" per event.
  std::vector<std::string> Summary() const {
    std::vector<std::string> out;
    for (const v1::Event& e : events) {
      std::string s =
          e.GetDescriptor()->FindFieldByNumber(e.body_case())->name();
      if (e.has_step()) s += ":" + std::to_string(e.step().step());
      s += "@" + std::to_string((TimestampToNanos(e.time()) - kNow) / kSec);
      out.push_back(s + "/" + e.attempt());
    }
    return out;
  }
  std::vector<v1::Event> events;
};

constexpr char kProfile[] = R"(
name: t
time_format: '%Y-%m-%d %H:%M:%S'
rules:
  - kind: step
    pattern: '^(?P<time>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d) step (?P<step>\d+)'
  - kind: step
    pattern: '^untimed step (?P<step>\d+)'
  - kind: end
    pattern: '^done'
)";

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

class LogTapTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string dir = ::testing::TempDir() + "/log_tap_XXXXXX";
    ASSERT_NE(mkdtemp(dir.data()), nullptr);
    dir_ = dir;
    auto p = logs::ParseLogProfile(kProfile, "t");
    ASSERT_TRUE(p.ok()) << p.status();
    profile_ = std::make_unique<logs::LogProfile>(*std::move(p));
  }

  // Runs `script` under the launcher with a tap writing to out/err files.
  int Run(const std::string& script, int max_restarts = 0) {
    int out = open((dir_ + "/out").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    int err = open((dir_ + "/err").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    LauncherOptions o;
    o.job_id = "j";
    o.max_restarts = max_restarts;
    o.argv = {"sh", "-c", script};
    int n = 0;
    LockedEventSink sink(&sink_);
    Launcher launcher(
        o, &clock_, &runner_, &sink, [&n] { return "a" + std::to_string(++n); },
        &log_);
    int code;
    {
      LogTap tap(profile_.get(), "j", &clock_, &sink, out, err, &log_);
      launcher.set_output_tap(&tap);
      code = launcher.Run();
    }
    close(out);
    close(err);
    return code;
  }

  std::string dir_;
  std::unique_ptr<logs::LogProfile> profile_;
  PosixProcessRunner runner_;
  FakeClock clock_{kNow};
  RecordingSink sink_;
  std::ostringstream log_;
};

TEST_F(LogTapTest, OutputPassesThroughByteExactAndLinesBecomeEvents) {
  const std::string script =
      "printf '2026-11-22 10:00:07 step 10\\n\\001\\377 binary\\r\\n'; "
      "printf 'untimed step 20\\npartial' >&2; "
      "head -c 200000 /dev/zero | tr '\\000' x; "
      "printf '\\nuntimed step 30\\ndone\\n'";
  EXPECT_EQ(Run(script), 0) << log_.str();
  EXPECT_EQ(ReadAll(dir_ + "/out"),
            "2026-11-22 10:00:07 step 10\n\001\377 binary\r\n" +
                std::string(200000, 'x') + "\nuntimed step 30\ndone\n");
  EXPECT_EQ(ReadAll(dir_ + "/err"), "untimed step 20\npartial");
  // The line's own time, else the read time (the fake clock: +0 s); the
  // profile's `end` sends nothing: the launcher's job_ended says it.
  std::vector<std::string> events = sink_.Summary();
  ASSERT_EQ(events.size(), 5u) << ::testing::PrintToString(events);
  EXPECT_EQ(events[0], "started@0/a1");
  EXPECT_THAT(std::vector<std::string>(events.begin() + 1, events.end() - 1),
              ::testing::UnorderedElementsAre("step:10@7/a1", "step:20@0/a1",
                                              "step:30@0/a1"));
  EXPECT_EQ(events[4], "job_ended@0/");
}

TEST_F(LogTapTest, EachAttemptsLinesCarryItsAttempt) {
  const std::string flag = dir_ + "/ran";
  const std::string script = "if [ -f " + flag +
                             " ]; then echo 'untimed step 2'; exit 0; fi; "
                             "touch " +
                             flag + "; echo 'untimed step 1'; exit 3";
  EXPECT_EQ(Run(script, /*max_restarts=*/1), 0) << log_.str();
  EXPECT_THAT(sink_.Summary(),
              ElementsAre("started@0/a1", "step:1@0/a1", "interruption@0/a1",
                          "started@0/a2", "step:2@0/a2", "job_ended@0/"));
  EXPECT_EQ(ReadAll(dir_ + "/out"), "untimed step 1\nuntimed step 2\n");
}

TEST_F(LogTapTest, TheChildRunsUnbufferedPython) {
  EXPECT_EQ(Run("echo PYTHONUNBUFFERED=$PYTHONUNBUFFERED"), 0);
  EXPECT_EQ(ReadAll(dir_ + "/out"), "PYTHONUNBUFFERED=1\n");
}

}  // namespace
}  // namespace goodput::run
