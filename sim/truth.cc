#include "sim/truth.h"

#include "nlohmann/json.hpp"

namespace goodput::sim {
namespace {

constexpr const char* kNames[kTruthCategories] = {
    "queued",    "recovery",   "init",   "prep", "compile",    "restore",
    "data_wait", "checkpoint", "custom", "idle", "productive", "lost"};

nlohmann::ordered_json UnobservableJson(const Unobservable& u) {
  nlohmann::ordered_json j;
  j["wait_in_killed_step_seconds"] = u.wait_in_killed_step_ms / 1e3;
  j["idle_in_killed_step_seconds"] = u.idle_in_killed_step_ms / 1e3;
  j["wait_in_flight_seconds"] = u.wait_in_flight_ms / 1e3;
  j["idle_in_flight_seconds"] = u.idle_in_flight_ms / 1e3;
  j["lost_undecided_seconds"] = u.lost_undecided_ms / 1e3;
  j["lost_undecided_steps"] = u.lost_undecided_steps;
  return j;
}

nlohmann::ordered_json JobJson(const JobTruth& job) {
  nlohmann::ordered_json j, seconds;
  j["job_id"] = job.job_id;
  j["chips"] = job.chips;
  seconds["total"] = job.TotalMs() / 1e3;
  for (int c = 0; c < kTruthCategories; ++c)
    seconds[kNames[c]] = job.ms[c] / 1e3;
  j["seconds"] = seconds;
  j["productive_steps"] = job.productive_steps;
  j["ideal_seconds"] = job.ideal_seconds;
  j["interruptions"] = job.interruptions;
  j["unobservable"] = UnobservableJson(job.unobservable);
  return j;
}

}  // namespace

const char* TruthName(Truth c) { return kNames[static_cast<int>(c)]; }

int64_t JobTruth::TotalMs() const {
  int64_t total = 0;
  for (int64_t v : ms) total += v;
  return total;
}

void WriteTruthJson(const FleetTruth& truth, std::ostream& out) {
  nlohmann::ordered_json j;
  j["start_seconds"] = truth.start_ms / 1e3;
  j["end_seconds"] = truth.end_ms / 1e3;
  j["capacity_chip_seconds"] = truth.capacity_chip_seconds;
  j["jobs"] = nlohmann::ordered_json::array();
  for (const JobTruth& job : truth.jobs) j["jobs"].push_back(JobJson(job));
  out << j.dump(1) << "\n";
}

}  // namespace goodput::sim
