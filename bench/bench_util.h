// Small helpers shared by the benchmark drivers (not the Google Benchmark
// ones): --name=value flags, a stopwatch, percentiles, process memory, and
// writing generated events to a JSON Lines file. Not for production code.
#ifndef GOODPUT_BENCH_BENCH_UTIL_H_
#define GOODPUT_BENCH_BENCH_UTIL_H_

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "proto/event.pb.h"

namespace goodput::bench {

// "--name=value" arguments (and bare positionals), parsed once.
class Args {
 public:
  Args(int argc, char** argv);
  const std::vector<std::string>& positional() const { return positional_; }
  std::string Str(const std::string& name, const std::string& def) const;
  int64_t Int(const std::string& name, int64_t def) const;
  bool Bool(const std::string& name) const;  // --name or --name=true
  // Comma-separated integers, e.g. --jobs=1,1000,10000.
  std::vector<int64_t> Ints(const std::string& name,
                            const std::vector<int64_t>& def) const;
  // Exits with status 2 naming any flag not in `known`.
  void CheckKnown(const std::vector<std::string>& known) const;

 private:
  std::map<std::string, std::string> flags_;
  std::vector<std::string> positional_;
};

using SteadyClock = std::chrono::steady_clock;

inline double SecondsSince(SteadyClock::time_point start) {
  return std::chrono::duration<double>(SteadyClock::now() - start).count();
}

// CPU time of this process (all threads), in seconds.
double ProcessCpuSeconds();
// CPU time of the calling thread, in seconds.
double ThreadCpuSeconds();

// Wall and process CPU time since construction, as "1.234s (cpu 1.200s)":
// on a shared machine the CPU time shows how much of the wall time was
// spent waiting for a core.
class Timer {
 public:
  Timer() : wall_(SteadyClock::now()), cpu_(ProcessCpuSeconds()) {}
  double wall() const { return SecondsSince(wall_); }
  double cpu() const { return ProcessCpuSeconds() - cpu_; }
  std::string str() const;

 private:
  SteadyClock::time_point wall_;
  double cpu_;
};

// The q-quantile (0..1) of `samples` by nearest rank; sorts a copy.
double Percentile(std::vector<double> samples, double q);

// VmRSS and VmHWM of this process from /proc/self/status, in KiB.
int64_t RssKiB();
int64_t PeakRssKiB();

// Writes `events` as JSON Lines (ToJsonLines) to `path` in chunks; returns
// the bytes written, or -1 on error.
int64_t WriteJsonLinesFile(const std::vector<v1::Event>& events,
                           const std::string& path);

// The latest event time (ns) in `events`, 0 if empty.
int64_t MaxEventTimeNanos(const std::vector<v1::Event>& events);

}  // namespace goodput::bench

#endif  // GOODPUT_BENCH_BENCH_UTIL_H_
