// Core alone, on decoded events: events/s of FleetTracker::Apply for one
// long job and for a fleet, and memory per job. See BENCHMARKS.md.
#include <malloc.h>

#include <algorithm>
#include <map>
#include <string>

#include "bench/bench_events.h"
#include "benchmark/benchmark.h"
#include "core/fleet_tracker.h"
#include "core/job_windows.h"
#include "core/step_time_stats.h"

namespace goodput::bench {
namespace {

void ApplyAll(const std::vector<v1::Event>& events, benchmark::State& state) {
  core::Config config;
  for (auto _ : state) {
    core::FleetTracker fleet(&config);
    for (const v1::Event& e : events) {
      auto result = fleet.Apply(e);
      benchmark::DoNotOptimize(result);
    }
    benchmark::DoNotOptimize(fleet.job_count());
  }
  state.SetItemsProcessed(state.iterations() * events.size());
}

void BM_CoreOneJob100kSteps(benchmark::State& state) {
  ApplyAll(LongJob("llm", 100'000), state);
}
BENCHMARK(BM_CoreOneJob100kSteps)->Unit(benchmark::kMillisecond);

void BM_CoreFleet(benchmark::State& state) {
  ApplyAll(Fleet(static_cast<int>(state.range(0)), 1000), state);
}
BENCHMARK(BM_CoreFleet)->Arg(1000)->Unit(benchmark::kMillisecond);

void BM_CoreReport(benchmark::State& state) {
  core::Config config;
  core::FleetTracker fleet(&config);
  for (const v1::Event& e : Fleet(static_cast<int>(state.range(0)), 20)) {
    (void)fleet.Apply(e);
  }
  for (auto _ : state) {
    benchmark::DoNotOptimize(
        fleet.Report(1795341600LL * 1'000'000'000 + 3600LL * 1'000'000'000));
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_CoreReport)->Arg(10000)->Unit(benchmark::kMillisecond);

// Heap bytes per job of a fleet of running jobs, each with 20 completed
// steps (not yet durable) and a checkpoint every 100 (none reached).
void BM_CoreMemoryPerJob(benchmark::State& state) {
  const int jobs = static_cast<int>(state.range(0));
  auto events = Fleet(jobs, 20);
  core::Config config;
  for (auto _ : state) {
    size_t before = mallinfo2().uordblks;
    auto fleet = std::make_unique<core::FleetTracker>(&config);
    for (const v1::Event& e : events) (void)fleet->Apply(e);
    size_t after = mallinfo2().uordblks;
    state.counters["bytes_per_job"] =
        static_cast<double>(after - before) / jobs;
  }
}
BENCHMARK(BM_CoreMemoryPerJob)
    ->Arg(10000)
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond);

// Issue 18, slow steps: heap bytes per job of core::StepTimeStats alone
// after `steps` one-step reports of 1-3 s (bounded: a ring of 100 reports
// and a histogram bucket per distinct 1.1% of step time).
void BM_StepTimeStatsMemoryPerJob(benchmark::State& state) {
  const int jobs = 10'000;
  const int64_t steps = state.range(0);
  for (auto _ : state) {
    size_t before = mallinfo2().uordblks;
    std::vector<core::StepTimeStats> stats(jobs);
    for (int j = 0; j < jobs; ++j) {
      int64_t t = 0;
      for (int64_t i = 0; i < steps; ++i) {
        const int64_t ns = 1'000'000'000 + (i * 7'919'000 + j) % 2'000'000'000;
        stats[j].Add(ns, 1, t += ns);
      }
    }
    size_t after = mallinfo2().uordblks;
    state.counters["bytes_per_job"] =
        static_cast<double>(after - before) / jobs;
    benchmark::DoNotOptimize(stats.data());
  }
}
BENCHMARK(BM_StepTimeStatsMemoryPerJob)
    ->Arg(20)
    ->Arg(100)
    ->Arg(10'000)
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond);

// Issue 12 item 3: one job's events through core::JobWindows at the
// default grid (60 s edges for 2 h, 1 h edges for 25 h), against
// BM_CoreOneJob100kSteps (one step a second: 100k steps span 27.8 h).
void BM_CoreWindowsOneJob100kSteps(benchmark::State& state) {
  const auto events = LongJob("llm", 100'000);
  core::Config config;
  size_t windows = 0, shadows = 0;
  for (auto _ : state) {
    core::JobWindows job("llm", &config, core::WindowGrid{});
    for (const v1::Event& e : events) {
      auto result = job.Apply(e);
      benchmark::DoNotOptimize(result);
    }
    windows = job.window_count();
    shadows = job.shadow_count();
  }
  state.counters["windows"] = static_cast<double>(windows);
  state.counters["shadows"] = static_cast<double>(shadows);
  state.SetItemsProcessed(state.iterations() * events.size());
}
BENCHMARK(BM_CoreWindowsOneJob100kSteps)->Unit(benchmark::kMillisecond);

// One job of 20,000 steps (5.6 h) with a checkpoint every `range(0)` steps,
// through a plain core::JobTracker and through core::JobWindows at the
// default grid: what the `--since` windows cost per event as checkpoints
// grow apart (an edge stays a shadow tracker while a completion from before
// it waits for a checkpoint).
void BM_CoreTrackerCheckpointEvery(benchmark::State& state) {
  const auto events = LongJob("llm", 20'000, state.range(0));
  core::Config config;
  for (auto _ : state) {
    core::JobTracker job("llm", &config);
    for (const v1::Event& e : events) {
      auto result = job.Apply(e);
      benchmark::DoNotOptimize(result);
    }
  }
  state.SetItemsProcessed(state.iterations() * events.size());
}
BENCHMARK(BM_CoreTrackerCheckpointEvery)
    ->Arg(100)
    ->Arg(600)
    ->Arg(1800)
    ->Arg(3600)
    ->Unit(benchmark::kMillisecond);

void BM_CoreWindowsCheckpointEvery(benchmark::State& state) {
  const auto events = LongJob("llm", 20'000, state.range(0));
  core::Config config;
  size_t most_shadows = 0;
  for (auto _ : state) {
    core::JobWindows job("llm", &config, core::WindowGrid{});
    for (const v1::Event& e : events) {
      auto result = job.Apply(e);
      benchmark::DoNotOptimize(result);
      most_shadows = std::max(most_shadows, job.shadow_count());
    }
  }
  state.counters["most_shadows"] = static_cast<double>(most_shadows);
  state.SetItemsProcessed(state.iterations() * events.size());
}
BENCHMARK(BM_CoreWindowsCheckpointEvery)
    ->Arg(100)
    ->Arg(600)
    ->Arg(1800)
    ->Arg(3600)
    ->Unit(benchmark::kMillisecond);

// Heap bytes per job of `range(0)` running jobs with JobWindows after 3 h
// of one step a second (the edges of the 2 h fine horizon plus 3 coarse).
void BM_CoreWindowsMemoryPerJob(benchmark::State& state) {
  const int jobs = static_cast<int>(state.range(0));
  const auto events = Fleet(jobs, 3 * 3600);
  core::Config config;
  for (auto _ : state) {
    std::map<std::string, core::JobWindows> fleet;
    size_t before = mallinfo2().uordblks;
    for (const v1::Event& e : events) {
      auto it =
          fleet.try_emplace(e.job_id(), e.job_id(), &config, core::WindowGrid{})
              .first;
      (void)it->second.Apply(e);
    }
    size_t after = mallinfo2().uordblks;
    state.counters["bytes_per_job"] =
        static_cast<double>(after - before) / jobs;
    state.counters["windows_per_job"] =
        static_cast<double>(fleet.begin()->second.window_count());
    state.counters["shadows_per_job"] =
        static_cast<double>(fleet.begin()->second.shadow_count());
  }
}
BENCHMARK(BM_CoreWindowsMemoryPerJob)
    ->Arg(20)
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond);

// One job's report since 1 h ago (snapped to the grid) from its windows.
void BM_CoreWindowReport(benchmark::State& state) {
  const auto events = LongJob("llm", 3 * 3600);
  core::Config config;
  core::JobWindows job("llm", &config, core::WindowGrid{});
  for (const v1::Event& e : events) (void)job.Apply(e);
  const int64_t as_of = job.live().cursor_ns();
  core::Config windowed = config;
  windowed.since_ns =
      *core::WindowGrid{}.Snap(as_of - 3600 * core::kNanosPerSecond, as_of);
  for (auto _ : state) {
    auto report = job.Report(as_of, &windowed);
    benchmark::DoNotOptimize(report);
  }
}
BENCHMARK(BM_CoreWindowReport)->Unit(benchmark::kMicrosecond);

// The stored size of one running job's state record parts after 3 h of
// one step a second (range(0) = 100: a checkpoint every 100 steps), or
// 3 h 50 min with a checkpoint every range(0) steps (50 min of steps
// since the last hourly one): its tracker (JobTrackerState) and its
// --since edges (JobWindowsState, StoredJobState.windows); the time is
// SaveEdges plus serializing them, what each state record now adds.
void BM_CoreWindowsStateBytes(benchmark::State& state) {
  const int64_t every = state.range(0);
  const auto events =
      LongJob("llm", every == 100 ? 3 * 3600 : 3 * 3600 + 3000, every);
  core::Config config;
  core::JobWindows job("llm", &config, core::WindowGrid{});
  size_t before = mallinfo2().uordblks;
  for (const v1::Event& e : events) (void)job.Apply(e);
  size_t heap = mallinfo2().uordblks - before;
  internal::v1::JobTrackerState tracker;
  job.live().SaveState(&tracker);
  size_t edges_bytes = 0;
  for (auto _ : state) {
    internal::v1::JobWindowsState edges;
    job.SaveEdges(&edges);
    std::string bytes = edges.SerializeAsString();
    edges_bytes = bytes.size();
    benchmark::DoNotOptimize(bytes);
  }
  state.counters["tracker_bytes"] =
      static_cast<double>(tracker.SerializeAsString().size());
  state.counters["edges_bytes"] = static_cast<double>(edges_bytes);
  state.counters["edges"] = static_cast<double>(job.window_count());
  state.counters["shadows"] = static_cast<double>(job.shadow_count());
  state.counters["heap_bytes"] = static_cast<double>(heap);
}
BENCHMARK(BM_CoreWindowsStateBytes)
    ->Arg(100)
    ->Arg(3600)
    ->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace goodput::bench

BENCHMARK_MAIN();
