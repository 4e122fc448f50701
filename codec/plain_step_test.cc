#include "codec/plain_step.h"

#include <algorithm>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "codec/line_decoder.h"
#include "codec/testing/spec_lines.h"
#include "gtest/gtest.h"

namespace goodput {
namespace codec {
namespace {

constexpr const char kTime[] = R"("time":"2026-11-22T10:01:59.982Z")";

// A step line with `members` after its time.
std::string Line(const std::string& members) {
  return absl::StrCat("{", kTime, ",", members, "}");
}

// The property: a line DecodePlainStep takes decodes under LineDecoder to
// the same event, bit for bit, and AppendPlainStepWire writes that event's
// bytes; one LineDecoder rejects, it declines. Returns whether
// DecodePlainStep took it.
bool TakenAsLineDecoderDecodes(const std::string& line,
                               const ValidationLimits& limits = {}) {
  PlainStep plain;
  const bool taken = DecodePlainStep(line, limits, &plain);
  v1::Event expected;
  const absl::Status status = LineDecoder(limits).DecodeLine(line, &expected);
  if (!taken) return false;
  EXPECT_TRUE(status.ok()) << line << ": " << status;
  v1::Event got;
  PlainStepToEvent(plain, &got);
  EXPECT_EQ(got.SerializeAsString(), expected.SerializeAsString()) << line;
  std::string wire = "prefix";
  AppendPlainStepWire(plain, &wire);
  EXPECT_EQ(wire, "prefix" + expected.SerializeAsString()) << line;
  EXPECT_EQ(PlainStepWireSize(plain), expected.ByteSizeLong()) << line;
  return true;
}

TEST(PlainStepTest, TakesTheShapesAgentsWrite) {
  for (
      const std::string& line : std::vector<std::string>{
          Line(R"("job_id":"job-486","step":{"step":"102"})"),
          Line(R"("job_id":"j","step":{"step":0})"),
          Line(R"("jobId":"j","step":{"step":"000000000000000007"})"),
          Line(R"("job_id":"j","host":"h-1","attempt":"a2","step":{"step":5})"),
          absl::StrCat(R"({"step":{"step":5},"attempt":"a","job_id":"j",)",
                       kTime, "}"),
          R"({"time":"2026-11-22T10:00:00+05:30","job_id":"j","step":{"step":1}})",
          R"({"time":"0002-01-01T00:00:00+23:59","job_id":"j","step":{"step":1}})",
          R"({"time":"9998-12-31T23:59:59.999999999-23:59","job_id":"j","step":{"step":1}})",
          Line(R"("job_id":"j","step":{"step":"999999999999"})"),
      }) {
    EXPECT_TRUE(TakenAsLineDecoderDecodes(line)) << line;
  }
}

TEST(PlainStepTest, GivesTheFieldsOfTheLine) {
  // The fields point into the line: it outlives them.
  const std::string line =
      Line(R"("job_id":"job-7","host":"h","attempt":"a","step":{"step":"42"})");
  PlainStep s;
  ASSERT_TRUE(DecodePlainStep(line, {}, &s));
  EXPECT_EQ(s.seconds, 1795341719);
  EXPECT_EQ(s.nanos, 982000000);
  EXPECT_EQ(s.job_id, "job-7");
  EXPECT_EQ(s.host, "h");
  EXPECT_EQ(s.attempt, "a");
  EXPECT_EQ(s.step, 42);
}

// Each is a line LineDecoder decodes differently, rejects, or that needs
// what DecodePlainStep does not do; all must be declined.
TEST(PlainStepTest, DeclinesEverythingElse) {
  const std::string step = R"("step":{"step":1})";
  for (const std::string& line : std::vector<std::string>{
           Line(R"("job_id":"","step":{"step":1})"),    // no job
           Line(step),                                  // no job
           R"({"job_id":"j","step":{"step":1}})",       // no time
           Line(R"("job_id":"j")"),                     // no body
           Line(R"("job_id":"j","step":{"step":-1})"),  // negative
           Line(R"("job_id":"j","step":{"step":"-1"})"),
           Line(R"("job_id":"j","step":{"step":01})"),             // not JSON
           Line(R"("job_id":"j","step":{"step":1000000000001})"),  // > max
           Line(R"("job_id":"j","step":{"step":"1234567890123456789"})"),
           // 19 digits whose first 18 times 10 overflow an int64 (fuzzer)
           Line(R"("job_id":"j","step":{"step":9223372036854775887})"),
           Line(R"("job_id":"j","step":{"step":1.0})"),
           Line(R"("job_id":"j","step":{"step":1,"flops":2})"),  // amounts
           Line(R"("job_id":"j","step":{})"),
           Line(R"("job_id":"j","step":{"step":1},"step":{"step":2})"),
           Line(R"("job_id":"j","jobId":"k","step":{"step":1})"),
           Line(R"("job_id":"j","started":{},"step":{"step":1})"),
           Line(R"("job_id":"j","step":{"step":1},"extra":1)"),
           Line(R"("job_id":"j\u0041","step":{"step":1})"),  // escape
           Line(R"("job_id":"j)"
                "\xc3\xa9"
                R"(","step":{"step":1})"),
           Line(R"("job_id":"j", "step":{"step":1})"),  // space
           Line(R"("job_id":"j","step":{"step":1})") + " ",
           " " + Line(R"("job_id":"j","step":{"step":1})"),
           Line(R"("job_id":")" + std::string(257, 'j') +
                R"(","step":{"step":1})"),
           Line(R"("job_id":"j","host":")" + std::string(257, 'h') +
                R"(","step":{"step":1})"),
           R"({"time":"2026-11-22 10:00:00Z","job_id":"j","step":{"step":1}})",
           R"({"time":"2026-02-30T10:00:00Z","job_id":"j","step":{"step":1}})",
           R"({"time":"","job_id":"j","step":{"step":1}})",
           "",
       }) {
    PlainStep s;
    EXPECT_FALSE(DecodePlainStep(line, {}, &s)) << line;
    TakenAsLineDecoderDecodes(line);
  }
}

// One decoder keeps the last time it parsed: a line with the same time
// text gets the same time, any other text is parsed (or declined) anew.
TEST(PlainStepTest, ADecoderParsesEachNewTime) {
  PlainStepDecoder decoder;
  PlainStep s;
  const std::string step = R"(,"job_id":"j","step":{"step":1}})";
  for (const auto& [time, seconds, nanos] :
       std::vector<std::tuple<std::string, int64_t, int32_t>>{
           {"2026-11-22T10:00:00Z", 1795341600, 0},
           {"2026-11-22T10:00:00Z", 1795341600, 0},
           {"2026-11-22T10:00:01Z", 1795341601, 0},
           {"2026-11-22T10:00:01.5Z", 1795341601, 500000000},
           {"2026-11-22T10:00:01.5Z", 1795341601, 500000000},
           {"2026-11-22T11:00:01.5+01:00", 1795341601, 500000000}}) {
    ASSERT_TRUE(decoder.Decode(R"({"time":")" + time + "\"" + step, {}, &s))
        << time;
    EXPECT_EQ(s.seconds, seconds) << time;
    EXPECT_EQ(s.nanos, nanos) << time;
  }
  EXPECT_FALSE(
      decoder.Decode(R"({"time":"2026-11-22T10:00:01.5")" + step, {}, &s));
  EXPECT_FALSE(decoder.Decode(R"({"time":"")" + step, {}, &s));
  EXPECT_TRUE(decoder.Decode(R"({"time":"2026-11-22T11:00:01.5+01:00")" + step,
                             {}, &s));
}

TEST(PlainStepTest, DeclinesUnderStricterLimits) {
  const std::string line = Line(R"("job_id":"job-1","step":{"step":"9"})");
  ValidationLimits short_strings;
  short_strings.max_string_bytes = 4;
  ValidationLimits low_steps;
  low_steps.max_step = 8;
  PlainStep s;
  EXPECT_FALSE(DecodePlainStep(line, short_strings, &s));
  EXPECT_FALSE(DecodePlainStep(line, low_steps, &s));
  low_steps.max_step = 9;
  EXPECT_TRUE(TakenAsLineDecoderDecodes(line, low_steps));
}

// Under a clock (the agent's intake) a line is taken exactly when its time
// is inside ValidateEvent's window: the edges are taken, a nanosecond
// beyond either is declined, as LineDecoder rejects it.
TEST(PlainStepTest, TakesUnderAClockExactlyInsideTheWindow) {
  const std::string line = Line(R"("job_id":"job-1","step":{"step":"9"})");
  const int64_t at = int64_t{1795341719} * 1000000000 + 982000000;
  ValidationLimits limits;
  const auto taken = [&](int64_t now_ns) {
    limits.now_ns = now_ns;
    PlainStep s;
    const bool plain = DecodePlainStep(line, limits, &s);
    v1::Event e;
    EXPECT_EQ(plain, LineDecoder(limits).DecodeLine(line, &e).ok()) << now_ns;
    return plain && TakenAsLineDecoderDecodes(line, limits);
  };
  EXPECT_TRUE(taken(at));
  EXPECT_TRUE(taken(at - limits.max_future_ns));
  EXPECT_FALSE(taken(at - limits.max_future_ns - 1));
  EXPECT_TRUE(taken(at + limits.max_age_ns));
  EXPECT_FALSE(taken(at + limits.max_age_ns + 1));
  limits.max_age_ns = 0;  // no age limit
  EXPECT_TRUE(taken(at + limits.max_future_ns * 1000));
}

// Many random plain lines (negative and zero times, zero steps, absent and
// present host and attempt, any key order): each is taken and its wire
// bytes are LineDecoder's event's.
TEST(PlainStepTest, RandomPlainLinesEncodeAsLineDecoderDecodes) {
  std::mt19937_64 rng(16);
  const auto pick = [&](int n) { return static_cast<int>(rng() % n); };
  const auto word = [&](int max) {
    std::string w(pick(max) + 1, 'a');
    for (char& c : w) c = static_cast<char>(0x20 + pick(95));
    for (char& c : w) c = (c == '"' || c == '\\') ? 'x' : c;
    return w;
  };
  const std::vector<std::string> times = {
      "1970-01-01T00:00:00Z",          "1970-01-01T00:00:00.000000001Z",
      "1969-12-31T23:59:59.5Z",        "0002-01-01T00:00:00Z",
      "2026-11-22T10:01:59.982+01:00", "9998-12-31T23:59:59.999999999Z"};
  int taken = 0;
  for (int i = 0; i < 3000; ++i) {
    std::vector<std::string> members = {
        absl::StrCat(R"("time":")", times[pick(times.size())], "\""),
        absl::StrCat(pick(2) ? R"("job_id":")" : R"("jobId":")", word(300),
                     "\""),
        absl::StrCat(
            R"("step":{"step":)",
            std::vector<std::string>{"0", "1", "127", "128", "\"999999999999\"",
                                     "1000000000000"}[pick(6)],
            "}")};
    if (pick(2)) members.push_back(absl::StrCat(R"("host":")", word(20), "\""));
    if (pick(2)) {
      members.push_back(absl::StrCat(R"("attempt":")", word(200), "\""));
    }
    std::shuffle(members.begin(), members.end(), rng);
    const std::string line =
        absl::StrCat("{", absl::StrJoin(members, ","), "}");
    PlainStep s;
    v1::Event e;
    EXPECT_EQ(DecodePlainStep(line, {}, &s),
              LineDecoder().DecodeLine(line, &e).ok())
        << line;
    taken += TakenAsLineDecoderDecodes(line);
  }
  EXPECT_GT(taken, 1500);  // the rest: a job_id over 256 bytes or step > max
}

TEST(PlainStepTest, SpecLinesDecodeAsLineDecoderDecodes) {
  for (const char* line : testing::kSpecLines) TakenAsLineDecoderDecodes(line);
}

// Every one-byte change and deletion of two plain lines: whatever
// DecodePlainStep still takes, LineDecoder decodes the same.
TEST(PlainStepTest, OneByteMutantsDecodeAsLineDecoderDecodes) {
  const std::string chars = "\"\\{}:,.-+0159eEZTa \t\x7f\x01\xc3";
  int taken = 0;
  for (const std::string& good :
       {Line(R"("job_id":"job-1","host":"h","step":{"step":"10"})"),
        Line(R"("jobId":"j","attempt":"x","step":{"step":10})")}) {
    for (size_t i = 0; i < good.size(); ++i) {
      std::string deleted = good;
      deleted.erase(i, 1);
      taken += TakenAsLineDecoderDecodes(deleted);
      for (const char c : chars) {
        std::string changed = good;
        changed[i] = c;
        taken += TakenAsLineDecoderDecodes(changed);
      }
    }
  }
  EXPECT_GT(taken, 100);  // the mutants inside strings and digits
}

}  // namespace
}  // namespace codec
}  // namespace goodput
