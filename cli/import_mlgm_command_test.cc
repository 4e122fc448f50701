// goodputctl import-mlgm through RunGoodputctl (in process, real files in
// a temp dir): output, bad entries with and without --skip_bad, --out,
// gcloud's JSON array form, usage errors, and the imported events replayed
// by goodputctl replay --json.
#include <algorithm>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "cli/goodputctl.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "report/test_util.h"

namespace goodput::cli {
namespace {

using report::testing::ReadFileOrDie;
using report::testing::WriteFileOrDie;
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

std::string Example(const std::string& name) {
  return std::string(GOODPUT_IMPORTER_TESTDATA) + "/mlgm/" + name;
}

const char kGood1[] = R"({"job_name":"j","job_start_time":1700000000})";
const char kGood2[] =
    R"({"job_name":"j","step_count":1,"step_start_time":1700000010})";
const char kBadStep[] =
    R"({"job_name":"j","step_count":"two","step_start_time":1700000020})";

class ImportMlgmCommandTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = ::testing::TempDir() + "/import_mlgm_XXXXXX";
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override {
    std::system(absl::StrCat("rm -rf '", dir_, "'").c_str());
  }
  std::string Write(const std::string& name, const std::string& text) {
    std::string path = dir_ + "/" + name;
    WriteFileOrDie(path, text);
    return path;
  }
  std::string dir_;
};

TEST_F(ImportMlgmCommandTest, ImportedLogReplaysToTheDocumentedNumbers) {
  RunResult imported = Goodputctl({"import-mlgm", Example("basic.jsonl"),
                                   "--chips=8", "--accelerator=tpu-v5e"});
  ASSERT_EQ(imported.code, 0) << imported.err;
  EXPECT_EQ(imported.err, "");
  RunResult replayed = Goodputctl({"replay", "--json", "-"}, imported.out);
  ASSERT_EQ(replayed.code, 0) << replayed.err;
  nlohmann::json report = nlohmann::json::parse(replayed.out);
  ASSERT_THAT(report["jobs"], SizeIs(1));
  const nlohmann::json& job = report["jobs"][0];
  EXPECT_EQ(job["job_id"], "llm");
  EXPECT_EQ(job["chips"], 8);
  EXPECT_EQ(job["accelerator"], "tpu-v5e");
  EXPECT_EQ(job["state"], "ENDED");
  EXPECT_EQ(job["seconds"]["total"], 240.0);
  EXPECT_EQ(job["seconds"]["productive"], 60.0);
  EXPECT_EQ(job["seconds"]["compile"], 90.0);
  EXPECT_EQ(job["custom_seconds"]["eval"], 20.0);
  EXPECT_EQ(job["goodput"], 0.25);
  EXPECT_EQ(job["steps"]["last"], 6);
}

// --exclude: the library's exclusion intervals as JOB exclusions. Here
// the accelerator init (22:13:20 -> 22:13:40, 20 s) does not count.
TEST_F(ImportMlgmCommandTest, ExcludeBecomesJobExclusions) {
  RunResult imported =
      Goodputctl({"import-mlgm", Example("basic.jsonl"), "--chips=8",
                  "--exclude=2023-11-14T22:13:20Z/2023-11-14T22:13:40Z"});
  ASSERT_EQ(imported.code, 0) << imported.err;
  EXPECT_THAT(imported.out, HasSubstr(R"("scope":"JOB")"));
  RunResult replayed = Goodputctl({"replay", "--json", "-"}, imported.out);
  ASSERT_EQ(replayed.code, 0) << replayed.err;
  const nlohmann::json job = nlohmann::json::parse(replayed.out)["jobs"][0];
  EXPECT_EQ(job["seconds"]["total"], 240.0);
  EXPECT_EQ(job["seconds"]["excluded"], 20.0);
  EXPECT_EQ(job["seconds"]["init"], 0.0);
  EXPECT_EQ(job["seconds"]["productive"], 60.0);
  EXPECT_DOUBLE_EQ(job["goodput"].get<double>(), 60.0 / 220.0);
  RunResult bad = Goodputctl({"import-mlgm", Example("basic.jsonl"),
                              "--exclude=2023-11-14T22:13:40Z"});
  EXPECT_EQ(bad.code, 2);
  EXPECT_THAT(bad.err, HasSubstr("--exclude: each interval must be "
                                 "START/END"));
}

// Issue 14: the elastic example through the written JSON Lines, and what
// the import says on stderr about the slice counts.
TEST_F(ImportMlgmCommandTest, ElasticLogReplaysAsAnElasticJob) {
  RunResult imported =
      Goodputctl({"import-mlgm", Example("elastic.jsonl"), "--chips=256"});
  ASSERT_EQ(imported.code, 0) << imported.err;
  EXPECT_EQ(imported.err,
            "goodputctl import-mlgm: 5 slice-count records became "
            "allocations (active_slices not imported)\n");
  EXPECT_THAT(imported.out, HasSubstr(R"("allocation":{"chips":192})"));
  RunResult replayed = Goodputctl({"replay", "--json", "-"}, imported.out);
  ASSERT_EQ(replayed.code, 0) << replayed.err;
  const nlohmann::json job = nlohmann::json::parse(replayed.out)["jobs"][0];
  EXPECT_EQ(job["min_chips"], 64);
  EXPECT_EQ(job["seconds"]["reshard"], 13.0);
  EXPECT_EQ(job["custom_seconds"]["ELASTIC_SLICE_DOWN"], 5.0);
  EXPECT_EQ(job["degraded_chip_seconds"], 64.0 * 35);
  EXPECT_DOUBLE_EQ(job["slice_efficiency"].get<double>(), 61.0 / 68);

  RunResult odd =
      Goodputctl({"import-mlgm", Example("elastic.jsonl"), "--chips=250"});
  ASSERT_EQ(odd.code, 0) << odd.err;
  EXPECT_EQ(odd.err,
            "goodputctl import-mlgm: 5 slice-count records dropped: --chips "
            "is not a multiple of total_slices\n");
  EXPECT_THAT(odd.out, Not(HasSubstr("allocation")));
  EXPECT_THAT(odd.out, Not(HasSubstr("min_chips")));
  RunResult min = Goodputctl({"import-mlgm", Example("elastic.jsonl"),
                              "--chips=256", "--min_chips=128"});
  EXPECT_THAT(min.out, HasSubstr(R"("min_chips":128)"));
  for (const char* bad :
       {"--min_chips=0", "--min_chips=257", "--min_chips=x"}) {
    RunResult r = Goodputctl(
        {"import-mlgm", Example("elastic.jsonl"), "--chips=256", bad});
    EXPECT_EQ(r.code, 2) << bad;
    EXPECT_THAT(r.err, HasSubstr("--min_chips: want an integer in [1, 256]"))
        << bad;
  }
  RunResult no_chips =
      Goodputctl({"import-mlgm", Example("elastic.jsonl"), "--min_chips=4"});
  EXPECT_EQ(no_chips.code, 2);
}

TEST_F(ImportMlgmCommandTest, BadEntryWritesNothingWithoutSkipBad) {
  std::string log =
      Write("run.jsonl", absl::StrCat(kGood1, "\n", kBadStep, "\n", kGood2));
  RunResult run = Goodputctl({"import-mlgm", log});
  EXPECT_EQ(run.code, 1);
  EXPECT_EQ(run.out, "");
  EXPECT_THAT(run.err,
              HasSubstr(absl::StrCat(log,
                                     ":2: step_count: must be an integer >= 0, "
                                     "got \"two\"\n")));
  EXPECT_THAT(run.err,
              HasSubstr("goodputctl import-mlgm: 1 of 3 entries bad; nothing "
                        "written (--skip_bad converts the rest)\n"));
}

TEST_F(ImportMlgmCommandTest, SkipBadConvertsTheRestAndCountsOnStderr) {
  std::string log =
      Write("run.jsonl", absl::StrCat(kGood1, "\n", kBadStep, "\n", kGood2));
  RunResult run = Goodputctl({"import-mlgm", "--skip_bad", log});
  EXPECT_EQ(run.code, 0);
  EXPECT_THAT(run.err, HasSubstr(":2: step_count"));
  EXPECT_THAT(run.err, HasSubstr("1 of 3 entries bad; skipped them"));
  std::vector<std::string> lines =
      absl::StrSplit(run.out, '\n', absl::SkipEmpty());
  EXPECT_THAT(lines, SizeIs(3));  // started, IDLE, TRAINING
  EXPECT_EQ(lines[0],
            R"({"time":"2023-11-14T22:13:20Z","job_id":"j","attempt":"mlgm-1",)"
            R"("started":{}})");
}

TEST_F(ImportMlgmCommandTest, OutWritesTheFileInsteadOfStdout) {
  std::string out = dir_ + "/events.jsonl";
  RunResult run =
      Goodputctl({"import-mlgm", Example("startup.jsonl"), "--out=" + out});
  ASSERT_EQ(run.code, 0) << run.err;
  EXPECT_EQ(run.out, "");
  EXPECT_EQ(ReadFileOrDie(out),
            Goodputctl({"import-mlgm", Example("startup.jsonl")}).out);
}

TEST_F(ImportMlgmCommandTest, GcloudJsonArrayGivesTheSameEvents) {
  std::string lines = ReadFileOrDie(Example("sequential.jsonl"));
  nlohmann::json array = nlohmann::json::array();
  for (absl::string_view line :
       absl::StrSplit(lines, '\n', absl::SkipEmpty())) {
    array.push_back(nlohmann::json::parse(line));
  }
  std::string path = Write("export.json", array.dump(2));
  RunResult from_array = Goodputctl({"import-mlgm", path});
  ASSERT_EQ(from_array.code, 0) << from_array.err;
  EXPECT_EQ(from_array.out,
            Goodputctl({"import-mlgm", Example("sequential.jsonl")}).out);
  EXPECT_EQ(Goodputctl({"import-mlgm", "-"}, lines).out, from_array.out);

  std::string broken = Write("broken.json", "[{\"job_name\": ");
  RunResult bad = Goodputctl({"import-mlgm", broken});
  EXPECT_EQ(bad.code, 1);
  EXPECT_THAT(bad.err, HasSubstr(broken + ":1: entry: the file starts with "
                                          "'[' but is not one JSON array"));
  RunResult element = Goodputctl({"import-mlgm", Write("e.json", "[7]")});
  EXPECT_THAT(element.err,
              HasSubstr("e.json:entry 1: entry: must be a JSON object, got 7"));
}

TEST_F(ImportMlgmCommandTest, UsageErrorsAreOneLineAndExitTwo) {
  std::string log = Write("run.jsonl", kGood1);
  struct Case {
    std::vector<std::string> args;
    const char* message;
  };
  const Case cases[] = {
      {{"import-mlgm"}, "no input files (use - for stdin)"},
      {{"import-mlgm", log, "--chips=0"},
       "--chips: want an integer >= 1, got \"0\""},
      {{"import-mlgm", log, "--chips=many"}, "--chips: want an integer"},
      {{"import-mlgm", log, "--accelerator=tpu-v5e"},
       "--accelerator: needs --chips"},
      {{"import-mlgm", log, "--job_id="}, "--job_id: must not be empty"},
      {{"import-mlgm", dir_ + "/missing.jsonl"}, "cannot read"},
      {{"import-mlgm", dir_}, "is a directory"},
      {{"import-mlgm", log, "--jobid=x"}, "unknown flag"},
  };
  for (const Case& c : cases) {
    RunResult run = Goodputctl(c.args);
    EXPECT_EQ(run.code, 2) << c.message;
    EXPECT_EQ(run.out, "");
    EXPECT_THAT(run.err, HasSubstr(c.message));
    EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1);
  }
}

TEST_F(ImportMlgmCommandTest, JobIdCannotMergeTwoJobs) {
  std::string log = Write(
      "two.jsonl",
      absl::StrCat(kGood1, "\n", R"({"job_name":"k","job_start_time":1})"));
  RunResult run = Goodputctl({"import-mlgm", log, "--job_id=x"});
  EXPECT_EQ(run.code, 2);
  EXPECT_THAT(run.err, HasSubstr("--job_id: the entries name 2 jobs (j, k)"));
  EXPECT_EQ(Goodputctl({"import-mlgm", log}).code, 0);
}

TEST_F(ImportMlgmCommandTest, HelpListsTheCommandAndItsFlags) {
  EXPECT_THAT(Goodputctl({"--help"}).out, HasSubstr("import-mlgm"));
  RunResult help = Goodputctl({"import-mlgm", "--help"});
  EXPECT_EQ(help.code, 0);
  for (const char* flag :
       {"--job_id=ID", "--chips=N", "--accelerator=A", "--out=FILE",
        "--skip_bad", "--blocking_data_loading", "docs/migrating.md"}) {
    EXPECT_THAT(help.out, HasSubstr(flag));
  }
  EXPECT_THAT(help.err, IsEmpty());
}

}  // namespace
}  // namespace goodput::cli
