// Offline replay throughput (SPEC section 7, "Offline replay: events/s on
// one core"): the whole path of `goodputctl replay` through the
// report::Replayer library: read lines from a file (std::ifstream, as
// goodputctl does) -> LineDecoder -> sort -> core::FleetTracker -> report ->
// report JSON. Not a test; run it by hand, pinned to one core (see
// BENCHMARKS.md):
//
//   replay_bench gen-job FILE STEPS          one job of STEPS 1 s steps
//   replay_bench gen-fleet FILE JOBS STEPS   bench_events Fleet(JOBS, STEPS)
//   taskset -c 1 replay_bench run FILE [--reps=N]
//
// `run` prints, per repetition, the time of AddInput (read + decode),
// Finish (sort + apply + FleetReport), report::WriteReportJson and freeing the
// report::Replayer, and events/s of the whole (wall and CPU time); the last
// line is the median repetition. Generation is seeded by construction
// (bench_events is deterministic).
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "bench/bench_events.h"
#include "bench/bench_util.h"
#include "report/replay.h"
#include "report/report_json.h"

namespace goodput::bench {
namespace {

int Gen(const std::vector<v1::Event>& events, const std::string& path) {
  const auto start = SteadyClock::now();
  const int64_t bytes = WriteJsonLinesFile(events, path);
  if (bytes < 0) {
    std::fprintf(stderr, "cannot write %s\n", path.c_str());
    return 1;
  }
  std::printf("wrote %s: %zu events, %lld bytes (%.1f MiB) in %.1f s\n",
              path.c_str(), events.size(), static_cast<long long>(bytes),
              bytes / 1048576.0, SecondsSince(start));
  return 0;
}

struct Rep {
  double add_input_s = 0, finish_s = 0, json_s = 0, free_s = 0;
  double cpu_s = 0;  // CPU time of the three (differs from wall under load)
  int64_t events = 0, bad = 0, jobs = 0;
  double total() const { return add_input_s + finish_s + json_s + free_s; }
};

bool RunOnce(const std::string& path, Rep* rep) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "cannot read %s\n", path.c_str());
    return false;
  }
  const double cpu0 = ProcessCpuSeconds();
  auto t0 = SteadyClock::now();
  auto replayer = std::make_unique<report::Replayer>(report::ReplayOptions());
  absl::Status s = replayer->AddInput(in, path);
  rep->add_input_s = SecondsSince(t0);
  if (!s.ok()) {
    std::fprintf(stderr, "%s\n", std::string(s.message()).c_str());
    return false;
  }
  t0 = SteadyClock::now();
  absl::StatusOr<report::ReplayResult> result = replayer->Finish();
  rep->finish_s = SecondsSince(t0);
  if (!result.ok()) {
    std::fprintf(stderr, "%s\n",
                 std::string(result.status().message()).c_str());
    return false;
  }
  t0 = SteadyClock::now();
  absl::StatusOr<std::string> json = report::WriteReportJson(result->report);
  rep->json_s = SecondsSince(t0);
  t0 = SteadyClock::now();
  replayer.reset();  // goodputctl frees the events before it exits too
  rep->free_s = SecondsSince(t0);
  rep->cpu_s = ProcessCpuSeconds() - cpu0;
  if (!json.ok()) return false;
  rep->events = result->stats.events;
  rep->bad = result->stats.bad;
  rep->jobs = static_cast<int64_t>(result->report.jobs.size());
  return true;
}

void Print(const char* label, const Rep& r) {
  std::printf(
      "%-6s events=%lld bad=%lld jobs=%lld  read+decode=%.3fs  "
      "sort+apply+report=%.3fs  json=%.3fs  free=%.3fs  total=%.3fs  -> %.0f "
      "events/s  "
      "(cpu %.3fs -> %.0f events/cpu-s)\n",
      label, static_cast<long long>(r.events), static_cast<long long>(r.bad),
      static_cast<long long>(r.jobs), r.add_input_s, r.finish_s, r.json_s,
      r.free_s, r.total(), r.events / r.total(), r.cpu_s, r.events / r.cpu_s);
}

int Run(const std::string& path, int reps) {
  std::vector<Rep> all;
  for (int i = 0; i < reps; ++i) {
    Rep r;
    if (!RunOnce(path, &r)) return 1;
    Print(("rep" + std::to_string(i + 1)).c_str(), r);
    std::fflush(stdout);
    all.push_back(r);
  }
  std::sort(all.begin(), all.end(),
            [](const Rep& a, const Rep& b) { return a.total() < b.total(); });
  Print("median", all[all.size() / 2]);
  std::printf("peak RSS of this process: %.1f MiB\n", PeakRssKiB() / 1024.0);
  return 0;
}

int Main(int argc, char** argv) {
  Args args(argc, argv);
  args.CheckKnown({"reps"});
  const auto& pos = args.positional();
  if (pos.size() == 3 && pos[0] == "gen-job") {
    return Gen(LongJob("llm", std::stoll(pos[2])), pos[1]);
  }
  if (pos.size() == 4 && pos[0] == "gen-fleet") {
    const auto start = SteadyClock::now();
    std::vector<v1::Event> events =
        Fleet(std::stoi(pos[2]), std::stoll(pos[3]));
    std::printf("generated Fleet(%s, %s) in %.1f s\n", pos[2].c_str(),
                pos[3].c_str(), SecondsSince(start));
    return Gen(events, pos[1]);
  }
  if (pos.size() == 2 && pos[0] == "run") {
    return Run(pos[1], static_cast<int>(args.Int("reps", 3)));
  }
  std::fprintf(stderr,
               "usage: replay_bench gen-job FILE STEPS\n"
               "       replay_bench gen-fleet FILE JOBS STEPS\n"
               "       replay_bench run FILE [--reps=3]\n");
  return 2;
}

}  // namespace
}  // namespace goodput::bench

int main(int argc, char** argv) { return goodput::bench::Main(argc, argv); }
