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
// Fleets with elastic jobs (SPEC rule 14) check, besides, each elastic
// job's min_chips, chip-seconds at the held chips, degraded_chip_seconds
// and slice_efficiency, and the fleet's sums over elastic jobs; a step
// group abandoned at a resize is a killed step for the above.
#include <cstdlib>
#include <map>
#include <sstream>
#include <string>
#include <vector>

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

// Elastic jobs that lose hosts: more multi-host jobs, more interruptions
// (15% of them host failures).
SimConfig ElasticFleet(uint64_t seed) {
  SimConfig c = Fleet(seed);
  c.elastic_jobs = 0.6;
  c.size_tail = 0.35;
  c.mtbi_ms = 3600'000;
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

// Rule 14's measures; a fixed-size job has none.
void ExpectElasticMatches(const JobTruth& truth, const core::JobReport& job) {
  const std::optional<core::ElasticMeasures> m = core::JobElastic(job);
  if (truth.min_chips == 0) {
    EXPECT_FALSE(job.min_chips.has_value());
    EXPECT_FALSE(m.has_value());
    return;
  }
  ASSERT_TRUE(job.min_chips.has_value());
  EXPECT_EQ(*job.min_chips, truth.min_chips);
  ASSERT_TRUE(m.has_value());
  const double tolerance = kRoundingSeconds * truth.chips;
  EXPECT_NEAR(m->held_chip_seconds, truth.held_chip_ms / 1e3, tolerance);
  EXPECT_NEAR(m->degraded_chip_seconds, truth.DegradedChipMs() / 1e3,
              tolerance);
  if (truth.AllocatedMs() == 0) {
    EXPECT_FALSE(m->slice_efficiency.has_value());
  } else {
    ASSERT_TRUE(m->slice_efficiency.has_value());
    EXPECT_NEAR(
        *m->slice_efficiency,
        static_cast<double>(truth.held_chip_ms) / truth.RequestedChipMs(),
        1e-6);
  }
  // Every instant at the chips it counts with: held while allocated,
  // requested while queued or in recovery.
  double chip_seconds = 0;
  for (double v : job.chip_seconds) chip_seconds += v;
  const int64_t waiting =
      truth.Get(Truth::kQueued) + truth.Get(Truth::kRecovery);
  EXPECT_NEAR(chip_seconds, (truth.held_chip_ms + truth.chips * waiting) / 1e3,
              tolerance);
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
  ExpectElasticMatches(truth, job);
}

// Replays `config`'s fleet and compares every job and the fleet with the
// truth.
void ExpectFleetMatches(const SimConfig& config) {
  FleetSim sim(config);
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
  const core::ElasticMeasures fleet = core::TotalsElastic(report.fleet);
  const double held = truth.ElasticHeldChipMs() / 1e3;
  const double requested = truth.ElasticRequestedChipMs() / 1e3;
  EXPECT_NEAR(fleet.held_chip_seconds, held, 1e-6 * (1 + held));
  EXPECT_NEAR(fleet.requested_chip_seconds, requested, 1e-6 * (1 + requested));
  EXPECT_EQ(fleet.slice_efficiency.has_value(), requested > 0);
}

// One seed in CI (its time budget); all five nightly (.ci/nightly sets
// GOODPUT_NIGHTLY=1).
bool Nightly(uint64_t seed) {
  return seed <= 1 || std::getenv("GOODPUT_NIGHTLY") != nullptr;
}

class GroundTruthTest : public ::testing::TestWithParam<uint64_t> {};

TEST_P(GroundTruthTest, ReportMatchesTheSimulatorsTimeline) {
  if (!Nightly(GetParam())) GTEST_SKIP() << "nightly: set GOODPUT_NIGHTLY=1";
  ExpectFleetMatches(Fleet(GetParam()));
}

class ElasticGroundTruthTest : public ::testing::TestWithParam<uint64_t> {};

TEST_P(ElasticGroundTruthTest, ReportMatchesTheSimulatorsTimeline) {
  if (!Nightly(GetParam())) GTEST_SKIP() << "nightly: set GOODPUT_NIGHTLY=1";
  ExpectFleetMatches(ElasticFleet(GetParam()));
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
    const Truth t = static_cast<Truth>(c);
    if (t == Truth::kCustom || t == Truth::kReshard) continue;  // none
    EXPECT_GT(ms[c], 0) << TruthName(static_cast<Truth>(c));
  }
  EXPECT_GT(interruptions, 10);
  EXPECT_GT(u.wait_in_killed_step_ms, 0);
  EXPECT_GT(u.idle_in_killed_step_ms, 0);
  EXPECT_GT(u.wait_in_flight_ms, 0);
  EXPECT_GT(u.lost_undecided_ms, 0);
}

// Resizes seen in a fleet's events: shrinks and grows, per workload.
struct Resizes {
  int64_t shrinks = 0, grows = 0, serving = 0;
};

Resizes CountResizes(const std::vector<v1::Event>& events) {
  Resizes r;
  std::map<std::string, int64_t> held;
  std::map<std::string, bool> training, killed;
  for (const v1::Event& e : events) {
    const std::string& id = e.job_id();
    if (e.has_job_submitted()) {
      training[id] = e.job_submitted().workload() == v1::JobSubmitted::TRAINING;
    }
    // After an interruption, an allocation before the next `started` is a
    // new gang; a `started` first is a restart in place.
    if (e.has_interruption()) killed[id] = true;
    if (e.has_started()) killed[id] = false;
    if (!e.has_allocation()) continue;
    const int64_t chips = e.allocation().chips();
    if (killed[id]) {
      held.erase(id);
      killed[id] = false;
    }
    if (held.count(id) && chips != held[id]) {
      ++(chips < held[id] ? r.shrinks : r.grows);
      if (!training[id]) ++r.serving;
    }
    held[id] = chips;
  }
  return r;
}

// The elastic fleets shrink and grow training and serving jobs, abandon
// step groups at resizes, and reshard; the fixed-size fleets have no
// elastic job.
TEST(GroundTruthCoverageTest, ElasticSeedsShrinkAndGrowJobs) {
  int64_t resizes = 0, reshard_ms = 0, degraded_ms = 0, elastic = 0;
  Resizes seen;
  Unobservable u;
  for (uint64_t seed : {1, 2}) {
    FleetSim sim(ElasticFleet(seed));
    VectorSink sink;
    ASSERT_TRUE(sim.Run(sink).ok());
    for (const JobTruth& job : sim.truth().jobs) {
      elastic += job.min_chips > 0;
      resizes += job.resizes;
      reshard_ms += job.Get(Truth::kReshard);
      degraded_ms += job.DegradedChipMs();
      if (job.resizes == 0) continue;
      u.wait_in_killed_step_ms += job.unobservable.wait_in_killed_step_ms;
      u.idle_in_killed_step_ms += job.unobservable.idle_in_killed_step_ms;
    }
    const Resizes r = CountResizes(sink.events());
    seen.shrinks += r.shrinks;
    seen.grows += r.grows;
    seen.serving += r.serving;
  }
  EXPECT_GT(elastic, 40);
  EXPECT_EQ(seen.shrinks + seen.grows, resizes);
  EXPECT_GT(seen.shrinks, 10);
  EXPECT_GT(seen.grows, 5);
  EXPECT_GT(seen.serving, 0);
  EXPECT_GT(reshard_ms, 0);
  EXPECT_GT(degraded_ms, 0);
  EXPECT_GT(u.wait_in_killed_step_ms, 0);
  EXPECT_GT(u.idle_in_killed_step_ms, 0);
  FleetSim fixed(Fleet(1));
  CountingSink sink;
  ASSERT_TRUE(fixed.Run(sink).ok());
  for (const JobTruth& job : fixed.truth().jobs) EXPECT_EQ(job.min_chips, 0);
}

INSTANTIATE_TEST_SUITE_P(Seeds, GroundTruthTest,
                         ::testing::Values(1, 2, 3, 4, 5));
INSTANTIATE_TEST_SUITE_P(Seeds, ElasticGroundTruthTest,
                         ::testing::Values(1, 2, 3, 4, 5));

}  // namespace
}  // namespace goodput::sim
