#include "sim/sim_flags.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "sim/job_spec.h"

namespace goodput::sim {
namespace {

using ::testing::HasSubstr;

TEST(SimFlagsTest, ParsesTheFleetAndOutputs) {
  SimFlags f;
  ASSERT_TRUE(ParseSimFlags(
                  {"--seed=9", "--hosts=250000", "--duration=30m", "--mtbi=2h",
                   "--accelerators=tpu-v6e,b200", "--sockets=/a,/b",
                   "--speed=60", "--truth=t.json", "--elastic_jobs=0.25"},
                  &f)
                  .ok());
  EXPECT_EQ(f.config.seed, 9u);
  EXPECT_EQ(f.config.hosts, 250000);
  EXPECT_EQ(f.config.duration_ms, 1'800'000);
  EXPECT_EQ(f.config.mtbi_ms, 7'200'000);
  EXPECT_EQ(f.config.accelerators,
            (std::vector<std::string>{"tpu-v6e", "b200"}));
  EXPECT_EQ(f.sockets, (std::vector<std::string>{"/a", "/b"}));
  EXPECT_EQ(f.speed, 60);
  EXPECT_EQ(f.truth, "t.json");
  EXPECT_EQ(f.config.elastic_jobs, 0.25);
}

// Interruptions scale with job size (sim/README.md): 8 h at 1,024 chips by
// default is 1,024 h (42.7 days) at 8 chips and 30 min at 16,384 chips.
TEST(SimFlagsTest, MtbiScalesInverselyWithChips) {
  SimFlags f;
  ASSERT_TRUE(ParseSimFlags({}, &f).ok());
  EXPECT_EQ(f.config.mtbi_chips, 1024);
  EXPECT_EQ(JobMtbiMs(f.config, 1024), 8 * 3'600'000);
  EXPECT_EQ(JobMtbiMs(f.config, 8), int64_t{1024} * 3'600'000);
  EXPECT_EQ(JobMtbiMs(f.config, 16384), 1'800'000);
  EXPECT_EQ(JobMtbiMs(f.config, 3), 9'830'400'000);  // 8 h x 1024 / 3
  ASSERT_TRUE(ParseSimFlags({"--mtbi=3h", "--mtbi_chips=0"}, &f).ok());
  EXPECT_EQ(JobMtbiMs(f.config, 8), 3 * 3'600'000);  // no scaling
  EXPECT_EQ(JobMtbiMs(f.config, 4096), 3 * 3'600'000);
  EXPECT_THAT(ParseSimFlags({"--mtbi_chips=-1"}, &f).message(),
              HasSubstr("--mtbi_chips"));
}

TEST(SimFlagsTest, DurationZeroIsASteadyFleetWithNoTruth) {
  SimFlags f;
  ASSERT_TRUE(ParseSimFlags({"--duration=0", "--sockets=/a"}, &f).ok());
  EXPECT_EQ(f.config.duration_ms, 0);
  EXPECT_THAT(ParseSimFlags({"--duration=0", "--truth=t.json"}, &f).message(),
              HasSubstr("--truth: a steady fleet (--duration=0)"));
  EXPECT_THAT(ParseSimFlags({"--duration=0s"}, &f).message(),
              HasSubstr("--duration"));
}

TEST(SimFlagsTest, BadValuesNameTheFlagAndValue) {
  SimFlags f;
  EXPECT_THAT(ParseSimFlags({"--hosts=0"}, &f).message(),
              HasSubstr("--hosts: want an integer >= 1, got \"0\""));
  EXPECT_THAT(ParseSimFlags({"--mtbi=soon"}, &f).message(),
              HasSubstr("--mtbi"));
  EXPECT_THAT(ParseSimFlags({"--accelerators=tpu-v9"}, &f).message(),
              HasSubstr("tpu-v9"));
  EXPECT_THAT(ParseSimFlags({"--speed=-1"}, &f).message(),
              HasSubstr("--speed"));
  EXPECT_THAT(ParseSimFlags({"--elastic_jobs=1.5"}, &f).message(),
              HasSubstr("--elastic_jobs: want a number in [0, 1]"));
  EXPECT_FALSE(ParseSimFlags({"--nope=1"}, &f).ok());
}

}  // namespace
}  // namespace goodput::sim
