#include "codec/line_decoder.h"

#include <ostream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "codec/testing/spec_lines.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace goodput {
namespace codec {
namespace {

using ::testing::HasSubstr;

constexpr int64_t kNowNs = int64_t{1795348800} * 1000000000;  // 12:00:00Z

LineDecoder MakeDecoder() {
  ValidationLimits limits;
  limits.now_ns = kNowNs;
  return LineDecoder(limits);
}

// `fields` inside a line with a valid time and job_id.
std::string Job(const std::string& fields) {
  return absl::StrCat(R"({"time":"2026-11-22T10:00:00Z","job_id":"j",)", fields,
                      "}");
}

std::string Long(char c) { return std::string(257, c); }

std::string ManyLabels(int n) {
  std::string labels;
  for (int i = 0; i < n; ++i) {
    absl::StrAppend(&labels, i ? "," : "", "\"k", i, "\":\"v\"");
  }
  return Job(absl::StrCat(
      R"("job_submitted":{"chips":1,"workload":"TRAINING","labels":{)", labels,
      "}}"));
}

struct BadLine {
  std::string name;
  std::string line;
  std::string error;  // Expected substring of the message.
};

void PrintTo(const BadLine& bad, std::ostream* os) { *os << bad.name; }

std::vector<BadLine> BadLines() {
  const std::string time = R"("time":"2026-11-22T10:00:00Z")";
  return {
      // Structure and syntax.
      {"NoBody", Job(R"("host":"h")"), "body: no event body"},
      {"MissingTime", R"({"job_id":"j","started":{}})", "time: required"},
      {"MissingJobId", absl::StrCat("{", time, R"(,"started":{}})"),
       "job_id: required"},
      {"HeartbeatWithoutHost",
       absl::StrCat("{", time, R"(,"heartbeat":{"chips":4}})"),
       "host: required for heartbeat"},
      {"MalformedJson", Job(R"("step":{"step":1)"),
       "invalid event JSON: Unexpected end of string"},
      {"TrailingGarbage", Job(R"("started":{})") + " x",
       "Parsing terminated before end of input"},
      {"NotAnObject", R"(["started"])", "Root element must be a message"},
      {"UnknownField", Job(R"("started":{},"stared":{})"),
       "stared: Cannot find field"},
      {"TwoBodies", Job(R"("started":{},"step":{"step":1})"),
       "oneof field 'body' is already set"},
      {"DuplicateLabel",
       Job(R"("job_submitted":{"chips":1,"labels":{"a":"1","a":"2"}})"),
       "Repeated map key: 'a'"},
      // Wrong types.
      {"JobIdNumber",
       R"({"time":"2026-11-22T10:00:00Z","job_id":7,"started":{}})",
       "job_id: invalid value 7"},
      {"StepFraction", Job(R"("step":{"step":1.5})"),
       "step.step: invalid value 1.5"},
      {"BodyNotObject", Job(R"("step":"x")"), "step: invalid value \"x\""},
      {"TimeNumber", R"({"time":1,"job_id":"j","started":{}})",
       "time: invalid value"},
      {"BadDate",
       R"({"time":"2026-02-30T10:00:00Z","job_id":"j","started":{}})",
       "Invalid time format: 2026-02-30T10:00:00Z"},
      {"NoticeNumber", Job(R"("interruption":{"reason":"FAILED","notice":1})"),
       "interruption.notice: invalid value 1"},
      {"Int64Overflow", Job(R"("checkpoint":{"step":9223372036854775808})"),
       "checkpoint.step: invalid value 9223372036854775808"},
      // Enums.
      {"KindByUnknownName", Job(R"("activity":{"kind":"NAP"})"),
       R"(activity.kind: invalid value "NAP")"},
      {"KindByUnknownNumber", Job(R"("activity":{"kind":42})"),
       "activity.kind: missing or unknown value 42"},
      {"KindUnspecified", Job(R"("activity":{"kind":"KIND_UNSPECIFIED"})"),
       "activity.kind: missing or unknown value 0"},
      {"WorkloadMissing", Job(R"("job_submitted":{"chips":8})"),
       "job_submitted.workload: missing or unknown value 0"},
      {"WorkloadByNumber", Job(R"("job_submitted":{"chips":8,"workload":9})"),
       "job_submitted.workload: missing or unknown value 9"},
      {"ReasonMissing", Job(R"("interruption":{"notice":true})"),
       "interruption.reason: missing or unknown value 0"},
      {"OutcomeByName", Job(R"("job_ended":{"outcome":"PREEMPTED"})"),
       R"(job_ended.outcome: invalid value "PREEMPTED")"},
      {"OutcomeByNumber", Job(R"("job_ended":{"outcome":-1})"),
       "job_ended.outcome: missing or unknown value -1"},
      // Numbers.
      {"SubmittedZeroChips",
       Job(R"("job_submitted":{"chips":0,"workload":"TRAINING"})"),
       "job_submitted.chips: must be > 0, got 0"},
      {"SubmittedNegativeChips",
       Job(R"("job_submitted":{"chips":"-8","workload":"TRAINING"})"),
       "job_submitted.chips: must be > 0, got -8"},
      {"AllocationNegativeChips", Job(R"("allocation":{"chips":-1})"),
       "allocation.chips: must be >= 0, got -1"},
      {"HeartbeatNegativeChips",
       R"({"time":"2026-11-22T10:00:00Z","host":"h","heartbeat":{"chips":-4}})",
       "heartbeat.chips: must be >= 0, got -4"},
      {"NegativeStep", Job(R"("step":{"step":-1})"),
       "step.step: must be >= 0, got -1"},
      {"NegativeCheckpoint", Job(R"("checkpoint":{"step":-3})"),
       "checkpoint.step: must be >= 0, got -3"},
      {"NegativeRestoreStep", Job(R"("activity":{"kind":"RESTORE","step":-2})"),
       "activity.step: must be >= 0, got -2"},
      {"NegativeFlops", Job(R"("step":{"step":1,"flops":-1})"),
       "step.flops: must be finite and >= 0, got -1"},
      {"NanBytes", Job(R"("step":{"step":1,"bytes":"NaN"})"),
       "step.bytes: must be finite and >= 0, got nan"},
      {"InfiniteInputWait",
       Job(R"("step":{"step":1,"input_wait_seconds":"Infinity"})"),
       "step.input_wait_seconds: must be finite and >= 0, got inf"},
      {"NegativeIdle", Job(R"("step":{"step":1,"idleSeconds":-0.5})"),
       "step.idle_seconds: must be finite and >= 0, got -0.5"},
      {"NegativeStepFlops",
       Job(R"("job_submitted":{"chips":1,"workload":1,"step_flops":"-Infinity"})"),
       "job_submitted.step_flops: must be finite and >= 0, got -inf"},
      {"NegativeStepBytes",
       Job(R"("job_submitted":{"chips":1,"workload":1,"stepBytes":-3e12})"),
       "job_submitted.step_bytes: must be finite and >= 0, got -3e+12"},
      {"MinChipsZero",
       Job(R"("job_submitted":{"chips":8,"workload":1,"min_chips":0})"),
       "job_submitted.min_chips: must be > 0, got 0"},
      {"MinChipsAboveChips",
       Job(R"("job_submitted":{"chips":8,"workload":1,"minChips":"9"})"),
       "job_submitted.min_chips: must be at most job_submitted.chips (8), "
       "got 9"},
      {"FarFuture",
       R"({"time":"2026-11-22T12:05:01Z","job_id":"j","started":{}})",
       "time: more than 300s in the future"},
      // Sizes.
      {"LongJobId",
       absl::StrCat(R"({"time":"2026-11-22T10:00:00Z","job_id":")", Long('j'),
                    R"(","started":{}})"),
       "job_id: must be at most 256 bytes, got 257 bytes"},
      {"LongHost",
       Job(absl::StrCat(R"("host":")", Long('h'), R"(","started":{})")),
       "host: must be at most 256 bytes, got 257 bytes"},
      {"LongAttempt",
       Job(absl::StrCat(R"("attempt":")", Long('a'), R"(","started":{})")),
       "attempt: must be at most 256 bytes"},
      {"LongAccelerator",
       Job(absl::StrCat(
           R"("job_submitted":{"chips":1,"workload":1,"accelerator":")",
           Long('x'), R"("})")),
       "job_submitted.accelerator: must be at most 256 bytes"},
      {"LongHeartbeatAccelerator",
       absl::StrCat(
           R"({"time":"2026-11-22T10:00:00Z","host":"h","heartbeat":{"accelerator":")",
           Long('x'), R"("}})"),
       "heartbeat.accelerator: must be at most 256 bytes"},
      {"LongFramework",
       Job(absl::StrCat(
           R"("job_submitted":{"chips":1,"workload":1,"framework":")",
           Long('f'), R"("})")),
       "job_submitted.framework: must be at most 256 bytes"},
      {"LongActivityName",
       Job(absl::StrCat(R"("activity":{"kind":"CUSTOM","name":")", Long('n'),
                        R"("})")),
       "activity.name: must be at most 256 bytes"},
      {"LongLabelKey",
       Job(absl::StrCat(
           R"("job_submitted":{"chips":1,"workload":1,"labels":{")", Long('k'),
           R"(":"v"}})")),
       "job_submitted.labels key: must be at most 256 bytes"},
      {"LongLabelValue",
       Job(absl::StrCat(
           R"("job_submitted":{"chips":1,"workload":1,"labels":{"team":")",
           Long('v'), R"("}})")),
       R"(job_submitted.labels["team"]: must be at most 256 bytes)"},
      {"TooManyLabels", ManyLabels(33),
       "job_submitted.labels: must have at most 32 labels, got 33"},
      {"CustomWithoutName", Job(R"("activity":{"kind":"CUSTOM"})"),
       "activity.name: required for CUSTOM"},
  };
}

class BadLineTest : public ::testing::TestWithParam<BadLine> {};

TEST_P(BadLineTest, RejectedWithTheFieldNamed) {
  LineDecoder decoder = MakeDecoder();
  v1::Event event;
  const absl::Status status = decoder.DecodeLine(GetParam().line, &event);
  EXPECT_TRUE(absl::IsInvalidArgument(status)) << status;
  EXPECT_THAT(std::string(status.message()), HasSubstr(GetParam().error))
      << GetParam().line;
}

INSTANTIATE_TEST_SUITE_P(AllRejections, BadLineTest,
                         ::testing::ValuesIn(BadLines()),
                         [](const ::testing::TestParamInfo<BadLine>& info) {
                           return info.param.name;
                         });

TEST(LineDecoderTest, AcceptsEverySpecLine) {
  LineDecoder decoder = MakeDecoder();
  for (const char* line : testing::kSpecLines) {
    v1::Event event;
    EXPECT_TRUE(decoder.DecodeLine(line, &event).ok()) << line;
    EXPECT_TRUE(event.has_time()) << line;
  }
  EXPECT_EQ(decoder.decoder().fallback_lines(), 0);
}

TEST(LineDecoderTest, AcceptsJustUnderEveryLimit) {
  LineDecoder decoder = MakeDecoder();
  v1::Event event;
  const std::string at_limit(256, 'x');
  EXPECT_TRUE(decoder
                  .DecodeLine(Job(absl::StrCat(R"("host":")", at_limit,
                                               R"(","started":{})")),
                              &event)
                  .ok());
  EXPECT_TRUE(decoder.DecodeLine(ManyLabels(32), &event).ok());
  EXPECT_TRUE(decoder
                  .DecodeLine(R"({"time":"2026-11-22T12:05:00Z","job_id":"j",)"
                              R"("started":{}})",
                              &event)
                  .ok());
}

TEST(LineDecoderTest, BlankLinesAreNotFoundNotInvalid) {
  LineDecoder decoder = MakeDecoder();
  v1::Event event;
  for (const char* line : {"", " ", "\t", "\r\n", " \n "}) {
    const absl::Status status = decoder.DecodeLine(line, &event);
    EXPECT_TRUE(absl::IsNotFound(status)) << status;
    EXPECT_EQ(status.message(), "blank line");
  }
}

TEST(LineDecoderTest, ClockCanMoveBetweenLines) {
  LineDecoder decoder;  // No clock: offline replay takes any time.
  v1::Event event;
  const std::string line = Job(R"("started":{})");
  EXPECT_TRUE(decoder.DecodeLine(line, &event).ok());
  decoder.limits().now_ns = int64_t{1700000000} * 1000000000;  // 2023
  EXPECT_FALSE(decoder.DecodeLine(line, &event).ok());
}

}  // namespace
}  // namespace codec
}  // namespace goodput
