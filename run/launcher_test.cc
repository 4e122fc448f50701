#include "run/launcher.h"

#include <signal.h>

#include <sstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "run/testing/fake_process_runner.h"

namespace goodput::run {
namespace {

using ::testing::ElementsAre;
using ::testing::Pair;

constexpr int64_t kStart = int64_t{1795000000} * 1000000000;
constexpr int64_t kSec = 1000000000;

// Records events as "kind@seconds_since_start/attempt".
class RecordingSink : public EventSink {
 public:
  void Send(const v1::Event& e) override { events.push_back(e); }
  std::vector<std::string> Summary() const {
    std::vector<std::string> out;
    for (const v1::Event& e : events) {
      std::string kind =
          e.GetDescriptor()->FindFieldByNumber(e.body_case())->name();
      if (e.has_interruption()) {
        kind += ":" + v1::Interruption::Reason_Name(e.interruption().reason());
        if (e.interruption().notice()) kind += ":notice";
      }
      if (e.has_job_ended()) {
        kind += ":" + v1::JobEnded::Outcome_Name(e.job_ended().outcome());
      }
      int64_t ns = e.time().seconds() * kSec + e.time().nanos() - kStart;
      out.push_back(kind + "@" + std::to_string(ns / kSec) + "/" + e.attempt());
    }
    return out;
  }
  std::vector<v1::Event> events;
};

class LauncherTest : public ::testing::Test {
 protected:
  int Run(LauncherOptions o) {
    o.job_id = "j";
    o.argv = {"train", "--lr=1"};
    int n = 0;
    Launcher launcher(
        o, &clock_, &runner_, &sink_,
        [&n] { return "a" + std::to_string(++n); }, &log_);
    return launcher.Run();
  }
  FakeClock clock_{kStart};
  FakeProcessRunner runner_{&clock_};
  RecordingSink sink_;
  std::ostringstream log_;
};

TEST_F(LauncherTest, SuccessEndsTheJob) {
  runner_.ThenExit(30 * kSec, 0);
  LauncherOptions o;
  o.submitted.emplace().set_chips(8);
  EXPECT_EQ(Run(o), 0);
  EXPECT_THAT(sink_.Summary(), ElementsAre("job_submitted@0/", "started@0/a1",
                                           "job_ended:SUCCEEDED@30/"));
  ASSERT_EQ(runner_.starts.size(), 1u);
  EXPECT_THAT(runner_.starts[0].argv, ElementsAre("train", "--lr=1"));
  EXPECT_THAT(runner_.starts[0].env, ElementsAre(Pair("GOODPUT_ATTEMPT", "a1"),
                                                 Pair("GOODPUT_JOB_ID", "j")));
  EXPECT_EQ(sink_.events[0].job_submitted().chips(), 8);
}

TEST_F(LauncherTest, FailureRestartsWithANewAttemptAtTheExactTime) {
  runner_.ThenExit(10 * kSec, 0, SIGKILL);
  runner_.ThenExit(5 * kSec, 3);
  runner_.ThenExit(7 * kSec, 0);
  LauncherOptions o;
  o.max_restarts = 2;
  EXPECT_EQ(Run(o), 0);
  EXPECT_THAT(sink_.Summary(),
              ElementsAre("started@0/a1", "interruption:FAILED@10/a1",
                          "started@10/a2", "interruption:FAILED@15/a2",
                          "started@15/a3", "job_ended:SUCCEEDED@22/"));
  EXPECT_EQ(runner_.starts.size(), 3u);
  EXPECT_EQ(runner_.starts[2].env[0].second, "a3");
}

TEST_F(LauncherTest, OutOfRestartsEndsFailedWithTheChildsCode) {
  runner_.ThenExit(4 * kSec, 0, SIGSEGV);
  runner_.ThenExit(1 * kSec, 2);
  LauncherOptions o;
  o.max_restarts = 1;
  EXPECT_EQ(Run(o), 2);
  EXPECT_THAT(
      sink_.Summary(),
      ElementsAre("started@0/a1", "interruption:FAILED@4/a1", "started@4/a2",
                  "interruption:FAILED@5/a2", "job_ended:FAILED@5/"));
  EXPECT_NE(log_.str().find("no restarts left"), std::string::npos);
}

TEST_F(LauncherTest, SigtermIsForwardedWithANoticeAndNoRestart) {
  runner_.ThenStopSignal(20 * kSec, SIGTERM);
  runner_.ThenStopSignal(1 * kSec, SIGINT);  // a second one: no 2nd notice
  runner_.ThenExit(2 * kSec, 0, SIGTERM);
  LauncherOptions o;
  o.max_restarts = 5;
  EXPECT_EQ(Run(o), 128 + SIGTERM);
  EXPECT_THAT(runner_.signals, ElementsAre(SIGTERM, SIGTERM));
  EXPECT_THAT(sink_.Summary(),
              ElementsAre("started@0/a1", "interruption:PREEMPTED:notice@20/a1",
                          "interruption:PREEMPTED@23/a1"));
}

TEST_F(LauncherTest, WithoutJobEndedTheSchedulerEndsTheJob) {
  runner_.ThenExit(3 * kSec, 1);
  LauncherOptions o;
  o.send_job_ended = false;
  EXPECT_EQ(Run(o), 1);
  EXPECT_THAT(sink_.Summary(),
              ElementsAre("started@0/a1", "interruption:FAILED@3/a1"));
}

TEST_F(LauncherTest, UnrunnableCommandIsAFailedAttempt) {
  runner_.FailStart(absl::FailedPreconditionError("cannot run train: nope"));
  EXPECT_EQ(Run(LauncherOptions()), 127);
  EXPECT_THAT(sink_.Summary(),
              ElementsAre("started@0/a1", "interruption:FAILED@0/a1",
                          "job_ended:FAILED@0/"));
  EXPECT_NE(log_.str().find("cannot run train"), std::string::npos);
}

}  // namespace
}  // namespace goodput::run
