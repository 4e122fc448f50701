// The simulator's ground truth against the service's report: several
// seeds, each fleet written as JSON Lines and replayed through the same
// path as `goodputctl replay --json` (codec::LineDecoder, core). Every
// category must match the truth exactly (up to nanosecond rounding of
// double seconds), after adding the named cases the service cannot see
// (sim/truth.h Unobservable):
//  * wait/idle inside a step killed before it reported: the service
//    counts the in-flight step lost (training) or productive (serving);
//  * wait/idle inside the step in flight at as-of: counted productive;
//  * steps lost at a kill whose next attempt has not restored by as-of:
//    productive (at risk) until a resume point decides.
#include <cstdlib>
#include <sstream>
#include <string>

#include "core/category.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "report/replay.h"
#include "sim/event_sink.h"
#include "sim/fleet_sim.h"

namespace goodput::sim {
namespace {

// Double seconds to integer nanoseconds and back, per event.
constexpr double kRoundingSeconds = 1e-3;

SimConfig Fleet(uint64_t seed) {
  SimConfig c;
  c.seed = seed;
  c.hosts = 40;
  c.jobs = 60;
  c.duration_ms = 10 * 3600'000;
  c.mtbi_ms = 2 * 3600'000;  // many interruptions, for every job size
  c.mtbi_chips = 0;
  c.job_duration_ms = 2 * 3600'000;
  c.max_job_chips = 64;
  return c;
}

core::FleetReport Replay(const std::string& jsonl, int64_t as_of_ms) {
  report::ReplayOptions options;
  options.as_of_ns = as_of_ms * 1'000'000;
  report::Replayer replayer(options);
  std::istringstream in(jsonl);
  EXPECT_TRUE(replayer.AddInput(in, "sim").ok());
  auto result = replayer.Finish();
  EXPECT_TRUE(result.ok()) << result.status();
  EXPECT_THAT(result->errors, ::testing::IsEmpty());
  return result->report;
}

double Seconds(const core::JobReport& job, const char* name) {
  for (int c = 0; c < core::kNumCategories; ++c) {
    if (core::CategoryName(static_cast<core::Category>(c)) ==
        std::string(name)) {
      return job.nanos[c] / 1e9;
    }
  }
  ADD_FAILURE() << "no category " << name;
  return 0;
}

// What the service must report for `truth`, per category, in seconds.
std::array<double, kTruthCategories> Expected(const JobTruth& truth,
                                              bool training) {
  std::array<double, kTruthCategories> s;
  for (int c = 0; c < kTruthCategories; ++c) s[c] = truth.ms[c] / 1e3;
  const Unobservable& u = truth.unobservable;
  auto at = [&](Truth c) -> double& { return s[static_cast<int>(c)]; };
  at(Truth::kDataWait) -=
      (u.wait_in_killed_step_ms + u.wait_in_flight_ms) / 1e3;
  at(Truth::kIdle) -= (u.idle_in_killed_step_ms + u.idle_in_flight_ms) / 1e3;
  const double killed =
      (u.wait_in_killed_step_ms + u.idle_in_killed_step_ms) / 1e3;
  at(training ? Truth::kLost : Truth::kProductive) += killed;
  at(Truth::kProductive) += (u.wait_in_flight_ms + u.idle_in_flight_ms) / 1e3;
  at(Truth::kProductive) += u.lost_undecided_ms / 1e3;
  at(Truth::kLost) -= u.lost_undecided_ms / 1e3;
  return s;
}

void ExpectJobMatches(const JobTruth& truth, const core::JobReport& job) {
  SCOPED_TRACE(truth.job_id);
  const bool training = job.workload == v1::JobSubmitted::TRAINING;
  const auto expected = Expected(truth, training);
  EXPECT_NEAR(job.total_ns / 1e9, truth.TotalMs() / 1e3, kRoundingSeconds);
  for (int c = 0; c < kTruthCategories; ++c) {
    const char* name = TruthName(static_cast<Truth>(c));
    EXPECT_NEAR(Seconds(job, name), expected[c], kRoundingSeconds) << name;
  }
  const double ideal =
      truth.ideal_seconds +
      truth.unobservable.lost_undecided_steps * truth.ideal_step_seconds;
  EXPECT_NEAR(job.ideal_seconds, ideal, 1e-6 * (1 + ideal));
  EXPECT_EQ(job.interruptions, truth.interruptions);
  EXPECT_EQ(job.chips, truth.chips);
}

class GroundTruthTest : public ::testing::TestWithParam<uint64_t> {};

TEST_P(GroundTruthTest, ReportMatchesTheSimulatorsTimeline) {
  // Two seeds in CI; all five nightly (.ci/nightly sets GOODPUT_NIGHTLY=1).
  if (GetParam() > 2 && std::getenv("GOODPUT_NIGHTLY") == nullptr) {
    GTEST_SKIP() << "nightly only: set GOODPUT_NIGHTLY=1";
  }
  FleetSim sim(Fleet(GetParam()));
  std::ostringstream jsonl;
  JsonLinesSink sink(&jsonl);
  ASSERT_TRUE(sim.Run(sink).ok());
  const FleetTruth& truth = sim.truth();
  const core::FleetReport report = Replay(jsonl.str(), truth.end_ms);
  ASSERT_EQ(report.jobs.size(), truth.jobs.size());
  std::map<std::string, const core::JobReport*> by_id;
  for (const core::JobReport& job : report.jobs) by_id[job.job_id] = &job;
  for (const JobTruth& job : truth.jobs) {
    ASSERT_TRUE(by_id.count(job.job_id)) << job.job_id;
    ExpectJobMatches(job, *by_id[job.job_id]);
  }
  ASSERT_TRUE(report.fleet.capacity_chip_seconds.has_value());
  EXPECT_NEAR(*report.fleet.capacity_chip_seconds, truth.capacity_chip_seconds,
              1e-6 * truth.capacity_chip_seconds);
}

// The fleets exercise what the comparison is about: queueing, restarts,
// lost work, every phase, and each unobservable case somewhere.
TEST(GroundTruthCoverageTest, SeedsCoverEveryCategoryAndCase) {
  std::array<int64_t, kTruthCategories> ms{};
  Unobservable u;
  int64_t interruptions = 0;
  for (uint64_t seed : {1, 2, 3, 4, 5}) {
    FleetSim sim(Fleet(seed));
    CountingSink sink;
    ASSERT_TRUE(sim.Run(sink).ok());
    for (const JobTruth& job : sim.truth().jobs) {
      for (int c = 0; c < kTruthCategories; ++c) ms[c] += job.ms[c];
      interruptions += job.interruptions;
      u.wait_in_killed_step_ms += job.unobservable.wait_in_killed_step_ms;
      u.idle_in_killed_step_ms += job.unobservable.idle_in_killed_step_ms;
      u.wait_in_flight_ms += job.unobservable.wait_in_flight_ms;
      u.lost_undecided_ms += job.unobservable.lost_undecided_ms;
    }
  }
  for (int c = 0; c < kTruthCategories; ++c) {
    if (static_cast<Truth>(c) == Truth::kCustom) continue;  // not simulated
    EXPECT_GT(ms[c], 0) << TruthName(static_cast<Truth>(c));
  }
  EXPECT_GT(interruptions, 10);
  EXPECT_GT(u.wait_in_killed_step_ms, 0);
  EXPECT_GT(u.idle_in_killed_step_ms, 0);
  EXPECT_GT(u.wait_in_flight_ms, 0);
  EXPECT_GT(u.lost_undecided_ms, 0);
}

INSTANTIATE_TEST_SUITE_P(Seeds, GroundTruthTest,
                         ::testing::Values(1, 2, 3, 4, 5));

}  // namespace
}  // namespace goodput::sim
