// Hand-made elastic jobs (SPEC rule 14) in goodput-sim: a host failure
// while the job steps shrinks it to the chips left (allocation, RESHARD),
// and it grows back when the host returns. Each case checks the events,
// the simulator's truth computed by hand, and that replaying the events
// (the `goodputctl replay --json` path) reports the same.
// The job wants 16 chips on 8-chip hosts and runs on 8; a step computes
// in 1 s at 16 chips (2 s at 8); RESHARD takes 30 s; a host is repaired
// 10 min after it fails.
#include <sstream>
#include <string>
#include <vector>

#include "core/category.h"
#include "core/report.h"
#include "gtest/gtest.h"
#include "report/replay.h"
#include "sim/event_sink.h"
#include "sim/job_run.h"

namespace goodput::sim {
namespace {

constexpr int64_t kAllocated = 60'000;  // the job gets its chips at 60 s
constexpr int64_t kReshard = 30'000, kRepair = 600'000;

JobSpec Elastic(v1::JobSubmitted::Workload workload) {
  JobSpec s;
  s.job_id = "j";
  s.chips = 16;
  s.min_chips = 8;
  s.chips_per_host = 8;
  s.accelerator = "tpu-v5e";
  s.workload = workload;
  s.framework = "jax";
  s.step_ms = workload == v1::JobSubmitted::SERVING ? 10'000 : 1000;
  s.ideal_step_s = 0.5;
  s.step_flops = 16 * 197e12 * 0.5;
  s.steps_per_report = workload == v1::JobSubmitted::SERVING ? 1 : 10;
  s.total_steps = 100'000;
  s.idle_share = workload == v1::JobSubmitted::SERVING ? 0.3 : 0;
  s.mtbi_ms = int64_t{1} << 50;  // no interruption but the ones we make
  s.reshard_ms = kReshard;
  s.repair_ms = kRepair;
  return s;
}

int64_t Ms(const v1::Event& e) {
  return e.time().seconds() * 1000 + e.time().nanos() / 1'000'000;
}

// One job driven by hand: its events and its truth.
class ElasticRun {
 public:
  explicit ElasticRun(JobSpec spec) : job_(std::move(spec), &rng_) {
    job_.Submit(sink_);
    job_.Allocate(kAllocated, "host-0", sink_);
  }

  // Runs to the first step report at or after `after_ms` that starts a
  // step group (not an input stall); returns its time.
  int64_t RunToStepGroup(int64_t after_ms) {
    while (true) {
      EXPECT_EQ(job_.Fire(sink_), JobRun::Outcome::kRunning);
      const v1::Event& last = sink_.events().back();
      if (last.has_step() && Ms(last) >= after_ms &&
          job_.next_ms() > Ms(last)) {
        return Ms(last);
      }
    }
  }

  // Fires everything due before `t_ms`; the last outcome.
  JobRun::Outcome RunUntil(int64_t t_ms) {
    JobRun::Outcome outcome = JobRun::Outcome::kRunning;
    while (job_.next_ms() < t_ms && outcome == JobRun::Outcome::kRunning) {
      outcome = job_.Fire(sink_);
    }
    return outcome;
  }

  // The events at `t_ms`, one line each ("allocation 8", "RESHARD", ...).
  std::vector<std::string> At(int64_t t_ms) {
    std::vector<std::string> out;
    for (const v1::Event& e : sink_.events()) {
      if (Ms(e) != t_ms) continue;
      if (e.has_allocation()) {
        out.push_back("allocation " + std::to_string(e.allocation().chips()));
      } else if (e.has_activity()) {
        out.push_back(v1::Activity::Kind_Name(e.activity().kind()));
      } else if (e.has_step()) {
        out.push_back("step " + std::to_string(e.step().step()));
      } else if (e.has_interruption()) {
        out.push_back("interruption");
      }
    }
    return out;
  }

  // The last step report before `t_ms`.
  int64_t LastStepBefore(int64_t t_ms) {
    int64_t last = -1;
    for (const v1::Event& e : sink_.events()) {
      if (e.has_step() && Ms(e) < t_ms) last = Ms(e);
    }
    return last;
  }

  // The service's report of the events as of `as_of_ms`.
  core::JobReport Replay(int64_t as_of_ms) {
    std::ostringstream jsonl;
    JsonLinesSink lines(&jsonl);
    for (const v1::Event& e : sink_.events()) lines.Emit(e);
    EXPECT_TRUE(lines.Finish().ok());
    report::ReplayOptions options;
    options.as_of_ns = as_of_ms * 1'000'000;
    report::Replayer replayer(options);
    std::istringstream in(jsonl.str());
    EXPECT_TRUE(replayer.AddInput(in, "sim").ok());
    auto result = replayer.Finish();
    EXPECT_TRUE(result.ok()) << result.status();
    EXPECT_TRUE(result->errors.empty());
    EXPECT_EQ(result->report.jobs.size(), 1u);
    return result->report.jobs.at(0);
  }

  JobRun& job() { return job_; }

 private:
  SimRandom rng_{11};
  VectorSink sink_;
  JobRun job_;
};

double Seconds(const core::JobReport& j, core::Category c) {
  return j.nanos[core::Index(c)] / 1e9;
}

TEST(JobRunElasticTest, TrainingShrinksAtAHostFailureAndGrowsBack) {
  ElasticRun run(Elastic(v1::JobSubmitted::TRAINING));
  // A group of 10 one-second steps starts at s; the host fails 7 s in.
  const int64_t s = run.RunToStepGroup(1'800'000);
  const int64_t fail = s + 7000;
  run.job().FailHostAt(fail);
  const int64_t end = fail + 900'000;
  ASSERT_EQ(run.RunUntil(end), JobRun::Outcome::kRunning);
  const JobTruth truth = run.job().Close(end);

  using V = std::vector<std::string>;
  EXPECT_EQ(run.At(fail), (V{"allocation 8", "RESHARD"}));
  EXPECT_EQ(run.At(fail + kReshard), (V{"TRAINING"}));
  // Groups of 10 steps take 20 s at 8 chips.
  EXPECT_EQ(run.LastStepBefore(fail + kReshard + 20'001),
            fail + kReshard + 20'000);
  // The host returns 570 s after TRAINING resumed: 28 groups and 10 s.
  const int64_t back = fail + kRepair;
  EXPECT_EQ(run.LastStepBefore(back), back - 10'000);
  EXPECT_EQ(run.At(back), (V{"allocation 16", "RESHARD"}));
  EXPECT_EQ(run.At(back + kReshard), (V{"TRAINING"}));
  EXPECT_EQ(run.LastStepBefore(back + kReshard + 10'001),
            back + kReshard + 10'000);

  EXPECT_EQ(truth.resizes, 2);
  EXPECT_EQ(truth.interruptions, 0);
  EXPECT_EQ(truth.Get(Truth::kReshard), 2 * kReshard);
  EXPECT_EQ(truth.Get(Truth::kLost), 7000 + 10'000);  // the abandoned groups
  EXPECT_EQ(truth.DegradedChipMs(), 8 * kRepair);     // 8 chips for 10 min
  EXPECT_EQ(truth.held_chip_ms, 16 * (end - kAllocated) - 8 * kRepair);

  const core::JobReport report = run.Replay(end);
  ASSERT_TRUE(report.min_chips.has_value());
  EXPECT_EQ(*report.min_chips, 8);
  EXPECT_DOUBLE_EQ(Seconds(report, core::Category::kReshard), 60);
  EXPECT_DOUBLE_EQ(Seconds(report, core::Category::kLost), 17);
  EXPECT_DOUBLE_EQ(Seconds(report, core::Category::kProductive),
                   truth.Get(Truth::kProductive) / 1e3);
  const auto measures = core::JobElastic(report);
  ASSERT_TRUE(measures.has_value());
  EXPECT_DOUBLE_EQ(measures->degraded_chip_seconds, 4800);
  ASSERT_TRUE(measures->slice_efficiency.has_value());
  EXPECT_DOUBLE_EQ(*measures->slice_efficiency,
                   1 - 4800.0 / (16 * (end - kAllocated) / 1e3));
  EXPECT_DOUBLE_EQ(report.ideal_seconds, truth.ideal_seconds);
}

TEST(JobRunElasticTest, ServingKeepsTheWindowInFlightAtAResize) {
  ElasticRun run(Elastic(v1::JobSubmitted::SERVING));
  const int64_t s = run.RunToStepGroup(1'800'000);
  const int64_t fail = s + 9000;  // 9 s into a 10 s window (plus idle)
  run.job().FailHostAt(fail);
  const int64_t end = fail + 300'000;  // before the host returns
  ASSERT_EQ(run.RunUntil(end), JobRun::Outcome::kRunning);
  const JobTruth truth = run.job().Close(end);

  using V = std::vector<std::string>;
  EXPECT_EQ(run.At(fail), (V{"allocation 8", "RESHARD"}));
  EXPECT_EQ(run.At(fail + kReshard), (V{"SERVING"}));
  EXPECT_EQ(truth.resizes, 1);
  EXPECT_EQ(truth.Get(Truth::kLost), 0);
  EXPECT_EQ(truth.Get(Truth::kReshard), kReshard);
  EXPECT_EQ(truth.DegradedChipMs(), 8 * (end - fail));

  // The window's 9 s stay productive, its idle part included.
  const core::JobReport report = run.Replay(end);
  const Unobservable& u = truth.unobservable;
  EXPECT_GT(u.idle_in_killed_step_ms, 0);
  EXPECT_DOUBLE_EQ(Seconds(report, core::Category::kLost), 0);
  EXPECT_NEAR(Seconds(report, core::Category::kProductive),
              (truth.Get(Truth::kProductive) + u.idle_in_killed_step_ms +
               u.idle_in_flight_ms) /
                  1e3,
              1e-3);
  const auto measures = core::JobElastic(report);
  ASSERT_TRUE(measures.has_value());
  EXPECT_NEAR(measures->degraded_chip_seconds, 8 * (end - fail) / 1e3, 1e-6);
}

TEST(JobRunElasticTest, AHostFailureBelowMinChipsOrOutsideStepsKills) {
  ElasticRun run(Elastic(v1::JobSubmitted::TRAINING));
  const int64_t s = run.RunToStepGroup(1'800'000);
  run.job().FailHostAt(s + 7000);  // 16 -> 8 chips
  // 60 s later the job steps at 8 chips, its minimum (10 s into its second
  // group): a second failure ends the attempt like a fixed-size job's.
  const int64_t second = s + 67'000;
  ASSERT_EQ(run.RunUntil(second), JobRun::Outcome::kRunning);
  run.job().FailHostAt(second);
  ASSERT_EQ(run.RunUntil(second + 1), JobRun::Outcome::kRequeue);
  EXPECT_EQ(run.At(second), (std::vector<std::string>{"interruption"}));
  const JobTruth truth = run.job().Close(second);
  EXPECT_EQ(truth.resizes, 1);
  EXPECT_EQ(truth.interruptions, 1);
  EXPECT_EQ(truth.DegradedChipMs(), 8 * 60'000);
}

TEST(JobRunElasticTest, AHostFailureDuringInitKillsTheAttempt) {
  ElasticRun run(Elastic(v1::JobSubmitted::TRAINING));
  // Launch takes at most 60 s and INIT at least 20 s: at 121 s it inits.
  constexpr int64_t kInInit = kAllocated + 61'000;
  ASSERT_EQ(run.RunUntil(kInInit), JobRun::Outcome::kRunning);
  run.job().FailHostAt(kInInit);
  ASSERT_EQ(run.RunUntil(kInInit + 1), JobRun::Outcome::kRequeue);
  EXPECT_EQ(run.At(kInInit), (std::vector<std::string>{"interruption"}));
  const JobTruth truth = run.job().Close(kInInit + 60'000);
  EXPECT_EQ(truth.resizes, 0);
  EXPECT_EQ(truth.interruptions, 1);
  EXPECT_EQ(truth.Get(Truth::kRecovery), 60'000);
  EXPECT_EQ(truth.DegradedChipMs(), 0);
}

}  // namespace
}  // namespace goodput::sim
