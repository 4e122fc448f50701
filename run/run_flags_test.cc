#include "run/run_flags.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace goodput::run {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr int64_t kNow = int64_t{1795000000} * 1000000000;

TEST(RunFlagsTest, ParsesJobFlagsAndTheCommand) {
  auto f = ParseRunFlags(
      {"--job_id=j", "--chips=8", "--accelerator=tpu-v5p",
       "--labels=team=x,a=b", "--max_restarts=3", "--agent_socket=/tmp/a.sock",
       "--", "python3", "train.py", "--lr=0.1"},
      kNow);
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(f->launcher.job_id, "j");
  EXPECT_EQ(f->launcher.max_restarts, 3);
  EXPECT_EQ(f->agent_socket, "/tmp/a.sock");
  EXPECT_THAT(f->launcher.argv, ElementsAre("python3", "train.py", "--lr=0.1"));
  ASSERT_TRUE(f->launcher.submitted.has_value());
  EXPECT_EQ(f->launcher.submitted->chips(), 8);
  EXPECT_EQ(f->launcher.submitted->workload(), v1::JobSubmitted::TRAINING);
  EXPECT_EQ(f->launcher.submitted->labels().at("team"), "x");
}

TEST(RunFlagsTest, NoChipsNoSubmit) {
  auto f = ParseRunFlags({"--job_id=j", "--", "true"}, kNow);
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_FALSE(f->launcher.submitted.has_value());
  EXPECT_TRUE(f->launcher.send_job_ended);
  auto g = ParseRunFlags({"--job_id=j", "--no_job_ended", "--", "true"}, kNow);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_FALSE(g->launcher.send_job_ended);
}

TEST(RunFlagsTest, ErrorsNameTheFlagAndValue) {
  auto error = [](std::vector<std::string> args) {
    return std::string(ParseRunFlags(args, kNow).status().message());
  };
  EXPECT_THAT(error({"--", "true"}), HasSubstr("--job_id: required"));
  EXPECT_THAT(error({"--job_id=j"}), HasSubstr("missing the command"));
  EXPECT_THAT(error({"--job_id=j", "--max_restarts=-1", "--", "x"}),
              HasSubstr("--max_restarts: want an integer >= 0, got \"-1\""));
  EXPECT_THAT(error({"--job_id=j", "--chips=0", "--", "x"}),
              HasSubstr("job_submitted.chips"));
  EXPECT_THAT(error({"--job_id=j", "--chips=many", "--", "x"}),
              HasSubstr("--chips: must be an integer, got \"many\""));
  EXPECT_THAT(
      error({"--job_id=j", "--workload=BAKING", "--chips=1", "--", "x"}),
      HasSubstr("BAKING"));
  EXPECT_THAT(error({"--job_id=j", "--stop_reason=BORED", "--", "x"}),
              HasSubstr("--stop_reason"));
  EXPECT_THAT(error({"--jobid=j", "--", "x"}), HasSubstr("--jobid"));
  EXPECT_THAT(error({"--job_id=j", "--chips=8", "--min_chips=9", "--", "x"}),
              HasSubstr("job_submitted.min_chips: must be at most "
                        "job_submitted.chips (8), got 9"));
}

// SPEC rule 14: --min_chips makes the submitted job elastic.
TEST(RunFlagsTest, MinChipsMakesAnElasticJob) {
  auto f = ParseRunFlags(
      {"--job_id=j", "--chips=8", "--min_chips=4", "--", "x"}, kNow);
  ASSERT_TRUE(f.ok()) << f.status();
  ASSERT_TRUE(f->launcher.submitted.has_value());
  EXPECT_EQ(f->launcher.submitted->min_chips(), 4);
}

TEST(RunFlagsTest, HelpListsTheFlags) {
  auto f = ParseRunFlags({"--help"}, kNow);
  ASSERT_TRUE(f.ok());
  EXPECT_TRUE(f->help);
  EXPECT_THAT(RunUsage(), HasSubstr("--max_restarts=N"));
}

}  // namespace
}  // namespace goodput::run
