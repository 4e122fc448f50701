// MlgmConverter on hand-written ml-goodput-measurement logs: the exact
// events each entry kind becomes (docs/migrating.md has the mapping).
#include "importer/import_mlgm.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "codec/line_decoder.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "importer/import_mlgm_json.h"

namespace goodput::importer {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

// Times in the logs below are seconds after T0 = 1700000000
// (2023-11-14T22:13:20Z); "T+n" in comments.
std::string At(int seconds) { return absl::StrCat(1700000000 + seconds); }

std::string Rec(const std::string& field, int t, const std::string& extra = "",
                const std::string& job = "j") {
  return absl::StrCat(R"({"job_name":")", job, R"(",)", extra,
                      extra.empty() ? "" : ",", R"(")", field, R"(":)", At(t),
                      "}");
}
std::string StepStart(int step, int t) {
  return Rec("step_start_time", t, absl::StrCat(R"("step_count":)", step));
}
std::string Custom(const std::string& edge, const std::string& type, int t) {
  return Rec(absl::StrCat("custom_badput_event_", edge, "_time"), t,
             absl::StrCat(R"("custom_badput_event_type":")", type, R"(")"));
}
// ElasticGoodputRecorder's records.
std::string Slices(int available, int total, int t) {
  return Rec("elastic_slice_counts_timestamp", t,
             absl::StrCat(R"("active_slices":1,"total_slices":)", total,
                          R"(,"available_slices":)", available));
}
std::string Wait(const std::string& edge, const std::string& type, int t) {
  return Rec(absl::StrCat("elastic_wait_", edge, "_time"), t,
             absl::StrCat(R"("elastic_wait_event_type":")", type, R"(")"));
}
std::string Save(int step, int t, int seconds) {
  return absl::StrCat(
      R"({"job_name":"j","event_type":"save","step":)", step,
      R"(,"directory":"gs://b/ckpt","checkpoint_manager_blocking_start_time":)",
      At(t), R"(,"checkpoint_manager_blocking_duration_secs":)", seconds, "}");
}
std::string Restore(int step, int t, int seconds) {
  return absl::StrCat(R"({"job_name":"j","event_type":"restore","step":)", step,
                      R"(,"checkpoint_manager_start_time":)", At(t),
                      R"(,"checkpoint_manager_duration_secs":)", seconds, "}");
}

// "+SECONDS attempt BODY" per event, e.g. "+10 mlgm-1 step 3"; short
// enough to read a whole timeline in one EXPECT.
std::string Brief(const v1::Event& e) {
  std::string body;
  switch (e.body_case()) {
    case v1::Event::kJobSubmitted:
      body = absl::StrCat("submitted ", e.job_submitted().chips(), " ",
                          e.job_submitted().accelerator());
      if (e.job_submitted().has_min_chips())
        absl::StrAppend(&body, " min ", e.job_submitted().min_chips());
      break;
    case v1::Event::kAllocation:
      body = absl::StrCat("allocation ", e.allocation().chips());
      break;
    case v1::Event::kStarted:
      body = "started";
      break;
    case v1::Event::kActivity:
      body = v1::Activity::Kind_Name(e.activity().kind());
      if (!e.activity().name().empty())
        absl::StrAppend(&body, " ", e.activity().name());
      if (e.activity().has_step())
        absl::StrAppend(&body, " ", e.activity().step());
      break;
    case v1::Event::kStep:
      body = absl::StrCat("step ", e.step().step());
      break;
    case v1::Event::kCheckpoint:
      body = absl::StrCat("checkpoint ", e.checkpoint().step());
      break;
    case v1::Event::kJobEnded:
      body = absl::StrCat("ended ",
                          v1::JobEnded::Outcome_Name(e.job_ended().outcome()));
      break;
    default:
      body = "?";
  }
  std::string who = e.attempt().empty() ? e.job_id() : e.attempt();
  return absl::StrCat("+", e.time().seconds() - 1700000000, " ", who, " ",
                      body);
}

struct Converted {
  std::vector<std::string> events;  // Brief() of each
  std::vector<std::string> errors;
  MlgmResult result;
};

Converted Convert(const std::vector<std::string>& lines,
                  MlgmOptions options = {}) {
  MlgmConverter converter(options);
  for (size_t i = 0; i < lines.size(); ++i) {
    converter.AddLine(lines[i], absl::StrCat("log:", i + 1));
  }
  absl::StatusOr<MlgmResult> result = converter.Finish();
  EXPECT_TRUE(result.ok()) << result.status();
  Converted out;
  if (!result.ok()) return out;
  for (const v1::Event& e : result->events) out.events.push_back(Brief(e));
  out.errors = result->errors;
  out.result = *std::move(result);
  return out;
}

TEST(MlgmConverterTest, CleanRunMapsEveryRecorderSpan) {
  Converted c = Convert({
      Rec("job_start_time", 0),
      Rec("tpu_init_start_time", 5),
      Rec("tpu_init_end_time", 15),
      Rec("training_prep_start_time", 15),
      Restore(0, 20, 5),
      Rec("training_prep_end_time", 30),
      Rec("data_loading_start_time", 30),
      Rec("data_loading_end_time", 40),
      StepStart(1, 40),
      StepStart(2, 100),
      Custom("start", "eval", 105),
      Custom("end", "eval", 115),
      StepStart(3, 120),
      Rec("job_end_time", 130),
  });
  EXPECT_THAT(c.errors, IsEmpty());
  EXPECT_THAT(
      c.events,
      ElementsAre("+0 mlgm-1 started", "+0 mlgm-1 IDLE", "+5 mlgm-1 INIT",
                  "+15 mlgm-1 PREP", "+20 mlgm-1 RESTORE 0", "+25 mlgm-1 PREP",
                  "+30 mlgm-1 DATA_WAIT", "+40 mlgm-1 TRAINING",
                  "+100 mlgm-1 step 1", "+105 mlgm-1 CUSTOM eval",
                  "+115 mlgm-1 TRAINING", "+120 mlgm-1 step 2",
                  "+130 mlgm-1 step 3", "+130 j ended SUCCEEDED"));
}

TEST(MlgmConverterTest, ChipsGiveAJobSubmittedFirst) {
  MlgmOptions options;
  options.chips = 16;
  options.accelerator = "tpu-v5p";
  Converted c = Convert({Rec("job_start_time", 0), StepStart(1, 0)}, options);
  EXPECT_THAT(c.events, ElementsAre("+0 j submitted 16 tpu-v5p",
                                    "+0 mlgm-1 started", "+0 mlgm-1 TRAINING"));
}

// Rule 14: --chips scaled by available / total slices; min_chips one
// slice; active_slices is not read.
TEST(MlgmConverterTest, SliceCountsBecomeAllocationsOfWholeSlices) {
  MlgmOptions options;
  options.chips = 16;
  Converted c = Convert({Rec("job_start_time", 0), Slices(4, 4, 0),
                         StepStart(1, 0), Slices(3, 4, 10), Slices(0, 4, 20)},
                        options);
  EXPECT_THAT(c.errors, IsEmpty());
  EXPECT_THAT(c.events,
              ElementsAre("+0 j submitted 16  min 4", "+0 mlgm-1 started",
                          "+0 j allocation 16", "+0 mlgm-1 TRAINING",
                          "+10 j allocation 12", "+20 j allocation 0"));
  EXPECT_EQ(c.result.slice_allocations, 3);
  EXPECT_THAT(c.result.dropped, IsEmpty());
  options.min_chips = 8;  // --min_chips wins
  EXPECT_EQ(Convert({Slices(4, 4, 0)}, options).events.front(),
            "+0 j submitted 16  min 8");
}

TEST(MlgmConverterTest, SliceCountsThatDoNotMapAreDroppedByReason) {
  Converted none = Convert({Rec("job_start_time", 0), Slices(3, 4, 5)});
  EXPECT_THAT(none.events, ElementsAre("+0 mlgm-1 started", "+0 mlgm-1 IDLE"));
  EXPECT_EQ(none.result.dropped.at("no --chips to scale the slice counts by"),
            1);
  MlgmOptions options;
  options.chips = 10;  // not a multiple of 4 slices: not elastic either
  Converted odd = Convert({Slices(4, 4, 0), Slices(3, 4, 5)}, options);
  EXPECT_THAT(odd.events, ElementsAre("+0 j submitted 10 "));
  EXPECT_EQ(odd.result.dropped.at("--chips is not a multiple of total_slices"),
            2);
  options.chips = 16;
  Converted changed = Convert({Slices(4, 4, 0), Slices(2, 2, 5)}, options);
  EXPECT_THAT(changed.events,
              ElementsAre("+0 j submitted 16  min 4", "+0 j allocation 16"));
  EXPECT_EQ(changed.result.slice_allocations, 1);
  EXPECT_EQ(changed.result.dropped.at(
                "total_slices changed (the requested chips cannot)"),
            1);
}

// Waits keep the library's bucket as a CUSTOM name; a reinitialization is
// RESHARD, also over an accelerator init inside it (the library counts
// the overlap as reinitialization only), and the init after it is INIT.
TEST(MlgmConverterTest, ElasticWaitsAreCustomAndReinitializationIsReshard) {
  Converted c = Convert({
      Rec("job_start_time", 0),
      Wait("start", "slice_down", 0),
      Wait("end", "slice_down", 5),
      Rec("elastic_reinit_start_time", 5),
      Rec("tpu_init_start_time", 8),
      Rec("elastic_reinit_end_time", 12),
      Rec("tpu_init_end_time", 15),
      Wait("start", "Elastic_Scale_Up", 15),
      Wait("end", "Elastic_Scale_Up", 17),
      Rec("elastic_wait_start_time", 17),  // no type: "unknown"
      Rec("elastic_wait_end_time", 18),
  });
  EXPECT_THAT(c.errors, IsEmpty());
  EXPECT_THAT(c.events, ElementsAre("+0 mlgm-1 started",
                                    "+0 mlgm-1 CUSTOM "
                                    "ELASTIC_SLICE_DOWN",
                                    "+5 mlgm-1 RESHARD", "+12 mlgm-1 INIT",
                                    "+15 mlgm-1 CUSTOM ELASTIC_SCALE_UP",
                                    "+17 mlgm-1 CUSTOM ELASTIC_SLICE_DOWN",
                                    "+18 mlgm-1 IDLE"));
  Converted bad =
      Convert({Rec("job_start_time", 0), Wait("start", "slice_down", 1),
               Wait("end", "scale_up", 2)});
  EXPECT_THAT(bad.errors,
              ElementsAre(HasSubstr("log:3: elastic_wait_end_time: ends a "
                                    "span that was not started")));
}

// Rule 14 makes the step in flight at a resize lost, so the step start
// after it begins a step, though its number goes back: not a restart.
TEST(MlgmConverterTest, StepRedoneAfterAResizeIsNotARestart) {
  MlgmOptions options;
  options.chips = 8;
  Converted c =
      Convert({Rec("job_start_time", 0), StepStart(1, 0), StepStart(2, 10),
               Slices(1, 2, 15), StepStart(2, 20), StepStart(3, 30)},
              options);
  EXPECT_THAT(c.events,
              ElementsAre("+0 j submitted 8  min 4", "+0 mlgm-1 started",
                          "+0 mlgm-1 TRAINING", "+10 mlgm-1 step 1",
                          "+15 j allocation 4", "+30 mlgm-1 step 2"));
  // Without a resize the same log is an unlogged restart.
  options.chips = 0;
  Converted plain = Convert({Rec("job_start_time", 0), StepStart(1, 0),
                             StepStart(2, 10), StepStart(2, 20)},
                            options);
  EXPECT_THAT(plain.events, ::testing::Contains("+20 mlgm-2 started"));
}

TEST(MlgmConverterTest, SaveCompletesItsStepAndIsDurableAtItsEnd) {
  Converted c = Convert({
      Rec("job_start_time", 0),
      StepStart(1, 0),
      StepStart(2, 10),
      Save(2, 18, 4),  // step 2 done at T+18; blocking until T+22
      StepStart(3, 22),
  });
  EXPECT_THAT(c.events,
              ElementsAre("+0 mlgm-1 started", "+0 mlgm-1 TRAINING",
                          "+10 mlgm-1 step 1", "+18 mlgm-1 step 2",
                          "+18 mlgm-1 CHECKPOINT", "+22 mlgm-1 checkpoint 2",
                          "+22 mlgm-1 TRAINING"));
}

TEST(MlgmConverterTest, DataLoadingInTheLoopIsStepTimeByDefault) {
  std::vector<std::string> log = {
      Rec("job_start_time", 0),
      Rec("data_loading_start_time", 0),
      Rec("data_loading_end_time", 5),
      StepStart(1, 5),
      Rec("data_loading_start_time", 15),
      Rec("data_loading_end_time", 17),
      StepStart(2, 17),
      StepStart(3, 27),
  };
  EXPECT_THAT(Convert(log).events,
              ElementsAre("+0 mlgm-1 started", "+0 mlgm-1 DATA_WAIT",
                          "+5 mlgm-1 TRAINING", "+17 mlgm-1 step 1",
                          "+27 mlgm-1 step 2"));
  MlgmOptions blocking;
  blocking.blocking_data_loading = true;
  EXPECT_THAT(Convert(log, blocking).events,
              ElementsAre("+0 mlgm-1 started", "+0 mlgm-1 DATA_WAIT",
                          "+5 mlgm-1 TRAINING", "+15 mlgm-1 DATA_WAIT",
                          "+17 mlgm-1 step 1", "+17 mlgm-1 TRAINING",
                          "+27 mlgm-1 step 2"));
}

TEST(MlgmConverterTest, JobStartAfterStepsIsANewAttempt) {
  Converted c = Convert({
      Rec("job_start_time", 0),
      StepStart(1, 0),
      StepStart(2, 10),
      Rec("job_start_time", 60),
      Restore(1, 65, 5),
      StepStart(2, 70),
      StepStart(3, 80),
  });
  EXPECT_THAT(c.events,
              ElementsAre("+0 mlgm-1 started", "+0 mlgm-1 TRAINING",
                          "+10 mlgm-1 step 1", "+60 mlgm-2 started",
                          "+60 mlgm-2 IDLE", "+65 mlgm-2 RESTORE 1",
                          "+70 mlgm-2 TRAINING", "+80 mlgm-2 step 2"));
}

TEST(MlgmConverterTest, StepNumberGoingBackIsAnUnloggedRestart) {
  Converted c = Convert({
      Rec("job_start_time", 0),
      StepStart(1, 0),
      StepStart(2, 10),
      StepStart(3, 20),
      StepStart(2, 50),
      StepStart(3, 60),
  });
  EXPECT_THAT(c.events, ElementsAre("+0 mlgm-1 started", "+0 mlgm-1 TRAINING",
                                    "+10 mlgm-1 step 1", "+20 mlgm-1 step 2",
                                    "+50 mlgm-2 started", "+50 mlgm-2 TRAINING",
                                    "+60 mlgm-2 step 2"));
}

TEST(MlgmConverterTest, StepNumberJumpingAheadIsAnUnloggedRestart) {
  Converted c = Convert({StepStart(1, 0), StepStart(2, 10), StepStart(100, 50),
                         StepStart(101, 60)});
  EXPECT_THAT(c.events,
              ElementsAre("+0 mlgm-1 started", "+0 mlgm-1 TRAINING",
                          "+10 mlgm-1 step 1", "+50 mlgm-2 started",
                          "+50 mlgm-2 TRAINING", "+60 mlgm-2 step 100"));
}

TEST(MlgmConverterTest, EntriesBeforeJobStartBelongToItsAttempt) {
  Converted c =
      Convert({Rec("tpu_init_start_time", 0), Rec("tpu_init_end_time", 10),
               Rec("job_start_time", 12), StepStart(1, 20)});
  EXPECT_THAT(c.events, ElementsAre("+0 mlgm-1 started", "+0 mlgm-1 INIT",
                                    "+10 mlgm-1 IDLE", "+20 mlgm-1 TRAINING"));
}

TEST(MlgmConverterTest, OnlyTheLastJobEndEndsTheJob) {
  Converted c = Convert({
      Rec("job_start_time", 0),
      StepStart(1, 0),
      Rec("job_end_time", 10),
      Rec("job_start_time", 100),
      StepStart(2, 100),
      Rec("job_end_time", 110),
  });
  EXPECT_THAT(c.events,
              ElementsAre("+0 mlgm-1 started", "+0 mlgm-1 TRAINING",
                          "+10 mlgm-1 step 1", "+100 mlgm-2 started",
                          "+100 mlgm-2 TRAINING", "+110 mlgm-2 step 2",
                          "+110 j ended SUCCEEDED"));
}

TEST(MlgmConverterTest, NestedAndOverlappingSpansRestoreTheOuterActivity) {
  Converted c = Convert({
      Rec("job_start_time", 0),
      Rec("training_prep_start_time", 0),
      Custom("start", "sdc_check", 5),
      Rec("data_loading_start_time", 6),
      Custom("end", "SDC_CHECK", 8),  // types match case-insensitively
      Rec("data_loading_end_time", 9),
      Rec("training_prep_end_time", 10),
  });
  EXPECT_THAT(c.errors, IsEmpty());
  EXPECT_THAT(c.events,
              ElementsAre("+0 mlgm-1 started", "+0 mlgm-1 PREP",
                          "+5 mlgm-1 CUSTOM sdc_check", "+6 mlgm-1 DATA_WAIT",
                          "+9 mlgm-1 PREP", "+10 mlgm-1 IDLE"));
}

TEST(MlgmConverterTest, StepStartSupersedesSpansLeftOpen) {
  Converted c = Convert({Rec("job_start_time", 0),
                         Rec("training_prep_start_time", 0), StepStart(1, 10),
                         Rec("training_prep_end_time", 15), StepStart(2, 20)});
  EXPECT_THAT(c.errors, IsEmpty());
  EXPECT_THAT(c.events,
              ElementsAre("+0 mlgm-1 started", "+0 mlgm-1 PREP",
                          "+10 mlgm-1 TRAINING", "+20 mlgm-1 step 1"));
}

TEST(MlgmConverterTest, InputOrderDoesNotMatterOnlyTimes) {
  std::vector<std::string> log = {Rec("job_start_time", 0), StepStart(1, 0),
                                  StepStart(2, 10), Rec("job_end_time", 20)};
  std::vector<std::string> shuffled = {log[3], log[1], log[0], log[2]};
  EXPECT_EQ(Convert(shuffled).events, Convert(log).events);
}

TEST(MlgmConverterTest, RepeatedEntriesAreAppliedOnce) {
  std::vector<std::string> log = {Rec("job_start_time", 0), StepStart(1, 0),
                                  Save(1, 10, 2), StepStart(2, 12),
                                  Rec("job_end_time", 20)};
  std::vector<std::string> twice = log;
  twice.insert(twice.end(), log.begin(), log.end());
  Converted once = Convert(log);
  Converted c = Convert(twice);
  EXPECT_THAT(c.errors, IsEmpty());
  EXPECT_EQ(c.events, once.events);
  EXPECT_EQ(c.result.duplicates, 6);  // the save record is two marks
  EXPECT_EQ(once.result.duplicates, 0);
}

TEST(MlgmConverterTest, EntriesAfterTheLastJobEndAreErrors) {
  Converted c = Convert({Rec("job_start_time", 0), StepStart(1, 0),
                         Rec("job_end_time", 10), StepStart(2, 10),
                         Custom("start", "eval", 11)});
  EXPECT_THAT(c.errors,
              ElementsAre("log:5: entry: at 2023-11-14T22:13:31Z, later than "
                          "the job's last job_end_time 2023-11-14T22:13:30Z"));
  // The step start at the end's own instant comes before the end.
  EXPECT_THAT(c.events, ElementsAre("+0 mlgm-1 started", "+0 mlgm-1 TRAINING",
                                    "+10 mlgm-1 step 1", "+10 mlgm-1 step 2",
                                    "+10 j ended SUCCEEDED"));
}

TEST(MlgmConverterTest, EndWithoutStartIsAnErrorNamingTheLine) {
  Converted c = Convert({Rec("job_start_time", 0),
                         Rec("data_loading_end_time", 5), StepStart(1, 6)});
  EXPECT_THAT(c.errors,
              ElementsAre("log:2: data_loading_end_time: ends a span that "
                          "was not started in this attempt"));
  EXPECT_EQ(c.result.bad, 1);
  EXPECT_EQ(c.result.entries, 3);
  EXPECT_THAT(c.events, ElementsAre("+0 mlgm-1 started", "+0 mlgm-1 IDLE",
                                    "+6 mlgm-1 TRAINING"));
}

TEST(MlgmConverterTest, BadLinesAreReportedInInputOrder) {
  Converted c =
      Convert({"{not json", "", Rec("job_start_time", 0),
               R"({"job_name":"j","step_count":"x","step_start_time":1})",
               R"({"job_start_time":1700000000})"});
  EXPECT_THAT(c.errors,
              ElementsAre("log:1: entry: not a JSON object (invalid JSON)",
                          HasSubstr("log:4: step_count: must be an integer"),
                          "log:5: job_name: missing (pass --job_id=ID to "
                          "name the job)"));
  EXPECT_EQ(c.result.entries, 4);  // the blank line is not an entry
}

TEST(MlgmConverterTest, JobsAreConvertedSeparatelyInOrderOfAppearance) {
  MlgmConverter converter({});
  converter.AddLine(Rec("job_start_time", 5, "", "b"), "log:1");
  converter.AddLine(Rec("job_start_time", 0, "", "a"), "log:2");
  converter.AddLine(Rec("job_end_time", 9, "", "b"), "log:3");
  absl::StatusOr<MlgmResult> result = converter.Finish();
  ASSERT_TRUE(result.ok());
  std::vector<std::string> events;
  for (const v1::Event& e : result->events) events.push_back(Brief(e));
  EXPECT_THAT(events, ElementsAre("+5 mlgm-1 started", "+5 mlgm-1 IDLE",
                                  "+9 b ended SUCCEEDED", "+0 mlgm-1 started",
                                  "+0 mlgm-1 IDLE"));
  EXPECT_EQ(result->events[0].job_id(), "b");
  EXPECT_EQ(result->events[3].job_id(), "a");
}

TEST(MlgmConverterTest, JobIdNamesEntriesButOnlyOneJob) {
  MlgmOptions options;
  options.job_id = "renamed";
  Converted c = Convert(
      {R"({"job_start_time":1700000000})", Rec("job_end_time", 10)}, options);
  EXPECT_THAT(c.errors, IsEmpty());
  for (const v1::Event& e : c.result.events) EXPECT_EQ(e.job_id(), "renamed");

  MlgmConverter two(options);
  two.AddLine(Rec("job_start_time", 0, "", "a"), "log:1");
  two.AddLine(Rec("job_start_time", 0, "", "b"), "log:2");
  absl::StatusOr<MlgmResult> result = two.Finish();
  ASSERT_FALSE(result.ok());
  EXPECT_THAT(result.status().message(),
              HasSubstr("--job_id: the entries name 2 jobs (a, b)"));
}

TEST(MlgmConverterTest, WrittenLinesDecodeToTheSameEvents) {
  MlgmOptions options;
  options.chips = 8;
  options.accelerator = "tpu-v5e";
  Converted c = Convert(
      {Rec("job_start_time", 0), Restore(3, 1, 2), Custom("start", "eval", 4),
       Custom("end", "eval", 5), StepStart(4, 6), Save(4, 7, 1),
       StepStart(5, 9), Rec("job_end_time", 10)},
      options);
  ASSERT_THAT(c.errors, IsEmpty());
  ASSERT_GT(c.result.events.size(), 10u);
  codec::LineDecoder decoder;
  for (const v1::Event& event : c.result.events) {
    std::string line = EventJsonLine(event);
    v1::Event decoded;
    ASSERT_TRUE(decoder.DecodeLine(line, &decoded).ok()) << line;
    EXPECT_EQ(decoded.DebugString(), event.DebugString()) << line;
  }
  EXPECT_EQ(EventJsonLine(c.result.events[0]),
            R"({"time":"2023-11-14T22:13:20Z","job_id":"j","job_submitted":)"
            R"({"chips":8,"accelerator":"tpu-v5e","workload":"TRAINING"}})");
}

}  // namespace
}  // namespace goodput::importer
