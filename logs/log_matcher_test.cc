#include "logs/log_matcher.h"

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "util/proto_time.h"

namespace goodput::logs {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::SizeIs;

constexpr int64_t kSecond = 1000 * 1000 * 1000;
// 2026-11-22T10:00:00Z.
constexpr int64_t kT0 = int64_t{1795341600} * kSecond;

LogProfile Profile(const std::string& yaml) {
  absl::StatusOr<LogProfile> p = ParseLogProfile(yaml, "test");
  EXPECT_TRUE(p.ok()) << p.status();
  return *std::move(p);
}

const char kProfile[] = R"(
name: test
time_format: '%Y-%m-%d %H:%M:%S'
rules:
  - kind: start
    then: INIT
    pattern: '^hello'
  - kind: step
    pattern: '^(?P<time>\S+ \S+) step (?P<step>\d+)(?: flops (?P<flops>\S+))?'
  - kind: step
    pattern: 'did (?P<steps>\d+) more'
  - kind: step
    pattern: 'tick'
    steps_per_line: 5
  - kind: checkpoint_start
    pattern: 'saving( (?P<step>\d+))?'
  - kind: checkpoint_done
    pattern: 'saved'
  - kind: restore_start
    pattern: 'restoring (?P<step>\d+)'
  - kind: restore_done
    pattern: 'restored( (?P<step>\d+))?'
  - kind: custom
    name: eval
    pattern: 'evaluating'
  - kind: interruption
    reason: PREEMPTED
    pattern: 'SIGTERM'
  - kind: end
    pattern: '^bye'
  - kind: prep
    pattern: 'step'
)";

class LogMatcherTest : public ::testing::Test {
 protected:
  LogMatcherTest() : profile_(Profile(kProfile)) {}

  std::vector<v1::Event> Feed(LogMatcher& m, const std::string& line,
                              int64_t read_ns = kT0) {
    std::vector<v1::Event> out;
    absl::Status s = m.Match(line, read_ns, &out);
    EXPECT_TRUE(s.ok()) << line << ": " << s;
    return out;
  }

  LogProfile profile_;
};

TEST_F(LogMatcherTest, ALineNoRuleTakesMakesNothing) {
  LogMatcher m(profile_, {.job_id = "j"});
  EXPECT_THAT(Feed(m, "loss 2.3 lr 1e-4"), IsEmpty());
  EXPECT_EQ(m.last_rule(), -1);
}

TEST_F(LogMatcherTest, StepTakesTheLinesTimeStepAndFlops) {
  LogMatcher m(profile_, {.job_id = "j"});
  std::vector<v1::Event> out =
      Feed(m, "2026-11-22 10:00:07 step 42 flops 1.5e15", kT0 + 99 * kSecond);
  ASSERT_THAT(out, SizeIs(1));
  EXPECT_EQ(out[0].job_id(), "j");
  EXPECT_EQ(TimestampToNanos(out[0].time()), kT0 + 7 * kSecond);
  EXPECT_EQ(out[0].step().step(), 42);
  EXPECT_EQ(out[0].step().flops(), 1.5e15);
  EXPECT_EQ(m.last_rule(), 1);
}

TEST_F(LogMatcherTest, TheFirstRuleInFileOrderWins) {
  // "prep: step" (the last rule) also matches; the step rule comes first.
  LogMatcher m(profile_, {.job_id = "j"});
  std::vector<v1::Event> out = Feed(m, "2026-11-22 10:00:07 step 1");
  ASSERT_THAT(out, SizeIs(1));
  EXPECT_TRUE(out[0].has_step());
  out = Feed(m, "a step back");
  ASSERT_THAT(out, SizeIs(1));
  EXPECT_EQ(out[0].activity().kind(), v1::Activity::PREP);
}

TEST_F(LogMatcherTest, StepsCountFromTheLastStepAndRestoreResetsTheCount) {
  LogMatcher m(profile_, {.job_id = "j"});
  EXPECT_EQ(Feed(m, "tick")[0].step().step(), 5);
  EXPECT_EQ(Feed(m, "tick")[0].step().step(), 10);
  EXPECT_EQ(Feed(m, "did 3 more")[0].step().step(), 13);
  Feed(m, "restored 100");
  EXPECT_EQ(Feed(m, "tick")[0].step().step(), 105);
  Feed(m, "hello");  // a new attempt starts from 0 until told otherwise
  EXPECT_EQ(Feed(m, "tick")[0].step().step(), 5);
}

TEST_F(LogMatcherTest, WithoutATimestampTheReadTimeOrThePreviousLinesTime) {
  LogMatcher m(profile_, {.job_id = "j"});
  EXPECT_EQ(TimestampToNanos(Feed(m, "tick", kT0 + kSecond)[0].time()),
            kT0 + kSecond);
  Feed(m, "2026-11-22 10:00:30 step 20", kT0);
  EXPECT_EQ(
      TimestampToNanos(Feed(m, "tick", LogMatcher::kNoReadTime)[0].time()),
      kT0 + 30 * kSecond);
}

TEST_F(LogMatcherTest, NoTimeAtAllIsAnErrorNamingTheRule) {
  LogMatcher m(profile_, {.job_id = "j"});
  std::vector<v1::Event> out;
  absl::Status s = m.Match("tick", LogMatcher::kNoReadTime, &out);
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(s.message(),
              AllOf(HasSubstr("rule 4 (step)"), HasSubstr("no timestamp")));
  EXPECT_THAT(out, IsEmpty());
}

TEST_F(LogMatcherTest, ABadCaptureNamesProfileRuleCaptureAndValue) {
  LogMatcher m(profile_, {.job_id = "j"});
  std::vector<v1::Event> out;
  absl::Status s = m.Match("2026-13-45 99:00:00 step 3", kT0, &out);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(),
              AllOf(HasSubstr("profile test: rule 2 (step)"),
                    HasSubstr("capture 'time' = '2026-13-45 99:00:00'"),
                    HasSubstr("time_format '%Y-%m-%d %H:%M:%S'")));
  s = m.Match("2026-11-22 10:00:00 step 99999999999999999999", kT0, &out);
  EXPECT_THAT(s.message(),
              HasSubstr("capture 'step' = '99999999999999999999'"));
  EXPECT_THAT(out, IsEmpty());
}

TEST_F(LogMatcherTest, StartNumbersAttemptsAndSendsStartedThenItsActivity) {
  LogMatcher m(profile_, {.job_id = "j"});
  EXPECT_EQ(Feed(m, "tick")[0].attempt(), "");
  std::vector<v1::Event> out = Feed(m, "hello");
  ASSERT_THAT(out, SizeIs(2));
  EXPECT_TRUE(out[0].has_started());
  EXPECT_EQ(out[0].attempt(), "1");
  EXPECT_EQ(out[1].activity().kind(), v1::Activity::INIT);
  EXPECT_EQ(Feed(m, "hello")[0].attempt(), "2");
}

TEST_F(LogMatcherTest, UnderTheLauncherStartAndEndSendNoLifecycleEvents) {
  LogMatcher m(profile_,
               {.job_id = "j", .attempt = "uuid-1", .lifecycle = false});
  std::vector<v1::Event> out = Feed(m, "hello");
  ASSERT_THAT(out, SizeIs(1));
  EXPECT_EQ(out[0].activity().kind(), v1::Activity::INIT);
  EXPECT_EQ(out[0].attempt(), "uuid-1");
  EXPECT_THAT(Feed(m, "bye"), IsEmpty());
}

TEST_F(LogMatcherTest, AfterTheEndLinesAreDroppedUntilTheNextStart) {
  LogMatcher m(profile_, {.job_id = "j"});
  Feed(m, "hello");
  std::vector<v1::Event> out = Feed(m, "bye");
  ASSERT_THAT(out, SizeIs(1));
  EXPECT_EQ(out[0].job_ended().outcome(), v1::JobEnded::SUCCEEDED);
  EXPECT_THAT(Feed(m, "saving 10"), IsEmpty());
  EXPECT_EQ(m.dropped(), 1);
  EXPECT_THAT(Feed(m, "hello"), SizeIs(2));
}

TEST_F(LogMatcherTest, CheckpointDoneTakesTheSavedStepAndResumesTraining) {
  LogMatcher m(profile_, {.job_id = "j"});
  Feed(m, "did 7 more");
  EXPECT_EQ(Feed(m, "saving 5")[0].activity().kind(), v1::Activity::CHECKPOINT);
  std::vector<v1::Event> out = Feed(m, "saved");
  ASSERT_THAT(out, SizeIs(2));
  EXPECT_EQ(out[0].checkpoint().step(), 5);  // the start's, not the last step
  EXPECT_EQ(out[1].activity().kind(), v1::Activity::TRAINING);
  out = Feed(m, "saved");  // no open save: the last step, no activity
  ASSERT_THAT(out, SizeIs(1));
  EXPECT_EQ(out[0].checkpoint().step(), 7);
}

TEST_F(LogMatcherTest, RestoreSendsItsStepOncePerAttempt) {
  LogMatcher m(profile_, {.job_id = "j"});
  std::vector<v1::Event> out = Feed(m, "restoring 20");
  ASSERT_THAT(out, SizeIs(1));
  EXPECT_EQ(out[0].activity().step(), 20);
  out = Feed(m, "restored 20");
  ASSERT_THAT(out, SizeIs(1));
  EXPECT_EQ(out[0].activity().kind(), v1::Activity::TRAINING);
  Feed(m, "hello");
  out = Feed(m, "restored 30");  // no restore start: the done says the step
  ASSERT_THAT(out, SizeIs(2));
  EXPECT_EQ(out[0].activity().kind(), v1::Activity::RESTORE);
  EXPECT_EQ(out[0].activity().step(), 30);
  EXPECT_EQ(out[1].activity().kind(), v1::Activity::TRAINING);
}

TEST_F(LogMatcherTest, CustomAndInterruptionCarryTheRulesNameAndReason) {
  LogMatcher m(profile_, {.job_id = "j"});
  std::vector<v1::Event> out = Feed(m, "evaluating");
  EXPECT_EQ(out[0].activity().kind(), v1::Activity::CUSTOM);
  EXPECT_EQ(out[0].activity().name(), "eval");
  out = Feed(m, "got SIGTERM");
  EXPECT_EQ(out[0].interruption().reason(), v1::Interruption::PREEMPTED);
}

const char kTimedSteps[] = R"(
name: timed
time_format: '%Y-%m-%d %H:%M:%S'
flops_per_token: 6e9
rules:
  - kind: step
    step_offset: 1
    pattern: 'global_step: (?P<step>\d+)(?: \| ms: (?P<step_time>\S+))?(?: \| tokens: (?P<tokens>\d+))?'
    step_time_unit: ms
  - kind: checkpoint_done
    pattern: '^(?P<time>\S+ \S+) saved (?P<step>\d+)'
)";

TEST(LogMatcherStepTimeTest, UntimedStepLinesAdvanceByStepTimeTimesSteps) {
  LogProfile profile = Profile(kTimedSteps);
  LogMatcher m(profile, {.job_id = "j", .initial_time_ns = kT0});
  std::vector<v1::Event> out;
  // 0-based index 9: steps 1-10 done, 1.5 s each.
  ASSERT_TRUE(
      m.Match("global_step: 9 | ms: 1500", LogMatcher::kNoReadTime, &out).ok());
  ASSERT_TRUE(
      m.Match("global_step: 19 | ms: 2000", LogMatcher::kNoReadTime, &out)
          .ok());
  // A timed line resets the clock; then one more step of 0.5 s.
  ASSERT_TRUE(
      m.Match("2026-11-22 10:01:00 saved 20", LogMatcher::kNoReadTime, &out)
          .ok());
  ASSERT_TRUE(
      m.Match("global_step: 20 | ms: 500", LogMatcher::kNoReadTime, &out).ok());
  // Without step_time: the previous line's time.
  ASSERT_TRUE(m.Match("global_step: 21", LogMatcher::kNoReadTime, &out).ok());
  ASSERT_THAT(out, SizeIs(5));
  EXPECT_EQ(out[0].step().step(), 10);
  EXPECT_EQ(TimestampToNanos(out[0].time()), kT0 + 15 * kSecond);
  EXPECT_EQ(out[1].step().step(), 20);
  EXPECT_EQ(TimestampToNanos(out[1].time()), kT0 + 35 * kSecond);
  EXPECT_EQ(TimestampToNanos(out[2].time()), kT0 + 60 * kSecond);
  EXPECT_EQ(out[3].step().step(), 21);
  EXPECT_EQ(TimestampToNanos(out[3].time()), kT0 + 60 * kSecond + kSecond / 2);
  EXPECT_EQ(out[4].step().step(), 22);
  EXPECT_EQ(TimestampToNanos(out[4].time()), kT0 + 60 * kSecond + kSecond / 2);
}

TEST(LogMatcherStepTimeTest, AReadTimeWinsOverStepTime) {
  LogProfile profile = Profile(kTimedSteps);
  LogMatcher m(profile, {.job_id = "j", .initial_time_ns = kT0});
  std::vector<v1::Event> out;
  ASSERT_TRUE(
      m.Match("global_step: 9 | ms: 1500", kT0 + 99 * kSecond, &out).ok());
  ASSERT_THAT(out, SizeIs(1));
  EXPECT_EQ(TimestampToNanos(out[0].time()), kT0 + 99 * kSecond);
}

TEST(LogMatcherStepTimeTest, TokensBecomeFlopsThroughFlopsPerToken) {
  LogProfile profile = Profile(kTimedSteps);
  LogMatcher m(profile, {.job_id = "j"});
  std::vector<v1::Event> out;
  ASSERT_TRUE(m.Match("global_step: 0 | tokens: 4096", kT0, &out).ok());
  ASSERT_THAT(out, SizeIs(1));
  EXPECT_EQ(out[0].step().flops(), 4096 * 6e9);
}

TEST(LogMatcherStepTimeTest, BadStepTimeAndNegativeOffsetStepsAreNamed) {
  LogProfile profile = Profile(R"(
name: off
rules:
  - kind: step
    step_offset: -5
    pattern: 'it (?P<step>\d+)(?: t=(?P<step_time>\S+))?'
)");
  LogMatcher m(profile, {.job_id = "j"});
  std::vector<v1::Event> out;
  absl::Status s = m.Match("it 3", kT0, &out);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(),
              AllOf(HasSubstr("rule 1 (step)"),
                    HasSubstr("capture 'step' = '3' plus step_offset -5")));
  s = m.Match("it 9 t=nan", kT0, &out);
  EXPECT_THAT(s.message(), HasSubstr("capture 'step_time' = 'nan' is not a "
                                     "number >= 0"));
  EXPECT_THAT(out, IsEmpty());
  ASSERT_TRUE(m.Match("it 9 t=1", kT0, &out).ok());
  EXPECT_EQ(out[0].step().step(), 4);
}

TEST(LogMatcherYearTest, AFormatWithoutAYearTakesTheDefaultYear) {
  LogProfile profile = Profile(R"(
name: absl
line_prefix: '^I(?P<time>\d{4} \d\d:\d\d:\d\d\.\d+) '
time_format: '%m%d %H:%M:%E*S'
rules:
  - kind: step
    pattern: 'completed step: (?P<step>\d+)'
)");
  LogMatcher m(profile, {.job_id = "j", .default_year = 2026});
  std::vector<v1::Event> out;
  ASSERT_TRUE(m.Match("I1122 10:00:01.500000 completed step: 3", 0, &out).ok());
  ASSERT_THAT(out, SizeIs(1));
  EXPECT_EQ(TimestampToNanos(out[0].time()), kT0 + kSecond + kSecond / 2);
}

TEST(LogMatcherYearTest, PythonsCommaMillisecondsParse) {
  LogProfile profile = Profile(R"(
name: py
line_prefix: '^\[(?P<time>[^\]]+)\] '
time_format: '%Y-%m-%d %H:%M:%S,%E*f'
rules:
  - kind: step
    pattern: 'step=(?P<step>\d+)'
)");
  LogMatcher m(profile, {.job_id = "j"});
  std::vector<v1::Event> out;
  ASSERT_TRUE(m.Match("[2026-11-22 10:00:00,250] step=3", 0, &out).ok());
  EXPECT_EQ(TimestampToNanos(out[0].time()), kT0 + kSecond / 4);
}

}  // namespace
}  // namespace goodput::logs
