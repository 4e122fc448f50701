#include "codec/fast_decoder.h"

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "codec/reference_decoder.h"
#include "codec/testing/spec_lines.h"
#include "gmock/gmock.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "google/protobuf/util/field_comparator.h"
#include "google/protobuf/util/json_util.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"

namespace goodput {
namespace codec {
namespace {

using ::testing::HasSubstr;

std::string CorpusDir() {
#ifdef GOODPUT_CODEC_CORPUS_DIR
  return GOODPUT_CODEC_CORPUS_DIR "/decoder_fuzzer";
#else
  const char* srcdir = std::getenv("TEST_SRCDIR");
  const char* workspace = std::getenv("TEST_WORKSPACE");
  return absl::StrCat(srcdir ? srcdir : ".", "/", workspace ? workspace : ".",
                      "/codec/testdata/corpus/decoder_fuzzer");
#endif
}

// Byte-exact: deterministic serialization sees -0.0 vs 0.0 and presence.
std::string Bytes(const v1::Event& event) {
  std::string bytes;
  google::protobuf::io::StringOutputStream stream(&bytes);
  google::protobuf::io::CodedOutputStream coded(&stream);
  coded.SetSerializationDeterministic(true);
  event.SerializeToCodedStream(&coded);
  coded.Trim();
  return bytes;
}

bool Equal(const v1::Event& a, const v1::Event& b) {
  google::protobuf::util::DefaultFieldComparator comparator;
  comparator.set_treat_nan_as_equal(true);
  google::protobuf::util::MessageDifferencer differ;
  differ.set_field_comparator(&comparator);
  return differ.Compare(a, b) && Bytes(a) == Bytes(b);
}

// Both decoders accept with the same Event, or both reject.
::testing::AssertionResult Agree(FastDecoder* fast, const std::string& line) {
  v1::Event event;
  const absl::Status status = fast->Decode(line, &event);
  const absl::StatusOr<v1::Event> reference = DecodeEventReference(line);
  if (status.ok() != reference.ok()) {
    return ::testing::AssertionFailure()
           << "fast: " << status << " reference: " << reference.status();
  }
  if (reference.ok() && !Equal(event, *reference)) {
    return ::testing::AssertionFailure()
           << "fast: " << event.ShortDebugString()
           << " reference: " << reference->ShortDebugString();
  }
  return ::testing::AssertionSuccess();
}

TEST(FastDecoderTest, SpecLinesDecodeOnTheFastPathLikeTheReference) {
  FastDecoder fast;
  for (const char* line : testing::kSpecLines) {
    v1::Event event;
    ASSERT_TRUE(fast.Decode(line, &event).ok()) << line;
    const absl::StatusOr<v1::Event> reference = DecodeEventReference(line);
    ASSERT_TRUE(reference.ok()) << reference.status();
    EXPECT_TRUE(
        google::protobuf::util::MessageDifferencer::Equals(event, *reference))
        << line;
  }
  EXPECT_EQ(fast.fast_lines(), std::size(testing::kSpecLines));
  EXPECT_EQ(fast.fallback_lines(), 0);
}

TEST(FastDecoderTest, DecodesFieldsOfAStep) {
  FastDecoder fast;
  v1::Event e;
  ASSERT_TRUE(fast.Decode(testing::kSpecLines[6], &e).ok());
  EXPECT_EQ(e.time().seconds(), 1795341782);
  EXPECT_EQ(e.job_id(), "llm-7");
  ASSERT_TRUE(e.has_step());
  EXPECT_EQ(e.step().step(), 1);
  EXPECT_DOUBLE_EQ(e.step().flops(), 1.2e15);
  EXPECT_DOUBLE_EQ(e.step().bytes(), 3.0e12);
  EXPECT_DOUBLE_EQ(e.step().input_wait_seconds(), 0.1);
}

TEST(FastDecoderTest, ReusedEventKeepsNothingFromThePreviousLine) {
  FastDecoder fast;
  v1::Event e;
  ASSERT_TRUE(fast.Decode(testing::kSpecLines[0], &e).ok());
  ASSERT_TRUE(fast.Decode(testing::kSpecLines[11], &e).ok());
  EXPECT_TRUE(e.job_id().empty());
  EXPECT_FALSE(e.has_job_submitted());
  EXPECT_EQ(e.host(), "host-17");
  EXPECT_FALSE(fast.Decode("{", &e).ok());
  EXPECT_FALSE(e.has_time());
}

TEST(FastDecoderTest, CommonVariantsStayOnTheFastPath) {
  FastDecoder fast;
  const std::vector<std::string> lines = {
      R"({"time":"2026-11-22T10:00:00.5+01:00","jobId":"j","jobSubmitted":{"chips":8,"stepFlops":1,"labels":{}}})",
      R"({"time":"2026-11-22T10:00:00Z","job_id":"j","activity":{"kind":42}})",
      R"({"time":"2026-11-22T10:00:00Z","job_id":"j","step":{"step":1,"flops":"NaN","bytes":"Infinity","idleSeconds":-0}})",
      R"( {"time":"2026-11-22T10:00:00Z","job_id":"j","activity":{"kind":"CUSTOM","name":"eval","step":0}} )"
      "\r\n",
  };
  for (const std::string& line : lines) EXPECT_TRUE(Agree(&fast, line)) << line;
  EXPECT_EQ(fast.fast_lines(), lines.size());
}

// Rule 14's fields (min_chips, RESHARD) take the fast path and agree with
// the reference, explicit zeros keeping their presence.
TEST(FastDecoderTest, ElasticFieldsStayOnTheFastPath) {
  FastDecoder fast;
  const std::vector<std::string> lines = {
      R"({"time":"2026-11-22T10:00:00Z","job_id":"e","job_submitted":{"chips":256,"min_chips":128,"workload":"TRAINING"}})",
      R"({"time":"2026-11-22T10:00:00Z","job_id":"e","jobSubmitted":{"chips":256,"minChips":0}})",
      R"({"time":"2026-11-22T10:00:00Z","job_id":"e","activity":{"kind":"RESHARD"}})",
      R"({"time":"2026-11-22T10:00:00Z","job_id":"e","activity":{"kind":11}})",
  };
  for (const std::string& line : lines) EXPECT_TRUE(Agree(&fast, line)) << line;
  EXPECT_EQ(fast.fast_lines(), lines.size());
  v1::Event e;
  ASSERT_TRUE(fast.Decode(lines[1], &e).ok());
  EXPECT_TRUE(e.job_submitted().has_min_chips());
  ASSERT_TRUE(fast.Decode(lines[2], &e).ok());
  EXPECT_EQ(e.activity().kind(), v1::Activity::RESHARD);
}

// Shapes the fast path hands to the reference, valid and not.
TEST(FastDecoderTest, ExoticLinesAgreeWithTheReference) {
  FastDecoder fast;
  const std::vector<std::string> lines = {
      R"({"time":"2026-11-22T10:00:00Z","job_id":"a","jobId":"b","started":{}})",
      R"({"time":"2026-11-22T10:00:00Z","job_id":"j\u00e9","started":{}})",
      R"({"time":null,"job_id":null,"started":null,"step":{}})",
      R"({"time":"2026-11-22T10:00:00Z","step":{"step":"12","flops":"1.5"}})",
      R"({"time":"2026-11-22T10:00:00Z","step":{"step":1e2,"bytes":-0.0}})",
      R"({"time":"2026-11-22T10:00:00Z","activity":{"kind":"9"}})",
      R"({"time":"2026-11-22T10:00:00Z","interruption":{"notice":"yes"}})",
      R"({"time":"2026-11-22T10:00:00.1234567891Z","started":{}})",
      R"({"time":"0001-01-01T00:00:00+01:00","started":{}})",
      R"({"time":{},"started":{}})",
      R"({time:"2026-11-22T10:00:00Z",'job_id':'j',started:{},})",
      R"({"time":"2026-11-22T10:00:00Z","job_submitted":{"labels":{"a":"1"},"labels":{"b":null}}})",
      "\xEF\xBB\xBF{\"started\":{}}",
      "{\"started\":{}}\v",
  };
  for (const std::string& line : lines) EXPECT_TRUE(Agree(&fast, line)) << line;
  EXPECT_EQ(fast.fallback_lines(), lines.size());
}

TEST(FastDecoderTest, RejectsWithTheFieldNamed) {
  FastDecoder fast;
  const std::vector<std::pair<std::string, std::string>> cases = {
      {R"({"time":"2026-11-22T10:00:00Z","activity":{"kind":"NAP"}})",
       R"(activity.kind: invalid value "NAP")"},
      {R"({"time":"2026-11-22T10:00:00Z","job_id":1})",
       "job_id: invalid value 1"},
      {R"({"time":"2026-11-22T10:00:00Z","step":{"step":1.5}})",
       "step.step: invalid value 1.5"},
      {R"({"time":"2026-11-22T10:00:00Z","step":{"stp":1}})",
       "step.stp: Cannot find field"},
      {R"({"time":"2026-31-22T10:00:00Z"})", "time: invalid value"},
      {R"({"time":"2026-11-22T10:00:00Z","started":{},"step":{}})",
       "oneof field 'body' is already set"},
      {R"({"time":"2026-11-22T10:00:00Z"} x)",
       "Parsing terminated before end of input"},
  };
  for (const auto& [line, message] : cases) {
    v1::Event e;
    const absl::Status status = fast.Decode(line, &e);
    EXPECT_TRUE(absl::IsInvalidArgument(status)) << line;
    EXPECT_THAT(std::string(status.message()), HasSubstr(message)) << line;
    EXPECT_TRUE(Agree(&fast, line)) << line;
  }
}

// protobuf's own printer (int64 as strings, lowerCamelCase or proto names)
// is a common producer: its output, for every field, takes the fast path.
TEST(FastDecoderTest, PrinterOutputStaysOnTheFastPath) {
  std::vector<std::string> lines(std::begin(testing::kSpecLines),
                                 std::end(testing::kSpecLines));
  lines.push_back(
      R"({"time":"2026-11-22T10:00:00.123Z","job_id":"j","host":"h",)"
      R"("attempt":"a","job_submitted":{"chips":-9000000000,"accelerator":"x",)"
      R"("workload":"OTHER","framework":"f","labels":{"a":"b","c":"d"},)"
      R"("step_flops":"NaN","step_bytes":1e-300}})");
  lines.push_back(
      R"({"time":"2026-11-22T10:00:00.000001Z","job_id":"j","activity":)"
      R"({"kind":77,"name":"eval","step":"123456789012"}})");
  lines.push_back(
      R"({"time":"2026-11-22T10:00:00Z","job_id":"j","step":{"step":7,)"
      R"("flops":1,"bytes":2,"input_wait_seconds":3,"idle_seconds":4}})");
  lines.push_back(
      R"({"time":"2026-11-22T10:00:00Z","interruption":{"reason":"OTHER",)"
      R"("notice":true}})");
  FastDecoder fast;
  int printed = 0;
  for (const std::string& line : lines) {
    const absl::StatusOr<v1::Event> event = DecodeEventReference(line);
    ASSERT_TRUE(event.ok()) << event.status() << line;
    for (const bool proto_names : {false, true}) {
      google::protobuf::util::JsonPrintOptions options;
      options.preserve_proto_field_names = proto_names;
      std::string json;
      ASSERT_TRUE(
          google::protobuf::util::MessageToJsonString(*event, &json, options)
              .ok());
      EXPECT_TRUE(Agree(&fast, json)) << json;
      ++printed;
    }
  }
  EXPECT_EQ(printed, 2 * lines.size());
  EXPECT_EQ(fast.fallback_lines(), 0);
}

TEST(FastDecoderTest, HugeLinesGoToTheReference) {
  FastDecoder fast;
  const std::string line =
      absl::StrCat(R"({"time":"2026-11-22T10:00:00Z","job_id":")",
                   std::string(size_t{2} << 20, 'j'), R"(","started":{}})");
  v1::Event event;
  ASSERT_TRUE(fast.Decode(line, &event).ok());
  EXPECT_EQ(event.job_id().size(), size_t{2} << 20);
  EXPECT_EQ(fast.fallback_lines(), 1);
}

std::string RandomTime(std::mt19937_64* rng) {
  auto pick = [rng](int lo, int hi) {
    return std::uniform_int_distribution<int>(lo, hi)(*rng);
  };
  std::string text = absl::StrFormat("%04d-%02d-%02dT%02d:%02d:%02d",
                                     pick(1, 9999), pick(1, 12), pick(1, 31),
                                     pick(0, 23), pick(0, 59), pick(0, 59));
  const int digits = pick(0, 10);
  if (digits > 0)
    text += "." + std::to_string(pick(0, 999999999)).substr(0, digits);
  if (pick(0, 1) == 0) return text + "Z";
  return text + absl::StrFormat("%c%02d:%02d", pick(0, 1) ? '+' : '-',
                                pick(0, 23), pick(0, 59));
}

TEST(FastDecoderTest, RandomTimestampsAgreeWithTheReference) {
  FastDecoder fast;
  std::mt19937_64 rng(20261122);
  for (int i = 0; i < 20000; ++i) {
    const std::string line =
        absl::StrCat(R"({"time":")", RandomTime(&rng), R"(","started":{}})");
    ASSERT_TRUE(Agree(&fast, line)) << line;
  }
  EXPECT_GT(fast.fast_lines(), 10000);
}

TEST(FastDecoderTest, RandomNumbersAgreeWithTheReference) {
  FastDecoder fast;
  std::mt19937_64 rng(7);
  std::uniform_int_distribution<int> exponent(-330, 330);
  for (int i = 0; i < 20000; ++i) {
    const double mantissa = std::ldexp(static_cast<double>(rng() >> 11), -53);
    const std::string number =
        i % 3 == 0 ? std::to_string(static_cast<int64_t>(rng()))
                   : absl::StrFormat("%.17ge%d", mantissa, exponent(rng));
    const std::string line = absl::StrCat(
        R"({"step":{"step":)", i % 3 == 0 ? number : "1", R"(,"flops":)",
        number, R"(},"time":"2026-11-22T10:00:00Z"})");
    ASSERT_TRUE(Agree(&fast, line)) << line;
  }
  EXPECT_GT(fast.fast_lines(), 15000);
}

TEST(FastDecoderTest, CheckedInCorpusAgreesWithTheReference) {
  FastDecoder fast;
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(CorpusDir())) {
    std::ifstream in(entry.path(), std::ios::binary);
    std::stringstream content;
    content << in.rdbuf();
    EXPECT_TRUE(Agree(&fast, content.str())) << entry.path();
    ++files;
  }
  EXPECT_GE(files, 40) << CorpusDir();
  EXPECT_GE(fast.fast_lines(), 12);
  EXPECT_GE(fast.fallback_lines(), 12);
}

}  // namespace
}  // namespace codec
}  // namespace goodput
