#include "core/testing/timeline.h"

#include <numeric>
#include <sstream>

#include "absl/time/time.h"
#include "core/replay_events.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"

namespace goodput::core::testing {

std::vector<v1::Event> ParseEvents(const std::string& jsonl) {
  std::vector<v1::Event> events;
  std::istringstream in(jsonl);
  std::string line;
  while (std::getline(in, line)) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    v1::Event e;
    auto status = google::protobuf::util::JsonStringToMessage(line, &e);
    EXPECT_TRUE(status.ok()) << status.ToString() << " in: " << line;
    events.push_back(e);
  }
  return events;
}

std::vector<v1::Event> JobEvents(const std::string& job,
                                 const std::string& timeline) {
  std::vector<v1::Event> events = ParseEvents(Timeline(timeline));
  for (v1::Event& e : events) e.set_job_id(job);
  return events;
}

std::string Timeline(const std::string& text) {
  std::istringstream in(text);
  std::string line, out;
  while (std::getline(in, line)) {
    size_t start = line.find_first_not_of(" \t");
    if (start == std::string::npos) continue;
    size_t space = line.find(' ', start);
    std::string time = line.substr(start, space - start);
    std::string body = line.substr(line.find('{', space) + 1);
    out += "{\"time\":\"2026-11-22T" + time + "Z\",";
    // Heartbeats and HOSTS or FLEET exclusions have no job.
    if (body.find("\"job_id\"") == std::string::npos &&
        body.find("\"heartbeat\"") == std::string::npos &&
        body.find("\"scope\":\"FLEET\"") == std::string::npos &&
        body.find("\"scope\":\"HOSTS\"") == std::string::npos) {
      out += "\"job_id\":\"j\",";
    }
    out += body + "\n";
  }
  return out;
}

int64_t T(const std::string& rfc3339) {
  absl::Time t;
  std::string err;
  EXPECT_TRUE(absl::ParseTime(absl::RFC3339_full, rfc3339, &t, &err)) << err;
  return absl::ToUnixNanos(t);
}

int64_t S(double seconds) {
  return static_cast<int64_t>(seconds * kNanosPerSecond + 0.5);
}

FleetReport Replay(const std::vector<v1::Event>& events, const Config& config,
                   int64_t as_of_ns) {
  int64_t rejected = 0;
  FleetReport report = ReplayEvents(events, config, as_of_ns, &rejected);
  EXPECT_EQ(rejected, 0) << "events rejected by the trackers";
  return report;
}

FleetReport Replay(const std::vector<v1::Event>& events, const Config& config,
                   const std::string& as_of) {
  return Replay(events, config, T(as_of));
}

const JobReport& Job(const FleetReport& report, const std::string& job_id) {
  for (const JobReport& j : report.jobs) {
    if (j.job_id == job_id) return j;
  }
  ADD_FAILURE() << "no job " << job_id;
  static const JobReport* const kEmpty = new JobReport();
  return *kEmpty;
}

int64_t SumNanos(const JobReport& job) {
  return std::accumulate(job.nanos.begin(), job.nanos.end(), int64_t{0});
}

}  // namespace goodput::core::testing
