#include "bench/bench_util.h"

#include <time.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>

#include "bench/bench_events.h"
#include "core/event_order.h"

namespace goodput::bench {

Args::Args(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a.rfind("--", 0) != 0) {
      positional_.push_back(a);
      continue;
    }
    a = a.substr(2);
    const size_t eq = a.find('=');
    if (eq == std::string::npos) {
      flags_[a] = "true";
    } else {
      flags_[a.substr(0, eq)] = a.substr(eq + 1);
    }
  }
}

std::string Args::Str(const std::string& name, const std::string& def) const {
  auto it = flags_.find(name);
  return it == flags_.end() ? def : it->second;
}

int64_t Args::Int(const std::string& name, int64_t def) const {
  auto it = flags_.find(name);
  if (it == flags_.end()) return def;
  char* end = nullptr;
  const long long v = std::strtoll(it->second.c_str(), &end, 10);
  if (end == it->second.c_str() || *end != '\0') {
    std::fprintf(stderr, "--%s: want an integer, got \"%s\"\n", name.c_str(),
                 it->second.c_str());
    std::exit(2);
  }
  return v;
}

bool Args::Bool(const std::string& name) const {
  auto it = flags_.find(name);
  return it != flags_.end() && (it->second == "true" || it->second == "1");
}

std::vector<int64_t> Args::Ints(const std::string& name,
                                const std::vector<int64_t>& def) const {
  auto it = flags_.find(name);
  if (it == flags_.end()) return def;
  std::vector<int64_t> out;
  std::stringstream in(it->second);
  std::string part;
  while (std::getline(in, part, ',')) out.push_back(std::atoll(part.c_str()));
  return out;
}

void Args::CheckKnown(const std::vector<std::string>& known) const {
  std::set<std::string> ok(known.begin(), known.end());
  for (const auto& [name, value] : flags_) {
    if (!ok.count(name)) {
      std::fprintf(stderr, "unknown flag --%s\n", name.c_str());
      std::exit(2);
    }
  }
}

double ProcessCpuSeconds() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec + ts.tv_nsec / 1e9;
}

double ThreadCpuSeconds() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec + ts.tv_nsec / 1e9;
}

std::string Timer::str() const {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.3fs (cpu %.3fs)", wall(), cpu());
  return buf;
}

double Percentile(std::vector<double> samples, double q) {
  if (samples.empty()) return 0;
  std::sort(samples.begin(), samples.end());
  size_t rank = static_cast<size_t>(std::ceil(q * samples.size()));
  rank = std::clamp<size_t>(rank, 1, samples.size());
  return samples[rank - 1];
}

namespace {

int64_t StatusKiB(const char* key) {
  std::ifstream in("/proc/self/status");
  std::string line;
  const std::string prefix = std::string(key) + ":";
  while (std::getline(in, line)) {
    if (line.rfind(prefix, 0) == 0) {
      return std::atoll(line.c_str() + prefix.size());
    }
  }
  return -1;
}

}  // namespace

int64_t RssKiB() { return StatusKiB("VmRSS"); }
int64_t PeakRssKiB() { return StatusKiB("VmHWM"); }

int64_t WriteJsonLinesFile(const std::vector<v1::Event>& events,
                           const std::string& path) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return -1;
  constexpr size_t kChunk = 100'000;
  int64_t bytes = 0;
  for (size_t i = 0; i < events.size(); i += kChunk) {
    const size_t end = std::min(events.size(), i + kChunk);
    const std::vector<v1::Event> chunk(events.begin() + i,
                                       events.begin() + end);
    const std::string text = ToJsonLines(chunk);
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
    bytes += static_cast<int64_t>(text.size());
  }
  out.close();
  return out ? bytes : -1;
}

int64_t MaxEventTimeNanos(const std::vector<v1::Event>& events) {
  int64_t latest = 0;
  for (const v1::Event& e : events) {
    latest = std::max(latest, core::EventTimeNanos(e));
  }
  return latest;
}

}  // namespace goodput::bench
