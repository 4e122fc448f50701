// Scale of a simulated 1M-chip fleet (issue 6). Not a test; run by hand
// (commands and results in BENCHMARKS.md, section "Fleet scale").
//
//   sim_scale_bench rate [--hosts=250000 --jobs=100000 --duration_min=60
//                         --seed=1]
//       goodput-sim's fleet (every job submitted in the first minute) into
//       a counting sink: events per simulated minute by kind, and the
//       steady-state rate (median minute of the second half) in events per
//       simulated second. Also the simulator's own speed.
//
//   sim_scale_bench memory [--hosts --jobs --duration_min=60 --seed
//                           --reports=50]
//       The same fleet applied live into a core::FleetTracker (the live
//       state goodputd keeps), compared with the same simulation into a
//       counting sink: heap in use (mallinfo2) and RSS per job, at the end
//       of the run with every job in steady state; then FleetTracker::Report
//       latency for the whole fleet and JobTracker::Report for one job
//       (p50/p99 of --reports runs).
//
//   sim_scale_bench steady [--jobs=100000]
//       --jobs JobTrackers in a FleetTracker, each in the simplest steady
//       state (submitted, allocated, started, TRAINING, 3 steps, a
//       checkpoint of step 3, so nothing pending): heap (mallinfo2) per
//       job, and sizeof(JobTracker).
#include <malloc.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <vector>

#include "bench/bench_util.h"
#include "core/config.h"
#include "core/fleet_tracker.h"
#include "sim/event_sink.h"
#include "sim/fleet_sim.h"

namespace goodput::bench {
namespace {

// Counts events per simulated minute and kind.
class MinuteSink : public sim::EventSink {
 public:
  void Emit(const v1::Event& e) override {
    const int64_t minute = e.time().seconds() / 60;
    per_minute_[minute]++;
    by_kind_[v1::Event::GetDescriptor()
                 ->FindFieldByNumber(e.body_case())
                 ->name()]++;
    ++total_;
  }
  std::map<int64_t, int64_t> per_minute_;
  std::map<std::string, int64_t> by_kind_;
  int64_t total_ = 0;
};

// Applies every event to a FleetTracker, as goodputd's live state does.
class TrackerSink : public sim::EventSink {
 public:
  explicit TrackerSink(core::FleetTracker* fleet) : fleet_(fleet) {}
  void Emit(const v1::Event& e) override {
    last_ns_ = std::max(last_ns_,
                        e.time().seconds() * 1'000'000'000 + e.time().nanos());
    if (!fleet_->Apply(e).ok()) ++errors_;
  }
  core::FleetTracker* fleet_;
  int64_t errors_ = 0, last_ns_ = 0;
};

sim::SimConfig Fleet(const Args& args) {
  sim::SimConfig c;
  c.seed = args.Int("seed", 1);
  c.hosts = args.Int("hosts", 250000);
  c.jobs = args.Int("jobs", 100000);
  c.duration_ms = args.Int("duration_min", 60) * 60'000;
  c.initial_jobs = 1;  // a fleet in steady state, not one filling up
  return c;
}

int64_t HeapInUse() { return static_cast<int64_t>(mallinfo2().uordblks); }

int Rate(const Args& args) {
  const sim::SimConfig config = Fleet(args);
  Timer timer;
  sim::FleetSim fleet(config);
  MinuteSink sink;
  (void)fleet.Run(sink);
  int64_t chips = 0;
  for (const sim::Host& h : fleet.hosts().hosts()) chips += h.chips;
  std::printf("fleet: %lld hosts, %lld chips, %lld jobs, %lld simulated min\n",
              (long long)config.hosts, (long long)chips, (long long)config.jobs,
              (long long)(config.duration_ms / 60'000));
  std::printf("simulator: %lld events in %s = %.0f ev/s\n",
              (long long)sink.total_, timer.str().c_str(),
              sink.total_ / timer.wall());
  std::vector<double> minutes;
  for (const auto& [minute, n] : sink.per_minute_) minutes.push_back(n);
  for (size_t i = 0; i < minutes.size();
       i += std::max<size_t>(1, minutes.size() / 12)) {
    std::printf("  minute %3zu: %8.0f ev/simulated s\n", i, minutes[i] / 60);
  }
  std::vector<double> tail(minutes.begin() + minutes.size() / 2, minutes.end());
  std::printf(
      "steady state (median minute of the second half): %.0f ev/simulated s\n",
      Percentile(tail, 0.5) / 60);
  for (const auto& [kind, n] : sink.by_kind_) {
    std::printf("  %-14s %10lld (%.1f%%)\n", kind.c_str(), (long long)n,
                100.0 * n / sink.total_);
  }
  return 0;
}

void ReportLatency(const core::FleetTracker& fleet, int64_t as_of,
                   int reports) {
  std::vector<double> fleet_ms, job_ms;
  const double cpu_start = ProcessCpuSeconds();
  const core::JobTracker* one = fleet.FindJob("job-0");
  for (int i = 0; i < reports; ++i) {
    auto start = SteadyClock::now();
    core::FleetReport r = fleet.Report(as_of);
    fleet_ms.push_back(SecondsSince(start) * 1e3);
    start = SteadyClock::now();
    if (one != nullptr) (void)one->Report(as_of);
    job_ms.push_back(SecondsSince(start) * 1e3);
  }
  const double cpu_ms = (ProcessCpuSeconds() - cpu_start) * 1e3 / reports;
  std::printf(
      "FleetTracker::Report (%zu jobs): p50 %.1f ms, p99 %.1f ms "
      "(mean CPU %.1f ms)\n",
      fleet.job_count(), Percentile(fleet_ms, 0.5), Percentile(fleet_ms, 0.99),
      cpu_ms);
  std::printf("JobTracker::Report (one job): p50 %.2f us, p99 %.2f us\n",
              Percentile(job_ms, 0.5) * 1e3, Percentile(job_ms, 0.99) * 1e3);
}

int Memory(const Args& args) {
  const sim::SimConfig config = Fleet(args);
  int64_t sim_only = 0;
  {
    const int64_t before = HeapInUse();
    sim::FleetSim fleet(config);
    sim::CountingSink sink;
    (void)fleet.Run(sink);
    sim_only = HeapInUse() - before;
    std::printf("simulation alone: %lld events, heap +%.1f MiB\n",
                (long long)sink.total(), sim_only / 1048576.0);
  }
  malloc_trim(0);
  const int64_t rss_before = RssKiB(), heap_before = HeapInUse();
  core::Config core_config;
  core::FleetTracker tracker(&core_config);
  sim::FleetSim fleet(config);
  TrackerSink sink(&tracker);
  Timer timer;
  (void)fleet.Run(sink);
  const double seconds = timer.wall();
  const int64_t heap = HeapInUse() - heap_before - sim_only;
  const int64_t jobs = static_cast<int64_t>(tracker.job_count());
  std::printf("applied in %s (%lld rejected)\n", timer.str().c_str(),
              (long long)sink.errors_);
  (void)seconds;
  std::printf(
      "core state: %lld jobs, heap %.1f MiB = %.0f B per job "
      "(RSS +%.1f MiB incl. the simulator)\n",
      (long long)jobs, heap / 1048576.0,
      static_cast<double>(heap) / std::max<int64_t>(1, jobs),
      (RssKiB() - rss_before) / 1024.0);
  ReportLatency(tracker, sink.last_ns_,
                static_cast<int>(args.Int("reports", 50)));
  return 0;
}

v1::Event JobEvent(const std::string& job, int64_t second) {
  v1::Event e;
  e.set_job_id(job);
  e.mutable_time()->set_seconds(1'795'305'600 + second);
  return e;
}

// The events of one job in the simplest steady state.
std::vector<v1::Event> SteadyJob(const std::string& job) {
  std::vector<v1::Event> events;
  v1::Event e = JobEvent(job, 0);
  v1::JobSubmitted* s = e.mutable_job_submitted();
  s->set_chips(8);
  s->set_accelerator("tpu-v5p");
  s->set_workload(v1::JobSubmitted::TRAINING);
  s->set_framework("jax");
  (*s->mutable_labels())["team"] = "search";
  s->set_step_flops(1e15);
  events.push_back(e);
  e = JobEvent(job, 10);
  e.mutable_allocation()->set_chips(8);
  events.push_back(e);
  e = JobEvent(job, 10);
  e.set_attempt("a1");
  e.mutable_started();
  events.push_back(e);
  e.mutable_activity()->set_kind(v1::Activity::TRAINING);
  events.push_back(e);
  for (int step = 1; step <= 3; ++step) {
    e = JobEvent(job, 10 + step);
    e.set_attempt("a1");
    e.mutable_step()->set_step(step);
    events.push_back(e);
  }
  e.mutable_checkpoint()->set_step(3);
  events.push_back(e);
  return events;
}

int Steady(const Args& args) {
  const int64_t jobs = args.Int("jobs", 100000);
  core::Config config;
  malloc_trim(0);
  const int64_t before = HeapInUse(), rss_before = RssKiB();
  core::FleetTracker tracker(&config);
  int64_t errors = 0;
  for (int64_t i = 0; i < jobs; ++i) {
    for (const v1::Event& e : SteadyJob("job-" + std::to_string(i))) {
      if (!tracker.Apply(e).ok()) ++errors;
    }
  }
  const int64_t heap = HeapInUse() - before;
  std::printf(
      "%lld steady JobTrackers (%lld rejected): heap %.1f MiB = "
      "%.0f B per job, RSS +%.1f MiB; sizeof(JobTracker) = %zu B\n",
      (long long)jobs, (long long)errors, heap / 1048576.0,
      static_cast<double>(heap) / jobs, (RssKiB() - rss_before) / 1024.0,
      sizeof(core::JobTracker));
  return 0;
}

}  // namespace
}  // namespace goodput::bench

int main(int argc, char** argv) {
  goodput::bench::Args args(argc, argv);
  args.CheckKnown({"hosts", "jobs", "duration_min", "seed", "reports"});
  const std::string mode =
      args.positional().empty() ? "" : args.positional()[0];
  if (mode == "rate") return goodput::bench::Rate(args);
  if (mode == "memory") return goodput::bench::Memory(args);
  if (mode == "steady") return goodput::bench::Steady(args);
  std::fprintf(stderr, "usage: sim_scale_bench rate|memory [--flags]\n");
  return 2;
}
