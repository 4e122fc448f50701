// Runs the real goodputctl binary (GOODPUTCTL_PATH) on real files in a
// temporary directory: exit codes, stdout/stderr separation, and
// determinism of replay across chunked and shuffled inputs.
#include <sys/wait.h>

#include <algorithm>
#include <cstdlib>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "report/test_util.h"

namespace goodput::cli {
namespace {

using report::testing::ReadFileOrDie;
using report::testing::WriteFileOrDie;
using ::testing::HasSubstr;
using ::testing::IsSupersetOf;
using ::testing::SizeIs;
using ::testing::StartsWith;
using Json = nlohmann::json;

struct RunResult {
  int code;
  std::string out;
  std::string err;
};

using ::goodput::report::testing::kSimpleTimeline;
constexpr const char* kSimple = kSimpleTimeline;

class GoodputctlBinaryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = ::testing::TempDir() + "/goodputctl_XXXXXX";
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override {
    std::system(absl::StrCat("rm -rf '", dir_, "'").c_str());
  }

  // Writes `text` to a file named `name` in the temp dir; returns its path.
  std::string Write(const std::string& name, const std::string& text) {
    std::string path = dir_ + "/" + name;
    WriteFileOrDie(path, text);
    return path;
  }

  // Runs goodputctl with `args` (shell words, already quoted as needed).
  RunResult Goodputctl(const std::string& args,
                       const std::string& stdin_path = "") {
    std::string out = dir_ + "/stdout", err = dir_ + "/stderr";
    std::string command = absl::StrCat(
        "'", GOODPUTCTL_PATH, "' ", args, " >'", out, "' 2>'", err, "'",
        stdin_path.empty() ? " </dev/null"
                           : absl::StrCat(" <'", stdin_path, "'"));
    int status = std::system(command.c_str());
    EXPECT_TRUE(WIFEXITED(status)) << command;
    return {WEXITSTATUS(status), ReadFileOrDie(out), ReadFileOrDie(err)};
  }

  Json ReplayJson(const std::string& args) {
    RunResult run = Goodputctl("replay --json " + args);
    EXPECT_EQ(run.code, 0) << run.err;
    return Json::parse(run.out, nullptr, /*allow_exceptions=*/false);
  }

  std::string dir_;
};

std::vector<std::string> Lines(const std::string& text) {
  return absl::StrSplit(text, '\n', absl::SkipEmpty());
}

std::set<std::string> Keys(const Json& object) {
  std::set<std::string> keys;
  for (const auto& item : object.items()) keys.insert(item.key());
  return keys;
}

std::string Example() {
  return ReadFileOrDie(std::string(GOODPUT_EXAMPLES) + "/fleet.jsonl");
}

TEST_F(GoodputctlBinaryTest, HelpExitsZero) {
  for (const char* args : {"--help", "replay --help"}) {
    RunResult run = Goodputctl(args);
    EXPECT_EQ(run.code, 0) << args;
    EXPECT_THAT(run.out, HasSubstr("Usage: goodputctl")) << args;
    EXPECT_EQ(run.err, "") << args;
  }
}

TEST_F(GoodputctlBinaryTest, UsageAndFileErrorsPrintOneLineAndExitTwo) {
  std::string events = Write("events.jsonl", kSimple);
  for (const std::string& args : std::vector<std::string>{
           "--frobnicate", "frobnicate", "replay --jsn " + events,
           "replay --as_of=noon " + events, "replay " + dir_ + "/missing.jsonl",
           "replay " + dir_, "replay"}) {
    RunResult run = Goodputctl(args);
    EXPECT_EQ(run.code, 2) << args;
    EXPECT_THAT(Lines(run.err), SizeIs(1)) << args << ": " << run.err;
    EXPECT_EQ(run.out, "") << args;
  }
}

TEST_F(GoodputctlBinaryTest, BadLineIsReportedWithFileAndLineAndExitsOne) {
  std::vector<std::string> lines = Lines(kSimple);
  lines.insert(lines.begin() + 2,
               R"({"time":"2026-11-22T10:05:00Z","job_id":"a"})");
  std::string path = Write("bad.jsonl", absl::StrJoin(lines, "\n") + "\n");
  RunResult run = Goodputctl("replay " + path);
  EXPECT_EQ(run.code, 1);
  std::vector<std::string> err = Lines(run.err);
  ASSERT_THAT(err, SizeIs(2));
  EXPECT_THAT(err[0], StartsWith(path + ":3: "));
  EXPECT_EQ(err[1], "goodputctl replay: 1 of 10 lines bad");
  EXPECT_THAT(run.out, HasSubstr("FLEET"));  // the report is still printed
  EXPECT_THAT(run.out, HasSubstr("\na "));   // with job a's row
}

TEST_F(GoodputctlBinaryTest, DashReadsStdin) {
  std::string path = Write("events.jsonl", kSimple);
  RunResult from_file = Goodputctl("replay --json " + path);
  RunResult from_stdin = Goodputctl("replay --json -", path);
  EXPECT_EQ(from_stdin.code, 0) << from_stdin.err;
  EXPECT_EQ(from_stdin.out, from_file.out);
}

TEST_F(GoodputctlBinaryTest, JsonHasEveryFieldOfSpecSection4) {
  Json json = ReplayJson(Write("fleet.jsonl", Example()));
  ASSERT_TRUE(json.is_object());
  EXPECT_EQ(Keys(json), (std::set<std::string>{"as_of", "since", "jobs",
                                               "fleet", "segments"}));
  std::set<std::string> categories = {
      "total",   "queued",  "recovery",   "init",       "prep",
      "compile", "restore", "data_wait",  "checkpoint", "reshard",
      "custom",  "idle",    "productive", "lost",       "excluded"};
  ASSERT_THAT(json["jobs"], SizeIs(5));
  for (const Json& job : json["jobs"]) {
    EXPECT_THAT(Keys(job), IsSupersetOf({"job_id",
                                         "chips",
                                         "accelerator",
                                         "workload",
                                         "framework",
                                         "labels",
                                         "state",
                                         "seconds",
                                         "custom_seconds",
                                         "at_risk_seconds",
                                         "ideal_seconds",
                                         "goodput",
                                         "sg",
                                         "rg",
                                         "pg",
                                         "mpg",
                                         "steps",
                                         "interruptions",
                                         "min_chips",
                                         "degraded_chip_seconds",
                                         "slice_efficiency",
                                         "cost_usd",
                                         "energy_kwh"}));
    EXPECT_EQ(Keys(job["seconds"]), categories);
    EXPECT_EQ(Keys(job["steps"]),
              (std::set<std::string>{"last", "last_checkpoint", "lost"}));
  }
  std::set<std::string> totals = {"chip_seconds",
                                  "goodput",
                                  "sg",
                                  "rg",
                                  "pg",
                                  "mpg",
                                  "sg_capacity",
                                  "mpg_capacity",
                                  "degraded_chip_seconds",
                                  "slice_efficiency",
                                  "jobs",
                                  "jobs_without_chips",
                                  "cost_usd",
                                  "energy_kwh",
                                  "unpriced_chip_seconds",
                                  "unpowered_chip_seconds",
                                  "training_interruptions_per_chip_hour",
                                  "checkpoint_advice"};
  EXPECT_EQ(Keys(json["fleet"]), totals);
  EXPECT_EQ(Keys(json["fleet"]["chip_seconds"]), categories);
  EXPECT_THAT(Keys(json["segments"]),
              IsSupersetOf({"accelerator", "workload", "framework", "size"}));
  for (const auto& dimension : json["segments"].items()) {
    for (const auto& value : dimension.value().items()) {
      EXPECT_EQ(Keys(value.value()), totals) << dimension.key();
    }
  }
}

TEST_F(GoodputctlBinaryTest, SimpleTimelineNumbersByHand) {
  Json json = ReplayJson(Write("events.jsonl", kSimple));
  ASSERT_THAT(json["jobs"], SizeIs(1));
  const Json& job = json["jobs"][0];
  EXPECT_EQ(json["as_of"], "2026-11-22T11:00:00Z");
  EXPECT_TRUE(json["since"].is_null());
  EXPECT_EQ(job["state"], "ENDED");
  EXPECT_EQ(job["chips"], 8);
  EXPECT_EQ(job["workload"], "TRAINING");
  EXPECT_EQ(job["seconds"]["total"], 3600.0);
  EXPECT_EQ(job["seconds"]["queued"], 600.0);
  EXPECT_EQ(job["seconds"]["productive"], 3000.0);
  EXPECT_EQ(job["seconds"]["lost"], 0.0);
  EXPECT_DOUBLE_EQ(job["sg"].get<double>(), 5.0 / 6);
  EXPECT_DOUBLE_EQ(job["rg"].get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(job["goodput"].get<double>(), 5.0 / 6);
  EXPECT_TRUE(job["pg"].is_null());  // no step costs
  EXPECT_TRUE(job["mpg"].is_null());
  EXPECT_EQ(job["steps"]["last"], 5);
  EXPECT_DOUBLE_EQ(json["fleet"]["chip_seconds"]["queued"].get<double>(),
                   8 * 600.0);
}

TEST_F(GoodputctlBinaryTest, AsOfExcludesLaterEvents) {
  Json json = ReplayJson("--as_of=2026-11-22T10:30:00Z " +
                         Write("events.jsonl", kSimple));
  ASSERT_THAT(json["jobs"], SizeIs(1));
  const Json& job = json["jobs"][0];
  EXPECT_EQ(json["as_of"], "2026-11-22T10:30:00Z");
  EXPECT_EQ(job["state"], "RUNNING");
  EXPECT_EQ(job["seconds"]["total"], 1800.0);
  EXPECT_EQ(job["seconds"]["queued"], 600.0);
  EXPECT_EQ(job["steps"]["last"], 2);
}

TEST_F(GoodputctlBinaryTest, SinceWindowsTheReport) {
  Json json = ReplayJson("--since=2026-11-22T10:50:00Z " +
                         Write("events.jsonl", kSimple));
  EXPECT_EQ(json["since"], "2026-11-22T10:50:00Z");
  ASSERT_THAT(json["jobs"], SizeIs(1));
  EXPECT_EQ(json["jobs"][0]["seconds"]["total"], 600.0);
  EXPECT_EQ(json["jobs"][0]["seconds"]["queued"], 0.0);
}

// Rule 2: in-flight step time more than stall_after after the job's last
// event (10:30) is idle. As of 11:30: 10 min productive then 50 min idle
// by default; 30 min each with --stall_after=30m.
TEST_F(GoodputctlBinaryTest, StallAfterMovesInFlightTimeToIdle) {
  std::vector<std::string> lines = Lines(kSimple);
  std::string path =
      Write("events.jsonl",
            absl::StrJoin(lines.begin(), lines.begin() + 5, "\n") + "\n");
  std::string as_of = "--as_of=2026-11-22T11:30:00Z ";
  Json fast = ReplayJson(as_of + path);
  Json slow = ReplayJson(as_of + "--stall_after=30m " + path);
  ASSERT_THAT(fast["jobs"], SizeIs(1));
  ASSERT_THAT(slow["jobs"], SizeIs(1));
  EXPECT_EQ(fast["jobs"][0]["seconds"]["idle"], 3000.0);
  EXPECT_EQ(fast["jobs"][0]["seconds"]["productive"], 1800.0);
  EXPECT_EQ(slow["jobs"][0]["seconds"]["idle"], 1800.0);
  EXPECT_EQ(slow["jobs"][0]["seconds"]["productive"], 3000.0);
}

// A catalog entry for an unknown accelerator makes its steps costed.
TEST_F(GoodputctlBinaryTest, CatalogFileAddsAccelerators) {
  std::string path = Write(
      "events.jsonl",
      R"({"time":"2026-11-22T10:00:00Z","job_id":"x","job_submitted":{"chips":2,"accelerator":"tpu-x","workload":"TRAINING","step_flops":1e15}}
{"time":"2026-11-22T10:00:00Z","job_id":"x","started":{}}
{"time":"2026-11-22T10:00:10Z","job_id":"x","step":{"step":1}}
{"time":"2026-11-22T10:00:20Z","job_id":"x","step":{"step":2}}
)");
  std::string catalog = Write(
      "catalog.json",
      R"({"tpu-x": {"peak_flops": 1e14, "peak_bytes_per_second": 1e12}})");
  Json without = ReplayJson(path);
  Json with = ReplayJson("--catalog=" + catalog + " " + path);
  ASSERT_THAT(with["jobs"], SizeIs(1));
  EXPECT_TRUE(without["jobs"][0]["pg"].is_null());
  // Each step's ideal time: 1e15 / (2 x 1e14) = 5 s; 2 steps of 10 s.
  EXPECT_DOUBLE_EQ(with["jobs"][0]["ideal_seconds"].get<double>(), 10.0);
  EXPECT_DOUBLE_EQ(with["jobs"][0]["pg"].get<double>(), 0.5);
}

TEST_F(GoodputctlBinaryTest, ExampleReplaysWithoutErrors) {
  RunResult run = Goodputctl("replay " + Write("fleet.jsonl", Example()));
  EXPECT_EQ(run.code, 0);
  EXPECT_EQ(run.err, "");
  EXPECT_THAT(run.out, HasSubstr("CAPACITY"));
}

TEST_F(GoodputctlBinaryTest, ChunkedInputGivesByteIdenticalJson) {
  std::vector<std::string> lines = Lines(Example());
  RunResult whole =
      Goodputctl("replay --json " + Write("all.jsonl", Example()));
  for (size_t cut : {size_t{1}, lines.size() / 3, lines.size() / 2}) {
    std::string a = Write(
        "a.jsonl", absl::StrJoin(lines.begin(), lines.begin() + cut, "\n"));
    std::string b =
        Write("b.jsonl", absl::StrJoin(lines.begin() + cut, lines.end(), "\n"));
    RunResult chunked = Goodputctl("replay --json " + a + " " + b);
    EXPECT_EQ(chunked.code, 0) << chunked.err;
    EXPECT_EQ(chunked.out, whole.out) << "cut at " << cut;
    RunResult mixed = Goodputctl("replay --json " + a + " -", b);
    EXPECT_EQ(mixed.out, whole.out) << "stdin second, cut at " << cut;
  }
}

TEST_F(GoodputctlBinaryTest, ShuffledLinesGiveTheSameReport) {
  std::vector<std::string> lines = Lines(Example());
  RunResult whole =
      Goodputctl("replay --json " + Write("all.jsonl", Example()));
  std::mt19937 random(7);
  for (int round = 0; round < 3; ++round) {
    std::shuffle(lines.begin(), lines.end(), random);
    RunResult shuffled = Goodputctl(
        "replay --json " + Write("shuffled.jsonl", absl::StrJoin(lines, "\n")));
    EXPECT_EQ(shuffled.code, 0) << shuffled.err;
    EXPECT_EQ(shuffled.out, whole.out) << "round " << round;
  }
}

}  // namespace
}  // namespace goodput::cli
