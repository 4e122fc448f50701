#include "codec/event_validator.h"

#include <string>
#include <vector>

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

// Rule 14: min_chips makes a job elastic; 0 < min_chips <= chips.
TEST(EventValidatorTest, AcceptsElasticJobsAndReshard) {
  for (const std::string& body :
       {std::string(
            R"("job_submitted":{"chips":8,"min_chips":1,"workload":1})"),
        std::string(
            R"("job_submitted":{"chips":8,"min_chips":8,"workload":1})"),
        std::string(R"("activity":{"kind":"RESHARD"})")}) {
    EXPECT_TRUE(ValidateEvent(Parse(Line(body)), {}).ok()) << body;
  }
}

TEST(EventValidatorTest, RejectsBadMinChipsNamingFieldAndValue) {
  EXPECT_EQ(Message(Parse(Line(
                R"("job_submitted":{"chips":8,"min_chips":0,"workload":1})"))),
            "job_submitted.min_chips: must be > 0, got 0");
  EXPECT_EQ(Message(Parse(Line(
                R"("job_submitted":{"chips":8,"min_chips":-2,"workload":1})"))),
            "job_submitted.min_chips: must be > 0, got -2");
  EXPECT_EQ(Message(Parse(Line(
                R"("job_submitted":{"chips":8,"min_chips":9,"workload":1})"))),
            "job_submitted.min_chips: must be at most job_submitted.chips (8), "
            "got 9");
  EXPECT_EQ(
      Message(Parse(Line(R"("job_submitted":{"min_chips":4,"workload":1})"))),
      "job_submitted.min_chips: needs job_submitted.chips > 0, got 4 "
      "with chips 0");
}

// Exclusions (docs/semantics.md): JOB with a job, HOSTS and FLEET without.
std::string Exclusion(const std::string& fields) {
  return absl::StrCat(
      R"({"time":"2026-11-22T10:00:00Z",)", fields,
      R"("exclusion":{"until":"2026-11-22T11:00:00Z","reason":"maintenance",)");
}

TEST(EventValidatorTest, AcceptsExclusionsOfEveryScope) {
  for (const std::string& line :
       {Exclusion(R"("job_id":"j",)") + R"("scope":"JOB"}})",
        Exclusion("") + R"("scope":"FLEET"}})",
        Exclusion(R"("host":"ops",)") +
            R"("scope":"HOSTS","hosts":["h1","h2"]}})"}) {
    EXPECT_TRUE(ValidateEvent(Parse(line), {}).ok()) << line;
  }
}

TEST(EventValidatorTest, RejectsBadExclusionsNamingFieldAndValue) {
  EXPECT_THAT(Message(Parse(Exclusion(R"("job_id":"j",)") + "}}")),
              HasSubstr("exclusion.scope: missing or unknown value 0"));
  EXPECT_THAT(Message(Parse(Exclusion("") + R"("scope":"JOB"}})")),
              HasSubstr("job_id: required"));
  EXPECT_THAT(
      Message(Parse(Exclusion(R"("job_id":"j",)") + R"("scope":"FLEET"}})")),
      HasSubstr("job_id: must be empty for a HOSTS or FLEET "
                "exclusion, got \"j\""));
  EXPECT_THAT(Message(Parse(Exclusion("") + R"("scope":"HOSTS"}})")),
              HasSubstr("exclusion.hosts: required (at least one) for scope "
                        "HOSTS"));
  EXPECT_THAT(
      Message(Parse(Exclusion("") + R"("scope":"FLEET","hosts":["h"]}})")),
      HasSubstr("exclusion.hosts: only for scope HOSTS, got 1 hosts"));
  EXPECT_THAT(
      Message(Parse(Exclusion("") + R"("scope":"HOSTS","hosts":[""]}})")),
      HasSubstr("exclusion.hosts: a host is empty"));
  EXPECT_THAT(
      Message(Parse(
          R"({"time":"2026-11-22T10:00:00Z","job_id":"j","exclusion":{"reason":"r","scope":"JOB"}})")),
      HasSubstr("exclusion.until: required, got none"));
  EXPECT_THAT(
      Message(Parse(
          R"({"time":"2026-11-22T10:00:00Z","job_id":"j","exclusion":{"until":"2026-11-22T10:00:00Z","reason":"r","scope":"JOB"}})")),
      HasSubstr("exclusion.until: must be after time, got "
                "2026-11-22T10:00:00Z with time 2026-11-22T10:00:00Z"));
  EXPECT_THAT(
      Message(Parse(
          R"({"time":"2026-11-22T10:00:00Z","job_id":"j","exclusion":{"until":"2026-11-22T11:00:00Z","scope":"JOB"}})")),
      HasSubstr("exclusion.reason: required"));
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

// Absurd values (issue 15.9): each bound accepts its limit and rejects one
// above it, naming the field, the bound's flag and the value.
TEST(EventValidatorTest, ValuesAboveTheirBoundsAreRejectedNamingTheField) {
  ValidationLimits limits;
  limits.max_chips = 1000;
  limits.max_flops = 1e20;
  limits.max_bytes = 1e18;
  limits.max_step = 100;
  struct Case {
    std::string ok, bad, message;
  };
  for (const Case& c : std::vector<Case>{
           {R"("job_submitted":{"chips":1000,"workload":1})",
            R"("job_submitted":{"chips":1001,"workload":1})",
            "job_submitted.chips: must be at most 1000 (--max_chips), got "
            "1001"},
           {R"("allocation":{"chips":1000})",
            R"("allocation":{"chips":9223372036854775807})",
            "allocation.chips: must be at most 1000 (--max_chips), got "
            "9223372036854775807"},
           {R"("step":{"step":100,"flops":1e20,"bytes":1e18})",
            R"("step":{"step":101})",
            "step.step: must be at most 100 (--max_step), got 101"},
           {R"("step":{"step":1,"flops":1e20})",
            R"("step":{"step":1,"flops":1e308})",
            "step.flops: must be at most 1e+20 (--max_flops), got 1e+308"},
           {R"("step":{"step":1,"bytes":1e18})",
            R"("step":{"step":1,"bytes":1.5e18})",
            "step.bytes: must be at most 1e+18 (--max_bytes), got 1.5e+18"},
           {R"("job_submitted":{"chips":1,"workload":1,"step_flops":1e20})",
            R"("job_submitted":{"chips":1,"workload":1,"step_flops":2e20})",
            "job_submitted.step_flops: must be at most 1e+20 (--max_flops), "
            "got 2e+20"},
           {R"("checkpoint":{"step":100})", R"("checkpoint":{"step":101})",
            "checkpoint.step: must be at most 100 (--max_step), got 101"},
           {R"("activity":{"kind":"RESTORE","step":100})",
            R"("activity":{"kind":"RESTORE","step":101})",
            "activity.step: must be at most 100 (--max_step), got 101"}}) {
    EXPECT_TRUE(ValidateEvent(Parse(Line(c.ok)), limits).ok()) << c.ok;
    EXPECT_EQ(Message(Parse(Line(c.bad)), limits), c.message);
  }
  v1::Event beat = Parse(
      R"({"time":"2026-11-22T10:00:00Z","host":"h","heartbeat":{"chips":1001}})");
  EXPECT_EQ(Message(beat, limits),
            "heartbeat.chips: must be at most 1000 (--max_chips), got 1001");
}

TEST(EventValidatorTest, DefaultBoundsRejectTheAbsurd) {
  const ValidationLimits limits;
  EXPECT_THAT(
      Message(
          Parse(Line(
              R"("job_submitted":{"chips":9223372036854775807,"workload":1})")),
          limits),
      HasSubstr("(--max_chips)"));
  EXPECT_THAT(
      Message(Parse(Line(R"("step":{"step":1,"flops":1e308})")), limits),
      HasSubstr("(--max_flops)"));
}

TEST(EventValidatorTest, AgeLimitAppliesOnlyWithAClock) {
  const v1::Event e = Parse(Line(R"("started":{})"));  // 10:00:00Z
  ValidationLimits limits;
  limits.max_age_ns = int64_t{86400} * 1000000000;  // one day
  EXPECT_TRUE(ValidateEvent(e, limits).ok());
  limits.now_ns = (int64_t{1795341600} + 86400) * 1000000000;
  EXPECT_TRUE(ValidateEvent(e, limits).ok());  // exactly one day old
  *limits.now_ns += 1;
  EXPECT_EQ(Message(e, limits),
            "time: more than 24h in the past (--max_event_age; now "
            "2026-11-23T10:00:00.000000001Z), got 2026-11-22T10:00:00Z");
  limits.max_age_ns = 0;  // no limit
  EXPECT_TRUE(ValidateEvent(e, limits).ok());
  // The default (5 years) refuses year 1 and ten years back.
  const ValidationLimits defaults{.now_ns = *limits.now_ns};
  v1::Event old = e;
  old.mutable_time()->set_seconds(1795341600 - 10 * 365 * 86400);
  EXPECT_THAT(Message(old, defaults), HasSubstr("--max_event_age"));
  old.mutable_time()->set_seconds(-62135596800);  // 0001-01-01
  EXPECT_THAT(Message(old, defaults), HasSubstr("--max_event_age"));
  old.mutable_time()->set_seconds(1795341600 - 3 * 365 * 86400);
  EXPECT_TRUE(ValidateEvent(old, defaults).ok());
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
