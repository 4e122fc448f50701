#include "sim/job_run.h"

#include "gtest/gtest.h"
#include "sim/event_sink.h"

namespace goodput::sim {
namespace {

JobSpec Training() {
  JobSpec s;
  s.job_id = "j";
  s.chips = 8;
  s.accelerator = "tpu-v5p";
  s.framework = "jax";
  s.step_ms = 1000;
  s.step_flops = 8 * 459e12 * 0.5;
  s.ideal_step_s = 0.5;
  s.steps_per_report = 10;
  s.total_steps = 100;
  s.checkpoint_every = 50;
  s.mtbi_ms = int64_t{1} << 50;  // never interrupted
  return s;
}

// Drives one job alone to its end (or `end_ms`) and returns its truth.
JobTruth RunAlone(JobSpec spec, int64_t end_ms, VectorSink* sink) {
  SimRandom rng(7);
  JobRun job(spec, &rng);
  job.Submit(*sink);
  job.Allocate(60'000, "host-0", *sink);
  while (job.next_ms() < end_ms) {
    if (job.Fire(*sink) != JobRun::Outcome::kRunning) break;
  }
  return job.Close(end_ms);
}

TEST(JobRunTest, HealthyRunBooksEveryMillisecondOnce) {
  VectorSink sink;
  const JobTruth t = RunAlone(Training(), int64_t{1} << 40, &sink);
  EXPECT_EQ(t.Get(Truth::kQueued), 60'000);
  EXPECT_EQ(t.Get(Truth::kProductive), 100 * 1000);
  EXPECT_EQ(t.Get(Truth::kLost), 0);
  EXPECT_GT(t.Get(Truth::kCheckpoint), 0);  // one blocking save at 50
  EXPECT_EQ(t.productive_steps, 100);
  EXPECT_DOUBLE_EQ(t.ideal_seconds, 50);
  const v1::Event& last = sink.events().back();
  ASSERT_TRUE(last.has_job_ended());
  EXPECT_EQ(last.job_ended().outcome(), v1::JobEnded::SUCCEEDED);
  const int64_t end_ms =
      last.time().seconds() * 1000 + last.time().nanos() / 1'000'000;
  EXPECT_EQ(t.TotalMs(), end_ms - 0);
}

TEST(JobRunTest, FirstReportOfAnAttemptIsOneStepThenEveryKth) {
  VectorSink sink;
  RunAlone(Training(), int64_t{1} << 40, &sink);
  std::vector<int64_t> steps;
  for (const v1::Event& e : sink.events()) {
    if (e.has_step()) steps.push_back(e.step().step());
  }
  ASSERT_GE(steps.size(), 3u);
  EXPECT_EQ(steps[0], 1);
  EXPECT_EQ(steps[1], 10);
  EXPECT_EQ(steps[2], 20);
  EXPECT_EQ(steps.back(), 100);
}

TEST(JobRunTest, KillsLoseWorkSinceTheCheckpointAndTheJobRedoesIt) {
  JobSpec spec = Training();
  spec.mtbi_ms = 900'000;
  spec.checkpoint_every = 20;
  spec.fatal_failures = 0;
  SimRandom rng(5);
  JobRun job(spec, &rng);
  VectorSink sink;
  job.Submit(sink);
  job.Allocate(0, "host-0", sink);
  int64_t now = 0;
  for (int i = 0; i < 100000; ++i) {
    now = job.next_ms();
    const JobRun::Outcome outcome = job.Fire(sink);
    if (outcome == JobRun::Outcome::kDone) break;
    if (outcome == JobRun::Outcome::kRequeue) {
      job.Allocate(now + 60'000, "host-1", sink);  // a minute of recovery
    }
  }
  ASSERT_TRUE(sink.events().back().has_job_ended());
  const JobTruth t = job.Close(int64_t{1} << 40);
  EXPECT_GE(t.interruptions, 1);
  EXPECT_GT(t.Get(Truth::kLost), 0);
  EXPECT_GT(t.Get(Truth::kRecovery), 0);
  EXPECT_EQ(t.Get(Truth::kProductive), 100 * 1000);  // the kept steps
  EXPECT_EQ(t.productive_steps, 100);
  EXPECT_EQ(t.unobservable.lost_undecided_ms, 0);  // a restart decided
}

}  // namespace
}  // namespace goodput::sim
