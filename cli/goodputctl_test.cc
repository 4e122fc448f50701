// In-process tests of RunGoodputctl (the binary is tested in
// goodputctl_binary_test.cc).
#include "cli/goodputctl.h"

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace goodput::cli {
namespace {

using ::testing::HasSubstr;
using ::testing::SizeIs;
using ::testing::StartsWith;

struct RunResult {
  int code;
  std::string out;
  std::string err;
};

RunResult RunWith(std::vector<std::string> args,
                  const std::string& stdin_text = "") {
  args.insert(args.begin(), "goodputctl");
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  std::istringstream in(stdin_text);
  std::ostringstream out, err;
  int code =
      RunGoodputctl(static_cast<int>(argv.size()), argv.data(), in, out, err);
  return {code, out.str(), err.str()};
}

std::vector<std::string> Lines(const std::string& text) {
  return absl::StrSplit(text, '\n', absl::SkipEmpty());
}

const char kEvent[] =
    R"({"time":"2026-11-22T10:00:00Z","job_id":"a","job_submitted":{"chips":8,"accelerator":"tpu-v5e","workload":"TRAINING"}})";

TEST(GoodputctlTest, HelpGoesToStdout) {
  for (auto args : std::vector<std::vector<std::string>>{
           {"--help"}, {"-h"}, {"replay", "--help"}, {"replay", "-h"}}) {
    RunResult run = RunWith(args);
    EXPECT_EQ(run.code, 0) << args[0];
    EXPECT_THAT(run.out, HasSubstr("Usage: goodputctl"));
    EXPECT_EQ(run.err, "");
  }
  EXPECT_THAT(RunWith({"--help"}).out, HasSubstr("replay"));
  EXPECT_THAT(RunWith({"replay", "--help"}).out, HasSubstr("--as_of=T"));
}

TEST(GoodputctlTest, UsageErrorsAreOneLineAndExitTwo) {
  const std::vector<std::vector<std::string>> cases = {
      {},
      {"frobnicate"},
      {"--bogus"},
      {"replay"},
      {"replay", "--jsn", "-"},
      {"replay", "--as_of=yesterday", "-"},
      {"replay", "--since=2026-11-22", "-"},
      {"replay", "--stall_after=ten", "-"},
      {"replay", "--catalog=/nonexistent/catalog.json", "-"},
      {"replay", "/nonexistent/events.jsonl"},
  };
  for (const auto& args : cases) {
    RunResult run = RunWith(args);
    std::string name = args.empty() ? "(none)" : absl::StrJoin(args, " ");
    EXPECT_EQ(run.code, 2) << name;
    EXPECT_THAT(Lines(run.err), SizeIs(1)) << name << ": " << run.err;
    EXPECT_THAT(run.err, StartsWith("goodputctl")) << name;
    EXPECT_EQ(run.out, "") << name;
  }
}

TEST(GoodputctlTest, DashReadsInputStream) {
  RunResult run =
      RunWith({"replay", "--json", "-"}, std::string(kEvent) + "\n");
  EXPECT_EQ(run.code, 0) << run.err;
  nlohmann::json json = nlohmann::json::parse(run.out);
  ASSERT_EQ(json["jobs"].size(), 1u);
  EXPECT_EQ(json["jobs"][0]["job_id"], "a");
  EXPECT_EQ(json["as_of"], "2026-11-22T10:00:00Z");
}

TEST(GoodputctlTest, BadLinesAreCappedAtOneHundred) {
  std::string input = std::string(kEvent) + "\n";
  for (int i = 0; i < 150; ++i) input += "{oops\n";
  RunResult run = RunWith({"replay", "-"}, input);
  EXPECT_EQ(run.code, 1);
  std::vector<std::string> lines = Lines(run.err);
  ASSERT_THAT(lines, SizeIs(102));
  EXPECT_THAT(lines[0], StartsWith("<stdin>:2: "));
  EXPECT_THAT(lines[99], StartsWith("<stdin>:101: "));
  EXPECT_EQ(lines[100], "goodputctl replay: 50 more bad lines not shown");
  EXPECT_EQ(lines[101], "goodputctl replay: 150 of 151 lines bad");
  EXPECT_THAT(run.out, HasSubstr("FLEET"));  // the report is still printed
}

TEST(GoodputctlTest, TableIsTheDefault) {
  RunResult run = RunWith({"replay", "-"}, std::string(kEvent) + "\n");
  EXPECT_EQ(run.code, 0);
  EXPECT_THAT(run.out, StartsWith("goodput report as of 2026-11-22T10:00:00Z"));
  EXPECT_THAT(run.out, HasSubstr("JOB"));
}

TEST(GoodputctlTest, CatalogFileErrorNamesTheFile) {
  std::string path = ::testing::TempDir() + "/bad_catalog.json";
  { std::ofstream(path) << R"({"x": {"peak_flops": 1}})"; }
  RunResult run = RunWith({"replay", "--catalog=" + path, "-"});
  EXPECT_EQ(run.code, 2);
  EXPECT_THAT(run.err, HasSubstr(path + ": x.peak_bytes_per_second: missing"));
}

TEST(GoodputctlTest, DrilldownCommandsHaveHelpAndNameBadFlags) {
  for (const char* command : {"jobs", "job", "fleet"}) {
    RunResult run = RunWith({command, "--help"});
    EXPECT_EQ(run.code, 0) << command;
    EXPECT_THAT(run.out, HasSubstr(std::string("Usage: goodputctl "
                                               "--server=HOST:PORT ") +
                                   command));
    EXPECT_THAT(run.out, HasSubstr("--json"));
  }
  EXPECT_THAT(RunWith({"--help"}).out, HasSubstr("fleet"));
  const std::string server = "--server=127.0.0.1:1";
  struct Case {
    std::vector<std::string> args;
    std::string error;
  };
  for (const Case& c : std::vector<Case>{
           {{"jobs"}, "goodputctl jobs: --server=HOST:PORT is required"},
           {{server, "job"}, "goodputctl job: want exactly one job ID"},
           {{server, "job", "a", "b"}, "want exactly one job ID"},
           {{server, "job", "a", "--windows=5m,soon"},
            "--windows: want durations like 5m,1h, got 'soon'"},
           {{server, "job", "a", "--timeline=-1"},
            "--timeline: want an integer in [0, 4294967295], got \"-1\""},
           {{server, "jobs", "--label=team"},
            "--label: want KEY=VALUE, got 'team'"},
           {{server, "jobs", "--limit=all"},
            "--limit: want an integer in [0, "},
           {{server, "jobs", "--as_of=yesterday"}, "--as_of"},
           {{server, "fleet", "extra"}, "unexpected argument extra"},
           {{server, "fleet", "--since=noon"}, "--since"},
       }) {
    RunResult run = RunWith(c.args);
    EXPECT_EQ(run.code, 2) << absl::StrJoin(c.args, " ");
    EXPECT_THAT(run.err, HasSubstr(c.error)) << absl::StrJoin(c.args, " ");
    EXPECT_THAT(Lines(run.err), SizeIs(1));
    EXPECT_EQ(run.out, "");
  }
}

// Issue 13: every command's number and duration flags go through
// util/flag_values, so a bad one reads the same everywhere.
TEST(GoodputctlTest, NumberAndDurationFlagsSayWhatTheyWant) {
  const std::string server = "--server=127.0.0.1:1";
  struct Case {
    std::vector<std::string> args;
    std::string error;
  };
  for (const Case& c : std::vector<Case>{
           {{server, "top", "--interval=10ms"},
            "--interval: want a duration of at least 100ms"},
           {{server, "top", "--jobs=-1"},
            "--jobs: want an integer >= 0, got \"-1\""},
           {{server, "send", "x.jsonl", "--batch=0"},
            "--batch: want an integer in [1, 100000], got \"0\""},
           {{server, "send", "x.jsonl", "--timeout=soon"},
            "--timeout: want a duration"},
           {{server, "dead-letters", "--limit=0"},
            "--limit: want an integer in [1, "},
           {{"logs", "--log_profile=megatron", "--job_id=j", "--year=1969",
             "x.log"},
            "--year: want an integer in [1970, 9999], got \"1969\""},
       }) {
    RunResult run = RunWith(c.args);
    EXPECT_EQ(run.code, 2) << absl::StrJoin(c.args, " ");
    EXPECT_THAT(run.err, HasSubstr(c.error)) << absl::StrJoin(c.args, " ");
    EXPECT_EQ(run.out, "");
  }
}

TEST(GoodputctlTest, DrilldownUnreachableServerIsOneLineExitTwo) {
  // Port 1 on loopback refuses connections.
  RunResult run = RunWith({"--server=127.0.0.1:1", "fleet"});
  EXPECT_EQ(run.code, 2);
  EXPECT_THAT(run.err, StartsWith("goodputctl fleet: 127.0.0.1:1: "));
  EXPECT_EQ(run.out, "");
}

}  // namespace
}  // namespace goodput::cli
