#include "report/replay.h"

#include <algorithm>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "core/category.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "report/report_json.h"
#include "report/test_util.h"

namespace goodput::report {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::SizeIs;
using ::testing::StartsWith;

constexpr int64_t kSecond = 1'000'000'000;
constexpr int64_t kTen = 1795341600 * kSecond;  // 2026-11-22T10:00:00Z

using ::goodput::report::testing::kSimpleTimeline;
constexpr const char* kSimple = kSimpleTimeline;

// Two jobs and a host; no two events of one job share time and kind, so
// any line order has one apply order.
const char kTwoJobs[] =
    R"({"time":"2026-11-22T10:00:00Z","job_id":"t","attempt":"1","job_submitted":{"chips":16,"accelerator":"tpu-v5p","workload":"TRAINING","framework":"jax","step_flops":1e15}}
{"time":"2026-11-22T10:01:00Z","job_id":"t","attempt":"1","allocation":{"chips":16}}
{"time":"2026-11-22T10:01:00Z","job_id":"t","attempt":"1","started":{}}
{"time":"2026-11-22T10:01:30Z","job_id":"t","attempt":"1","activity":{"kind":"COMPILE"}}
{"time":"2026-11-22T10:02:00Z","job_id":"t","attempt":"1","activity":{"kind":"TRAINING"}}
{"time":"2026-11-22T10:03:00Z","job_id":"t","attempt":"1","step":{"step":10}}
{"time":"2026-11-22T10:04:00Z","job_id":"t","attempt":"1","step":{"step":20}}
{"time":"2026-11-22T10:04:00Z","job_id":"t","attempt":"1","checkpoint":{"step":20}}
{"time":"2026-11-22T10:05:00Z","job_id":"t","attempt":"1","step":{"step":30}}
{"time":"2026-11-22T10:05:30Z","job_id":"t","attempt":"1","interruption":{"reason":"PREEMPTED"}}
{"time":"2026-11-22T10:07:00Z","job_id":"t","attempt":"2","started":{}}
{"time":"2026-11-22T10:07:10Z","job_id":"t","attempt":"2","activity":{"kind":"RESTORE","step":20}}
{"time":"2026-11-22T10:07:40Z","job_id":"t","attempt":"2","activity":{"kind":"TRAINING"}}
{"time":"2026-11-22T10:08:40Z","job_id":"t","attempt":"2","step":{"step":30}}
{"time":"2026-11-22T10:02:00Z","job_id":"s","job_submitted":{"chips":4,"accelerator":"h100","workload":"SERVING","framework":"pytorch","labels":{"team":"ads"}}}
{"time":"2026-11-22T10:03:00Z","job_id":"s","activity":{"kind":"SERVING"}}
{"time":"2026-11-22T10:04:00Z","job_id":"s","step":{"step":1,"idle_seconds":20}}
{"time":"2026-11-22T10:06:00Z","job_id":"s","step":{"step":2,"idle_seconds":5}}
{"time":"2026-11-22T10:00:00Z","host":"h1","heartbeat":{"chips":16,"accelerator":"tpu-v5p"}}
{"time":"2026-11-22T10:01:00Z","host":"h1","heartbeat":{"chips":16,"accelerator":"tpu-v5p"}}
{"time":"2026-11-22T10:00:30Z","host":"h2","heartbeat":{"chips":4,"accelerator":"h100"}}
{"time":"2026-11-22T10:05:30Z","host":"h2","heartbeat":{"chips":4,"accelerator":"h100"}}
)";

struct Input {
  std::string name;
  std::string text;
};

ReplayResult ReplayOrDie(const std::vector<Input>& inputs,
                         ReplayOptions options = {}) {
  Replayer replayer(std::move(options));
  for (const Input& input : inputs) {
    std::istringstream in(input.text);
    EXPECT_TRUE(replayer.AddInput(in, input.name).ok());
  }
  absl::StatusOr<ReplayResult> result = replayer.Finish();
  EXPECT_TRUE(result.ok()) << result.status();
  return result.ok() ? *std::move(result) : ReplayResult{};
}

std::string Json(const ReplayResult& result) {
  absl::StatusOr<std::string> text = WriteReportJson(result.report);
  EXPECT_TRUE(text.ok());
  return text.ok() ? *text : "";
}

int64_t Nanos(const core::JobReport& job, core::Category c) {
  return job.nanos[core::Index(c)];
}

std::vector<std::string> Lines(const std::string& text) {
  return absl::StrSplit(text, '\n', absl::SkipEmpty());
}

TEST(ReplayerTest, SimpleTimelineByHand) {
  ReplayResult result = ReplayOrDie({{"a.jsonl", kSimple}});
  EXPECT_THAT(result.errors, SizeIs(0));
  EXPECT_EQ(result.stats.lines, 9);
  EXPECT_EQ(result.stats.events, 9);
  EXPECT_EQ(result.report.as_of_ns, kTen + 3600 * kSecond);
  ASSERT_THAT(result.report.jobs, SizeIs(1));
  const core::JobReport& job = result.report.jobs[0];
  EXPECT_EQ(job.job_id, "a");
  EXPECT_EQ(job.chips, 8);
  EXPECT_EQ(job.state, core::JobStateKind::kEnded);
  EXPECT_EQ(job.total_ns, 3600 * kSecond);
  EXPECT_EQ(Nanos(job, core::Category::kQueued), 600 * kSecond);
  EXPECT_EQ(Nanos(job, core::Category::kProductive), 3000 * kSecond);
  EXPECT_EQ(job.last_step, 5);
  EXPECT_EQ(job.last_checkpoint, 5);  // SUCCEEDED: all durable (rule 5)
  EXPECT_EQ(job.lost_steps, 0);
  EXPECT_EQ(job.interruptions, 0);
}

TEST(ReplayerTest, SkipsBlankLinesAndRecordsBadOnesWithPosition) {
  ReplayResult result = ReplayOrDie(
      {{"in.jsonl", std::string(Lines(kSimple)[0]) + "\n\n  \n{\"time\": 5}\n" +
                        "{\"time\":\"2026-11-22T10:00:01Z\",\"job_id\":\"a\","
                        "\"activity\":{\"kind\":\"NAPPING\"}}\n"}});
  ASSERT_THAT(result.errors, SizeIs(2));
  EXPECT_THAT(result.errors[0], StartsWith("in.jsonl:4: "));
  EXPECT_THAT(result.errors[1], StartsWith("in.jsonl:5: "));
  EXPECT_EQ(result.stats.lines, 5);
  EXPECT_EQ(result.stats.events, 1);
  EXPECT_EQ(result.stats.bad, 2);
  EXPECT_THAT(result.report.jobs, SizeIs(1));
}

TEST(ReplayerTest, CrLfLineEndingsAreAccepted) {
  std::string text = absl::StrJoin(Lines(kSimple), "\r\n") + "\r\n";
  ReplayResult result = ReplayOrDie({{"crlf", text}});
  EXPECT_THAT(result.errors, SizeIs(0));
  EXPECT_EQ(Json(result), Json(ReplayOrDie({{"lf", kSimple}})));
}

TEST(ReplayerTest, ApplyErrorsMergeWithDecodeErrorsInInputOrder) {
  // Line 2 follows job_ended in time (rejected when applied, last);
  // line 3 does not decode (rejected first).
  std::vector<std::string> lines = Lines(kSimple);
  std::string text =
      lines[0] + "\n" +
      R"({"time":"2026-11-22T11:30:00Z","job_id":"a","step":{"step":9}})" +
      "\nnot json\n" + absl::StrJoin(lines.begin() + 1, lines.end(), "\n");
  ReplayResult result = ReplayOrDie({{"x", "\n"}, {"y.jsonl", text}});
  ASSERT_THAT(result.errors, SizeIs(2));
  EXPECT_THAT(result.errors[0], StartsWith("y.jsonl:2: "));
  EXPECT_THAT(result.errors[1], StartsWith("y.jsonl:3: "));
  EXPECT_EQ(result.stats.bad, 2);
  // The rejected event still counts for the default as-of (latest event).
  EXPECT_EQ(result.report.as_of_ns, kTen + 90 * 60 * kSecond);
}

TEST(ReplayerTest, AsOfExcludesLaterEvents) {
  ReplayOptions options;
  options.as_of_ns = kTen + 30 * 60 * kSecond;
  ReplayResult result = ReplayOrDie({{"a", kSimple}}, options);
  EXPECT_EQ(result.stats.after_as_of, 4);  // steps 3-5, job_ended
  EXPECT_EQ(result.report.as_of_ns, *options.as_of_ns);
  ASSERT_THAT(result.report.jobs, SizeIs(1));
  const core::JobReport& job = result.report.jobs[0];
  EXPECT_EQ(job.state, core::JobStateKind::kRunning);
  EXPECT_EQ(job.total_ns, 1800 * kSecond);
  EXPECT_EQ(Nanos(job, core::Category::kQueued), 600 * kSecond);
  EXPECT_EQ(job.last_step, 2);
}

TEST(ReplayerTest, NoEventsReportsAsOfZero) {
  ReplayResult result = ReplayOrDie({{"empty", ""}});
  EXPECT_EQ(result.report.as_of_ns, 0);
  EXPECT_THAT(result.report.jobs, SizeIs(0));
  EXPECT_FALSE(result.report.since_ns.has_value());
}

TEST(ReplayerTest, SinceIsReportedAndWindowsTheLifetime) {
  ReplayOptions options;
  options.config.since_ns = kTen + 50 * 60 * kSecond;
  ReplayResult result = ReplayOrDie({{"a", kSimple}}, options);
  EXPECT_EQ(result.report.since_ns, options.config.since_ns);
  ASSERT_THAT(result.report.jobs, SizeIs(1));
  EXPECT_EQ(result.report.jobs[0].total_ns, 600 * kSecond);
  EXPECT_EQ(Nanos(result.report.jobs[0], core::Category::kQueued), 0);
}

TEST(ReplayerTest, SinceAfterAsOfFails) {
  ReplayOptions options;
  options.config.since_ns = kTen + 2 * 3600 * kSecond;
  Replayer replayer(options);
  std::istringstream in(kSimple);
  ASSERT_TRUE(replayer.AddInput(in, "a").ok());
  absl::StatusOr<ReplayResult> result = replayer.Finish();
  ASSERT_FALSE(result.ok());
  EXPECT_THAT(result.status().message(), HasSubstr("is after as-of"));
}

TEST(ReplayerTest, FinishTwiceFails) {
  Replayer replayer({});
  EXPECT_TRUE(replayer.Finish().ok());
  EXPECT_FALSE(replayer.Finish().ok());
}

TEST(ReplayerTest, DuplicatesAreCountedNotErrors) {
  std::string text = kTwoJobs;
  text +=
      R"({"time":"2026-11-22T10:08:50Z","job_id":"t","attempt":"2","step":{"step":30}})"
      "\n";
  ReplayResult result = ReplayOrDie({{"d", text}});
  EXPECT_THAT(result.errors, SizeIs(0));
  EXPECT_EQ(result.stats.duplicates, 1);
}

TEST(ReplayerTest, ChunkedInputGivesIdenticalJson) {
  std::string whole = Json(ReplayOrDie({{"all", kTwoJobs}}));
  std::vector<std::string> lines = Lines(kTwoJobs);
  for (size_t cut = 0; cut <= lines.size(); ++cut) {
    std::string first =
        absl::StrJoin(lines.begin(), lines.begin() + cut, "\n") + "\n";
    std::string second =
        absl::StrJoin(lines.begin() + cut, lines.end(), "\n") + "\n";
    EXPECT_EQ(Json(ReplayOrDie({{"p1", first}, {"p2", second}})), whole)
        << "cut at line " << cut;
  }
}

TEST(ReplayerTest, ShuffledLinesGiveIdenticalJson) {
  std::string expected = Json(ReplayOrDie({{"all", kTwoJobs}}));
  std::vector<std::string> lines = Lines(kTwoJobs);
  std::mt19937 random(42);
  for (int round = 0; round < 20; ++round) {
    std::shuffle(lines.begin(), lines.end(), random);
    EXPECT_EQ(Json(ReplayOrDie({{"s", absl::StrJoin(lines, "\n")}})), expected)
        << "round " << round;
  }
}

TEST(ReplayerTest, TwoJobsStructure) {
  ReplayResult result = ReplayOrDie({{"all", kTwoJobs}});
  EXPECT_THAT(result.errors, SizeIs(0));
  ASSERT_THAT(result.report.jobs, SizeIs(2));
  EXPECT_EQ(result.report.jobs[0].job_id, "s");  // sorted by job_id
  EXPECT_EQ(result.report.jobs[1].job_id, "t");
  EXPECT_EQ(result.report.fleet.jobs, 2);
  EXPECT_TRUE(result.report.fleet.capacity_chip_seconds.has_value());
  for (const core::JobReport& job : result.report.jobs) {
    int64_t sum = 0;
    for (int64_t n : job.nanos) sum += n;
    EXPECT_EQ(sum, job.total_ns) << job.job_id;
  }
}

// Longer than the decoder's arena round (1024 lines): every event applies.
TEST(ReplayerTest, EveryLineOfALongLogApplies) {
  constexpr int kSteps = 1500;
  std::string text =
      R"({"time":"2026-11-22T10:00:00Z","job_id":"j","job_submitted":{"chips":8,"workload":"TRAINING"}}
{"time":"2026-11-22T10:00:00Z","job_id":"j","started":{}}
)";
  for (int i = 1; i <= kSteps; ++i) {
    const std::string time = absl::StrCat(
        "{\"time\":\"2026-11-22T", 10 + i / 3600, ":", (i / 60) % 60 / 10,
        (i / 60) % 10, ":", i % 60 / 10, i % 10, "Z\",\"job_id\":\"j\",");
    absl::StrAppend(&text, time, "\"step\":{\"step\":", i, "}}\n", time,
                    "\"checkpoint\":{\"step\":", i, "}}\n");
  }
  ReplayResult result = ReplayOrDie({{"long", text}});
  EXPECT_THAT(result.errors, SizeIs(0));
  EXPECT_EQ(result.stats.events, 2 * kSteps + 2);
  ASSERT_THAT(result.report.jobs, SizeIs(1));
  EXPECT_EQ(result.report.jobs[0].checkpoints, kSteps);
  EXPECT_EQ(result.report.jobs[0].last_step, kSteps);
  EXPECT_EQ(result.report.as_of_ns, kTen + kSteps * kSecond);
}

// AddInput reads 1 MiB blocks: lines that straddle them, and one longer
// than a block, are read whole; the last line needs no newline.
TEST(ReplayerTest, LinesAcrossReadBlocksAreReadWhole) {
  std::string text;
  for (const std::string& line : Lines(kSimple)) {
    text += std::string(300'000, ' ') + line + "\n";  // JSON whitespace
  }
  text += std::string(1'500'000, 'x');
  ReplayResult result = ReplayOrDie({{"big", text}});
  EXPECT_EQ(result.stats.lines, 10);
  EXPECT_EQ(result.stats.events, 9);
  ASSERT_THAT(result.errors, SizeIs(1));
  EXPECT_THAT(result.errors[0], StartsWith("big:10: "));
  EXPECT_EQ(Json(result), Json(ReplayOrDie({{"simple", kSimple}})));
}

// Plain step lines (codec::DecodePlainStep) replay as the same lines
// decoded by LineDecoder do (a space after "{" sends them there), also
// across 1 MiB read blocks, where a plain step still pending must be added
// before its block is overwritten.
TEST(ReplayerTest, PlainStepLinesReplayAsDecodedOnes) {
  std::string plain;
  for (const char* job : {"a", "bb", "ccc"}) {
    absl::StrAppend(&plain, R"({"time":"2026-11-22T10:00:00Z","job_id":")", job,
                    R"(","job_submitted":{"chips":8,"workload":"TRAINING"}})",
                    "\n", R"({"time":"2026-11-22T10:00:00Z","job_id":")", job,
                    R"(","started":{}})", "\n");
  }
  for (int i = 1; i <= 30'000; ++i) {  // about 2.3 MB
    absl::StrAppend(&plain, R"({"time":"2026-11-22T10:)", 10 + i / 1000, ":",
                    i % 1000 / 100 + 10, ".", i % 100 / 10, i % 10,
                    R"(Z","job_id":")", std::string(1 + i % 3, 'a' + i % 3),
                    R"(","host":"h)", i % 5, R"(","step":{"step":")", i / 3,
                    "\"}}\n");
  }
  std::string decoded;
  for (const std::string& line : Lines(plain)) {
    absl::StrAppend(&decoded, "{ ", line.substr(1), "\n");
  }
  const ReplayResult by_plain = ReplayOrDie({{"p", plain}});
  const ReplayResult by_decoder = ReplayOrDie({{"d", decoded}});
  EXPECT_THAT(by_plain.errors, SizeIs(0));
  EXPECT_EQ(by_plain.stats.events, 30'006);
  ASSERT_THAT(by_plain.report.jobs, SizeIs(3));
  EXPECT_EQ(Json(by_plain), Json(by_decoder));
}

}  // namespace
}  // namespace goodput::report
