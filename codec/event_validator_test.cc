#include "codec/event_validator.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "codec/reference_decoder.h"
#include "codec/testing/spec_lines.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace goodput {
namespace codec {
namespace {

using ::testing::HasSubstr;

v1::Event Parse(const std::string& line) {
  absl::StatusOr<v1::Event> event = DecodeEventReference(line);
  EXPECT_TRUE(event.ok()) << event.status() << " for " << line;
  return event.ok() ? *event : v1::Event();
}

// A minimal valid event of each body, as a line with `body` substituted.
std::string Line(const std::string& body) {
  return absl::StrCat(R"({"time":"2026-11-22T10:00:00Z","job_id":"j",)", body,
                      "}");
}

std::string Message(const v1::Event& e, const ValidationLimits& limits = {}) {
  const absl::Status status = ValidateEvent(e, limits);
  EXPECT_FALSE(status.ok()) << e.ShortDebugString();
  EXPECT_TRUE(absl::IsInvalidArgument(status)) << status;
  return std::string(status.message());
}

TEST(EventValidatorTest, AcceptsEverySpecLine) {
  ValidationLimits limits;
  limits.now_ns = int64_t{1795348800} * 1000000000;  // 2026-11-22T12:00:00Z
  for (const char* line : testing::kSpecLines) {
    EXPECT_TRUE(ValidateEvent(Parse(line), limits).ok()) << line;
  }
}

TEST(EventValidatorTest, AcceptsOptionalAndBoundaryValues) {
  for (const std::string& body :
       {std::string(R"("activity":{"kind":"CUSTOM","name":"eval"})"),
        std::string(R"("activity":{"kind":"RESTORE","step":0})"),
        std::string(R"("allocation":{"chips":0})"),
        std::string(R"("step":{"step":0,"flops":0,"idle_seconds":0.5})"),
        std::string(R"("interruption":{"reason":"OTHER","notice":true})"),
        absl::StrCat(R"("job_submitted":{"chips":1,"workload":"SERVING",)",
                     R"("framework":")", std::string(256, 'f'), R"("})")}) {
    EXPECT_TRUE(ValidateEvent(Parse(Line(body)), {}).ok()) << body;
  }
}

TEST(EventValidatorTest, HeartbeatNeedsHostButNoJob) {
  v1::Event e = Parse(
      R"({"time":"2026-11-22T10:00:00Z","heartbeat":{"chips":4,"accelerator":"tpu-v5p"}})");
  EXPECT_EQ(Message(e), R"(host: required for heartbeat, got "")");
  e.set_host("host-1");
  EXPECT_TRUE(ValidateEvent(e, {}).ok());
}

TEST(EventValidatorTest, MessagesFollowFieldProblemValue) {
  EXPECT_EQ(Message(Parse(Line(R"("job_submitted":{"chips":0,"workload":1})"))),
            "job_submitted.chips: must be > 0, got 0");
  EXPECT_EQ(Message(Parse(Line(R"("step":{"step":-1})"))),
            "step.step: must be >= 0, got -1");
  EXPECT_EQ(Message(Parse(Line(R"("step":{"flops":"NaN"})"))),
            "step.flops: must be finite and >= 0, got nan");
  EXPECT_EQ(Message(Parse(Line(R"("activity":{"kind":"CUSTOM"})"))),
            "activity.name: required for CUSTOM");
}

TEST(EventValidatorTest, UnknownEnumNumbersAreNamedWithTheAlternatives) {
  const std::string message = Message(Parse(Line(R"("activity":{"kind":42})")));
  EXPECT_THAT(message, HasSubstr("activity.kind: missing or unknown value 42"));
  EXPECT_THAT(message, HasSubstr("expected one of IDLE, INIT,"));
  EXPECT_THAT(Message(Parse(Line(R"("job_ended":{})"))),
              HasSubstr("job_ended.outcome: missing or unknown value 0 "
                        "(OUTCOME_UNSPECIFIED)"));
}

TEST(EventValidatorTest, TimeMustBeAValidTimestamp) {
  v1::Event e = Parse(Line(R"("started":{})"));
  e.mutable_time()->set_nanos(1000000000);
  EXPECT_THAT(Message(e), HasSubstr("time: not a valid timestamp, got "
                                    "seconds=1795341600 nanos=1000000000"));
  e.mutable_time()->set_nanos(0);
  e.mutable_time()->set_seconds(int64_t{1} << 60);
  EXPECT_THAT(Message(e), HasSubstr("time: not a valid timestamp"));
  e.clear_time();
  EXPECT_EQ(Message(e), "time: required, got none");
}

TEST(EventValidatorTest, FutureLimitAppliesOnlyWithAClock) {
  const v1::Event e = Parse(Line(R"("started":{})"));  // 10:00:00Z
  ValidationLimits limits;
  EXPECT_TRUE(ValidateEvent(e, limits).ok());
  limits.now_ns = (int64_t{1795341600} - 300) * 1000000000;  // 09:55:00Z
  EXPECT_TRUE(ValidateEvent(e, limits).ok());
  *limits.now_ns -= 1;
  EXPECT_THAT(Message(e, limits),
              HasSubstr("time: more than 300s in the future (now "
                        "2026-11-22T09:54:59.999999999Z), got "
                        "2026-11-22T10:00:00Z"));
}

TEST(EventValidatorTest, LimitsAreConfigurable) {
  ValidationLimits limits;
  limits.max_string_bytes = 4;
  limits.max_labels = 1;
  v1::Event e = Parse(Line(R"("job_submitted":{"chips":1,"workload":1})"));
  e.set_job_id("abcd");
  EXPECT_TRUE(ValidateEvent(e, limits).ok());
  e.set_job_id("abcde");
  EXPECT_EQ(Message(e, limits),
            R"(job_id: must be at most 4 bytes, got 5 bytes "abcde")");
  e.set_job_id("a");
  (*e.mutable_job_submitted()->mutable_labels())["k"] = "v";
  EXPECT_TRUE(ValidateEvent(e, limits).ok());
  (*e.mutable_job_submitted()->mutable_labels())["k2"] = "v";
  EXPECT_EQ(Message(e, limits),
            "job_submitted.labels: must have at most 1 labels, got 2");
}

TEST(EventValidatorTest, LongValuesAreCutAndEscapedInMessages) {
  v1::Event e = Parse(Line(R"("started":{})"));
  e.set_attempt(std::string(300, '\n'));
  std::string shown;
  for (int i = 0; i < 40; ++i) shown += "\\n";
  EXPECT_EQ(Message(e),
            absl::StrCat("attempt: must be at most 256 bytes, got 300 bytes \"",
                         shown, "\"..."));
}

}  // namespace
}  // namespace codec
}  // namespace goodput
