// Lines per second through a log profile on one core (issue 19): a fleet's
// log volume is far larger than its event volume, so matching must not be
// the agent's bottleneck (target >= 1M lines/s/core on lines no rule
// takes). Driver, not Google Benchmark:
//   taskset -c 1 $B/bench/log_profile_bench [LINES] [REPS]
// For each built-in profile: non-matching lines (a typical mix: NCCL and
// framework chatter, Python warnings, tracebacks; about 100 bytes each),
// then lines that each rule takes (its step lines). Prints the median of
// REPS (default 5) per case, in lines per second of this thread's CPU time
// (and of wall time). Lines are in memory: this is the matcher, not the
// file reading.
#include <time.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "logs/builtin_profiles.h"
#include "logs/log_matcher.h"
#include "util/clock.h"

namespace {

using goodput::logs::LogMatcher;

// Lines no built-in rule takes.
const char* const kChatter[] = {
    "x1000c0s0b0n0:123:456 [0] NCCL INFO Channel 00/32 :    0   1   2   3   "
    "4   5   6   7",
    "/usr/lib/python3/dist-packages/torch/utils/data/dataloader.py:557: "
    "UserWarning: This DataLoader will create 8 worker processes",
    "  File \"/workspace/train.py\", line 412, in forward_step",
    "[2026-11-22 10:00:00,123] [INFO] [stage_1_and_2.py:1472:step] "
    "[deepspeed] OVERFLOW! Rank 0 Skipping step.",
    " > number of parameters on (tensor, pipeline) model parallel rank (0, "
    "0): 1055043584",
    "I1122 10:00:00.123456 140000 pjit.py:512] Compiling train_step for "
    "with global shapes and types",
};

// A line each profile's step rule takes.
std::string StepLine(const std::string& profile, int i) {
  if (profile == "megatron") {
    return absl::StrFormat(
        " [2026-11-22 10:00:00.000000] iteration %8d/  100000 | consumed "
        "samples:     %8d | elapsed time per iteration (ms): 1234.5 |",
        i, i * 64);
  }
  if (profile == "nemo") {
    return absl::StrFormat(
        "[default0]:Training epoch 0, iteration %d/100000 | lr: 1.499e-06 | "
        "global_batch_size: 512 | global_step: %d | reduced_train_loss: 11.03 "
        "| train_step_timing in s: 7.568 | consumed_samples: %d",
        i, i, (i + 1) * 512);
  }
  if (profile == "torchtitan") {
    return absl::StrFormat(
        "[titan] 2026-11-22 10:00:00,123 - root - INFO - \x1b[31mstep: %2d  "
        "\x1b[32mloss:  3.1234  \x1b[34mtps: 1,234",
        i);
  }
  if (profile == "maxtext") {
    return absl::StrFormat(
        "I1122 10:00:00.123456  1234 metric_logger.py:230] completed step: "
        "%d, seconds: 1.234, TFLOP/s/device: 150.000",
        i);
  }
  if (profile == "deepspeed") {
    return absl::StrFormat(
        "[2026-11-22 10:00:00,123] [INFO] [logging.py:128:log_dist] [Rank 0] "
        "step=%d, skipped=0, lr=[0.0001], mom=[(0.9, 0.999)]",
        i);
  }
  return "{'loss': 2.3456, 'grad_norm': 1.2345, 'learning_rate': 4.5e-05, "
         "'epoch': 0.1}";
}

// This thread's CPU time in seconds: "per core" whatever else the machine
// runs (a shared 2-core machine's load would otherwise halve a wall rate).
double ThreadCpuSeconds() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

struct Times {
  double wall = 0, cpu = 0;
};

// Wall and CPU seconds to match every line of `lines` once, with a fresh
// matcher.
Times RunOnce(const goodput::logs::LogProfile& profile,
              const std::vector<std::string>& lines, int64_t* events) {
  LogMatcher matcher(profile, {.job_id = "bench", .default_year = 2026});
  std::vector<goodput::v1::Event> out;
  goodput::RealClock clock;
  const int64_t start = clock.NowNanos();
  const double cpu = ThreadCpuSeconds();
  for (const std::string& line : lines) {
    out.clear();
    if (!matcher.Match(line, start, &out).ok()) std::abort();
    *events += static_cast<int64_t>(out.size());
  }
  return {static_cast<double>(clock.NowNanos() - start) / 1e9,
          ThreadCpuSeconds() - cpu};
}

void Report(const char* name, const char* kind,
            const goodput::logs::LogProfile& profile,
            const std::vector<std::string>& lines, int reps) {
  std::vector<double> cpu_rates, wall_rates;
  int64_t events = 0;
  double bytes = 0;
  for (const std::string& l : lines) bytes += static_cast<double>(l.size());
  const double n = static_cast<double>(lines.size());
  for (int r = 0; r < reps; ++r) {
    Times t = RunOnce(profile, lines, &events);
    cpu_rates.push_back(n / t.cpu);
    wall_rates.push_back(n / t.wall);
  }
  std::sort(cpu_rates.begin(), cpu_rates.end());
  std::sort(wall_rates.begin(), wall_rates.end());
  const double cpu = cpu_rates[reps / 2], wall = wall_rates[reps / 2];
  std::printf(
      "%-11s %-12s %6.2fM lines/CPU-s (%6.1f MB/s)  wall %5.2fM lines/s  "
      "(%lld events/rep)\n",
      name, kind, cpu / 1e6, cpu * bytes / n / 1e6, wall / 1e6,
      static_cast<long long>(events / reps));
}

}  // namespace

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 2000000;
  const int reps = argc > 2 ? std::atoi(argv[2]) : 5;
  std::vector<std::string> chatter;
  for (int i = 0; i < n; ++i) {
    chatter.emplace_back(kChatter[i % (sizeof(kChatter) / sizeof(*kChatter))]);
  }
  for (const std::string& name : goodput::logs::BuiltinProfileNames()) {
    auto profile = goodput::logs::LoadLogProfile(name);
    if (!profile.ok()) {
      std::fprintf(stderr, "%s\n", profile.status().ToString().c_str());
      return 1;
    }
    Report(name.c_str(), "non-matching", *profile, chatter, reps);
    std::vector<std::string> steps;
    for (int i = 0; i < n / 10; ++i) steps.push_back(StepLine(name, i + 1));
    Report(name.c_str(), "step lines", *profile, steps, reps);
  }
  return 0;
}
