// goodputctl logs through RunGoodputctl (in process, real files in a temp
// dir): events from a Megatron-LM log replayed by `goodputctl replay -`,
// --explain's rules and near misses, --cri, --start_time, bad lines and
// usage errors.
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "cli/goodputctl.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "report/test_util.h"

namespace goodput::cli {
namespace {

using report::testing::WriteFileOrDie;
using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
using ::testing::SizeIs;

struct RunResult {
  int code;
  std::string out;
  std::string err;
};

RunResult Goodputctl(std::vector<std::string> args,
                     const std::string& input = "") {
  args.insert(args.begin(), "goodputctl");
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  std::istringstream in(input);
  std::ostringstream out, err;
  int code =
      RunGoodputctl(static_cast<int>(argv.size()), argv.data(), in, out, err);
  return {code, out.str(), err.str()};
}

// A Megatron-LM log (megatron/training/training.py print_datetime and
// training_log; megatron/training/checkpointing.py save_checkpoint and
// load_checkpoint): saved at 20, died after 30, resumed from 20, ended.
const char kMegatronLog[] =
    "[after in-process setup and before initialize_megatron] datetime: "
    "2026-11-22 10:00:00.000000 \n"
    "[after dataloaders are built] datetime: 2026-11-22 10:02:00.000000 \n"
    " [2026-11-22 10:04:00.000000] iteration       10/     100 | consumed "
    "samples:          640 |\n"
    " [2026-11-22 10:06:00.000000] iteration       20/     100 | consumed "
    "samples:         1280 |\n"
    "[2026-11-22 10:06:01.000000] saving checkpoint at iteration      20 to "
    "/ckpt in torch_dist format\n"
    "  [2026-11-22 10:06:31.000000] successfully saved checkpoint from "
    "iteration      20 to /ckpt [ t 1/1, gtp_remat 1/1, p 1/1 ]\n"
    " [2026-11-22 10:08:31.000000] iteration       30/     100 | consumed "
    "samples:         1920 |\n"
    "[after in-process setup and before initialize_megatron] datetime: "
    "2026-11-22 10:15:00.000000 \n"
    " loading distributed checkpoint from /ckpt at iteration 20\n"
    "  successfully loaded checkpoint from /ckpt [ t 1/1, gtp_remat 1/1, p "
    "1/1 ] at iteration 20\n"
    " [2026-11-22 10:17:00.000000] iteration       30/     100 | consumed "
    "samples:         1920 |\n"
    " [2026-11-22 10:19:00.000000] iteration       40/     100 | consumed "
    "samples:         2560 |\n"
    "[after training is done] datetime: 2026-11-22 10:19:01.000000 \n";

class LogsCommandTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = ::testing::TempDir() + "/logs_command_XXXXXX";
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  std::string Write(const std::string& name, const std::string& text) {
    std::string path = dir_ + "/" + name;
    WriteFileOrDie(path, text);
    return path;
  }
  std::string dir_;
};

TEST_F(LogsCommandTest, EventsFromALogReplayIntoAReport) {
  std::string log = Write("train.log", kMegatronLog);
  RunResult logs =
      Goodputctl({"logs", "--log_profile=megatron", "--job_id=llm-7", log});
  ASSERT_EQ(logs.code, 0) << logs.err;
  EXPECT_THAT(logs.err, IsEmpty());
  std::vector<std::string> lines =
      absl::StrSplit(logs.out, '\n', absl::SkipEmpty());
  EXPECT_THAT(lines, SizeIs(16));
  EXPECT_THAT(lines[0], AllOf(HasSubstr(R"("job_id":"llm-7")"),
                              HasSubstr(R"("started":{})")));
  RunResult replay = Goodputctl({"replay", "--json", "-"}, logs.out);
  ASSERT_EQ(replay.code, 0) << replay.err;
  nlohmann::json job = nlohmann::json::parse(replay.out)["jobs"][0];
  EXPECT_EQ(job["job_id"], "llm-7");
  EXPECT_EQ(job["state"], "ENDED");
  EXPECT_EQ(job["interruptions"], 1);
  EXPECT_EQ(job["steps"]["last"], 40);
  EXPECT_EQ(job["steps"]["lost"], 10);  // 21..30 of the first attempt
}

TEST_F(LogsCommandTest, StdinAndSeveralFilesAreOneLogInOrder) {
  std::vector<std::string> parts = absl::StrSplit(kMegatronLog, '\n');
  std::string first = absl::StrJoin(parts.begin(), parts.begin() + 7, "\n");
  std::string rest = absl::StrJoin(parts.begin() + 7, parts.end(), "\n");
  RunResult split = Goodputctl({"logs", "--log_profile=megatron",
                                "--job_id=llm-7", Write("a.log", first), "-"},
                               rest);
  RunResult whole =
      Goodputctl({"logs", "--log_profile=megatron", "--job_id=llm-7",
                  Write("b.log", kMegatronLog)});
  ASSERT_EQ(split.code, 0) << split.err;
  EXPECT_EQ(split.out, whole.out);
}

TEST_F(LogsCommandTest, ExplainShowsRulesEventsAndNearMisses) {
  std::string log =
      Write("train.log",
            absl::StrCat(kMegatronLog,
                         // a changed format: no " to DIR" after the iteration.
                         "[2026-11-22 10:20:00.000000] saving checkpoint at "
                         "iteration 40\n"));
  RunResult r = Goodputctl(
      {"logs", "--log_profile=megatron", "--job_id=j", "--explain", log});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr(log + ":3: rule 5 (step) -> {"));
  EXPECT_THAT(r.out,
              HasSubstr(log + ":14: near rule 6 (checkpoint_start): has "
                              "'] saving checkpoint at iteration' but the "
                              "pattern does not match"));
  EXPECT_THAT(r.out, HasSubstr("14 lines, 0 bad, 1 near misses"));
  EXPECT_THAT(r.out, HasSubstr("rule 5 (step): 5 lines"));
  EXPECT_THAT(r.out, HasSubstr("rule 1 (start): 2 lines"));
}

TEST_F(LogsCommandTest, CriLinesTakeTheirTimeAndJoinPartials) {
  std::string log =
      Write("pod.log",
            "2026-11-22T10:00:00Z stdout F ***** Running training *****\n"
            "2026-11-22T10:10:00Z stdout P {'loss': 2.5, \n"
            "2026-11-22T10:10:00Z stdout F 'epoch': 0.1}\n"
            "2026-11-22T10:20:00Z stdout F {'loss': 2.4, 'epoch': 0.2}\n");
  RunResult r = Goodputctl(
      {"logs", "--log_profile=hf_trainer", "--job_id=j", "--cri", log});
  ASSERT_EQ(r.code, 0) << r.err;
  std::vector<std::string> lines =
      absl::StrSplit(r.out, '\n', absl::SkipEmpty());
  ASSERT_THAT(lines, SizeIs(3));
  EXPECT_THAT(lines[1], AllOf(HasSubstr("2026-11-22T10:10:00Z"),
                              HasSubstr(R"("step":{"step":"500"})")));
  EXPECT_THAT(lines[2], HasSubstr(R"("step":"1000")"));
}

TEST_F(LogsCommandTest, AnUntimedLineFirstIsBadUnlessStartTimeSaysWhen) {
  std::string log = Write("hf.log",
                          "***** Running training *****\n"
                          "{'loss': 2.5, 'epoch': 0.1}\n");
  RunResult r =
      Goodputctl({"logs", "--log_profile=hf_trainer", "--job_id=j", log});
  EXPECT_EQ(r.code, 1);
  EXPECT_THAT(r.err,
              AllOf(HasSubstr(log + ":1: profile hf_trainer: rule 1 "
                                    "(start)"),
                    HasSubstr("no timestamp"), HasSubstr("2 lines, 2 bad")));
  r = Goodputctl({"logs", "--log_profile=hf_trainer", "--job_id=j",
                  "--start_time=2026-11-22T10:00:00Z", log});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("2026-11-22T10:00:00Z"));
}

TEST_F(LogsCommandTest, ABadProfileFileNamesItsRuleAndCapture) {
  std::string profile = Write("mine.yaml",
                              "name: mine\nrules:\n  - kind: step\n"
                              "    pattern: 'it (?P<iteration>\\d+)'\n");
  RunResult r = Goodputctl({"logs", "--log_profile=" + profile, "--job_id=j",
                            Write("x.log", "it 3\n")});
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, AllOf(HasSubstr("profile " + profile + ": rule 1 (step)"),
                           HasSubstr("unknown capture 'iteration'")));
}

TEST_F(LogsCommandTest, UsageErrorsNameTheFlag) {
  std::string log = Write("x.log", "");
  EXPECT_THAT(Goodputctl({"logs", "--job_id=j", log}).err,
              HasSubstr("needs --log_profile"));
  EXPECT_THAT(Goodputctl({"logs", "--log_profile=megatron", log}).err,
              HasSubstr("needs --job_id"));
  RunResult r = Goodputctl({"logs", "--log_profile=megatron", "--job_id=j",
                            "--start_time=noon", log});
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("--start_time: not RFC 3339: 'noon'"));
  r = Goodputctl({"logs", "--log_profile=paxml", "--job_id=j", log});
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, AllOf(HasSubstr("--log_profile=paxml"),
                           HasSubstr("megatron, nemo, torchtitan")));
  EXPECT_THAT(Goodputctl({"logs", "--log_profile=megatron", "--job_id=j",
                          dir_ + "/missing.log"})
                  .err,
              HasSubstr("cannot read " + dir_ + "/missing.log"));
}

}  // namespace
}  // namespace goodput::cli
