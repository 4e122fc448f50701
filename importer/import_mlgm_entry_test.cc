#include "importer/import_mlgm_entry.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace goodput::importer {
namespace {

using ::testing::HasSubstr;
using Json = nlohmann::json;
using Kind = MlgmMark::Kind;
using Span = MlgmMark::Span;

constexpr int64_t kT0 = 1'700'000'000;  // 2023-11-14T22:13:20Z
constexpr int64_t kSecond = 1'000'000'000;

std::vector<MlgmMark> ParseOk(const std::string& text) {
  absl::StatusOr<std::vector<MlgmMark>> marks =
      ParseMlgmEntry(Json::parse(text));
  EXPECT_TRUE(marks.ok()) << marks.status();
  return marks.ok() ? *marks : std::vector<MlgmMark>();
}

std::string ParseError(const std::string& text) {
  absl::StatusOr<std::vector<MlgmMark>> marks =
      ParseMlgmEntry(Json::parse(text));
  EXPECT_FALSE(marks.ok()) << text;
  return marks.ok() ? "" : std::string(marks.status().message());
}

struct FieldCase {
  const char* field;
  Kind kind;
  Span span;
};

TEST(ParseMlgmEntryTest, EveryRecorderTimeField) {
  const FieldCase cases[] = {
      {"job_start_time", Kind::kJobStart, Span::kTpuInit},
      {"job_end_time", Kind::kJobEnd, Span::kTpuInit},
      {"tpu_init_start_time", Kind::kBegin, Span::kTpuInit},
      {"tpu_init_end_time", Kind::kEnd, Span::kTpuInit},
      {"training_prep_start_time", Kind::kBegin, Span::kTrainingPrep},
      {"training_prep_end_time", Kind::kEnd, Span::kTrainingPrep},
      {"data_loading_start_time", Kind::kBegin, Span::kDataLoading},
      {"data_loading_end_time", Kind::kEnd, Span::kDataLoading},
  };
  for (const FieldCase& c : cases) {
    std::vector<MlgmMark> marks = ParseOk(std::string(R"({"job_name":"j",")") +
                                          c.field + R"(":1700000000.25})");
    ASSERT_EQ(marks.size(), 1u) << c.field;
    EXPECT_EQ(marks[0].kind, c.kind) << c.field;
    if (c.kind == Kind::kBegin || c.kind == Kind::kEnd) {
      EXPECT_EQ(marks[0].span, c.span) << c.field;
    }
    EXPECT_EQ(marks[0].time_ns, kT0 * kSecond + kSecond / 4) << c.field;
    EXPECT_EQ(marks[0].job_name, "j");
  }
}

TEST(ParseMlgmEntryTest, StepStartCarriesTheStepCount) {
  std::vector<MlgmMark> marks = ParseOk(
      R"({"job_name":"j","step_count":7,"step_start_time":1700000000})");
  ASSERT_EQ(marks.size(), 1u);
  EXPECT_EQ(marks[0].kind, Kind::kStepStart);
  EXPECT_EQ(marks[0].step, 7);
  EXPECT_EQ(marks[0].time_ns, kT0 * kSecond);
}

TEST(ParseMlgmEntryTest, TimesAreRoundedToTheMicrosecond) {
  std::vector<MlgmMark> marks =
      ParseOk(R"({"job_name":"j","job_start_time":1700000000.1234567})");
  EXPECT_EQ(marks[0].time_ns, kT0 * kSecond + 123'457'000);
}

TEST(ParseMlgmEntryTest, CustomBadputEventsCarryTheirType) {
  std::vector<MlgmMark> marks =
      ParseOk(R"({"job_name":"j","custom_badput_event_type":"eval",)"
              R"("custom_badput_event_start_time":1700000000})");
  ASSERT_EQ(marks.size(), 1u);
  EXPECT_EQ(marks[0].kind, Kind::kBegin);
  EXPECT_EQ(marks[0].span, Span::kCustom);
  EXPECT_EQ(marks[0].name, "eval");
}

// ElasticGoodputRecorder's records (issue 14).
TEST(ParseMlgmEntryTest, ElasticRecords) {
  std::vector<MlgmMark> slices = ParseOk(
      R"({"job_name":"j","active_slices":2,"total_slices":4,)"
      R"("available_slices":3,"elastic_slice_counts_timestamp":1700000000})");
  ASSERT_EQ(slices.size(), 1u);
  EXPECT_EQ(slices[0].kind, Kind::kSlices);
  EXPECT_EQ(slices[0].total_slices, 4);
  EXPECT_EQ(slices[0].available_slices, 3);
  EXPECT_EQ(slices[0].time_ns, kT0 * kSecond);
  // Absent counts read as the library reads them: total 1, available 0.
  std::vector<MlgmMark> bare =
      ParseOk(R"({"job_name":"j","total_slices":0,)"
              R"("elastic_slice_counts_timestamp":1700000000})");
  EXPECT_EQ(bare[0].total_slices, 1);
  EXPECT_EQ(bare[0].available_slices, 0);
  std::vector<MlgmMark> wait =
      ParseOk(R"({"job_name":"j","elastic_wait_event_type":"scale_up",)"
              R"("elastic_wait_end_time":1700000000})");
  EXPECT_EQ(wait[0].kind, Kind::kEnd);
  EXPECT_EQ(wait[0].span, Span::kElasticWait);
  EXPECT_EQ(wait[0].name, "scale_up");
  EXPECT_EQ(ParseOk(R"({"elastic_wait_start_time":1700000000})")[0].name,
            "unknown");
  std::vector<MlgmMark> reinit =
      ParseOk(R"({"job_name":"j","elastic_reinit_start_time":1700000000})");
  EXPECT_EQ(reinit[0].kind, Kind::kBegin);
  EXPECT_EQ(reinit[0].span, Span::kReinit);
  EXPECT_EQ(ParseError(R"({"available_slices":-1,)"
                       R"("elastic_slice_counts_timestamp":1700000000})"),
            "available_slices: must be an integer >= 0, got -1");
  EXPECT_EQ(ParseError(R"({"elastic_wait_event_type":3,)"
                       R"("elastic_wait_start_time":1700000000})"),
            "elastic_wait_event_type: must be a non-empty string, got 3");
}

TEST(ParseMlgmEntryTest, CloudLoggingEntryIsUnwrapped) {
  std::vector<MlgmMark> marks = ParseOk(
      R"({"insertId":"x","severity":"INFO","timestamp":"2030-01-01T00:00:00Z",)"
      R"("jsonPayload":{"job_name":"j","job_start_time":1700000000}})");
  ASSERT_EQ(marks.size(), 1u);
  EXPECT_EQ(marks[0].kind, Kind::kJobStart);
  EXPECT_EQ(marks[0].time_ns, kT0 * kSecond);  // the payload's time wins
  EXPECT_EQ(marks[0].job_name, "j");
}

TEST(ParseMlgmEntryTest, MissingJobNameIsLeftEmpty) {
  std::vector<MlgmMark> marks = ParseOk(R"({"job_start_time":1700000000})");
  EXPECT_EQ(marks[0].job_name, "");
}

TEST(ParseMlgmEntryTest, SaveRecordIsItsBlockingSpan) {
  std::vector<MlgmMark> marks = ParseOk(
      R"({"job_name":"j","event_type":"save","step":100,"directory":"gs://b",)"
      R"("checkpoint_manager_blocking_start_time":1700000010,)"
      R"("checkpoint_manager_blocking_duration_secs":2.5,)"
      R"("checkpointer_blocking_duration_secs":2.0})");
  ASSERT_EQ(marks.size(), 2u);
  EXPECT_EQ(marks[0].kind, Kind::kBegin);
  EXPECT_EQ(marks[1].kind, Kind::kEnd);
  for (const MlgmMark& m : marks) {
    EXPECT_EQ(m.span, Span::kSave);
    EXPECT_EQ(m.step, 100);
    EXPECT_EQ(m.job_name, "j");
  }
  EXPECT_EQ(marks[0].time_ns, (kT0 + 10) * kSecond);
  EXPECT_EQ(marks[1].time_ns, (kT0 + 12) * kSecond + kSecond / 2);
}

TEST(ParseMlgmEntryTest, RestoreRecordsBothKinds) {
  for (const char* type : {"restore", "emergency_restore"}) {
    std::vector<MlgmMark> marks =
        ParseOk(std::string(R"({"job_name":"j","event_type":")") + type +
                R"(","step":40,"checkpoint_manager_start_time":1700000000,)"
                R"("checkpoint_manager_duration_secs":30})");
    ASSERT_EQ(marks.size(), 2u) << type;
    EXPECT_EQ(marks[0].span, Span::kRestore);
    EXPECT_EQ(marks[0].step, 40);
    EXPECT_EQ(marks[1].time_ns - marks[0].time_ns, 30 * kSecond);
  }
}

TEST(ParseMlgmEntryTest, RecordWithoutStartIsDatedByItsLogEntry) {
  std::vector<MlgmMark> marks = ParseOk(
      R"({"timestamp":"2023-11-14T22:13:30Z","jsonPayload":{"job_name":"j",)"
      R"("event_type":"save","step":5,)"
      R"("checkpoint_manager_blocking_duration_secs":4}})");
  ASSERT_EQ(marks.size(), 2u);
  EXPECT_EQ(marks[0].time_ns, (kT0 + 6) * kSecond);
  EXPECT_EQ(marks[1].time_ns, (kT0 + 10) * kSecond);
}

TEST(ParseMlgmEntryTest, BadEntriesNameTheFieldAndValue) {
  EXPECT_THAT(ParseError("[1]"), HasSubstr("entry: must be a JSON object"));
  EXPECT_THAT(ParseError(R"({"job_name":"j","job_start_time":"noon"})"),
              HasSubstr("job_start_time: must be POSIX seconds (a number > "
                        "0), got \"noon\""));
  EXPECT_THAT(ParseError(R"({"job_name":"j","job_end_time":-5})"),
              HasSubstr("job_end_time: must be POSIX seconds"));
  EXPECT_THAT(ParseError(R"({"job_name":"j","step_start_time":1700000000})"),
              HasSubstr("step_count: missing"));
  EXPECT_THAT(ParseError(R"({"job_name":"j","step_count":-1,)"
                         R"("step_start_time":1700000000})"),
              HasSubstr("step_count: must be an integer >= 0, got -1"));
  EXPECT_THAT(ParseError(R"({"job_name":"j","step_count":1.5,)"
                         R"("step_start_time":1700000000})"),
              HasSubstr("step_count: must be an integer >= 0, got 1.5"));
  EXPECT_THAT(ParseError(R"({"job_name":"j","job_start_time":1700000000,)"
                         R"("job_end_time":1700000001})"),
              HasSubstr("job_end_time: an entry holds one time field, this "
                        "one also has job_start_time"));
  EXPECT_THAT(ParseError(R"({"job_name":7,"job_start_time":1700000000})"),
              HasSubstr("job_name: must be a non-empty string, got 7"));
  EXPECT_THAT(ParseError(R"({"job_name":"j","message":"hello"})"),
              HasSubstr("not a goodput or checkpoint entry (no "
                        "step_start_time, job_start_time, ... or "
                        "event_type); its fields: job_name, message"));
  EXPECT_THAT(
      ParseError(R"({"job_name":"j","custom_badput_event_start_time":1e9})"),
      HasSubstr("custom_badput_event_type: must be a non-empty string"));
  EXPECT_THAT(ParseError(R"({"jsonPayload":"text"})"),
              HasSubstr("jsonPayload: must be a JSON object"));
}

TEST(ParseMlgmEntryTest, BadCheckpointRecordsNameTheField) {
  EXPECT_THAT(ParseError(R"({"event_type":"delete","step":1})"),
              HasSubstr("event_type: must be save, restore or "
                        "emergency_restore, got \"delete\""));
  EXPECT_THAT(ParseError(R"({"event_type":"save",)"
                         R"("checkpoint_manager_blocking_start_time":1e9})"),
              HasSubstr("step: missing"));
  EXPECT_THAT(ParseError(R"({"event_type":"save","step":1,)"
                         R"("checkpoint_manager_blocking_start_time":1e9,)"
                         R"("checkpoint_manager_blocking_duration_secs":-2})"),
              HasSubstr("checkpoint_manager_blocking_duration_secs: must be "
                        "seconds >= 0, got -2"));
  EXPECT_THAT(ParseError(R"({"event_type":"restore","step":1})"),
              HasSubstr("checkpoint_manager_start_time: missing, and no "
                        "LogEntry timestamp"));
  EXPECT_THAT(ParseError(R"({"timestamp":"yesterday","jsonPayload":)"
                         R"({"event_type":"restore","step":1}})"),
              HasSubstr("timestamp: must be an RFC 3339 string"));
}

}  // namespace
}  // namespace goodput::importer
