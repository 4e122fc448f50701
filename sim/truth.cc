#include "sim/truth.h"

#include "nlohmann/json.hpp"

namespace goodput::sim {
namespace {

constexpr const char* kNames[kTruthCategories] = {
    "queued",  "recovery",   "init",       "prep",    "compile",
    "restore", "data_wait",  "checkpoint", "reshard", "custom",
    "idle",    "productive", "lost"};

// A ratio, or null when the denominator is 0.
nlohmann::ordered_json Ratio(int64_t num, int64_t den) {
  if (den == 0) return nullptr;
  return static_cast<double>(num) / static_cast<double>(den);
}

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
  const bool elastic = job.min_chips > 0;
  j["min_chips"] = elastic ? nlohmann::ordered_json(job.min_chips) : nullptr;
  j["resizes"] = job.resizes;
  j["degraded_chip_seconds"] =
      elastic ? nlohmann::ordered_json(job.DegradedChipMs() / 1e3) : nullptr;
  j["slice_efficiency"] =
      elastic ? Ratio(job.held_chip_ms, job.RequestedChipMs()) : nullptr;
  j["unobservable"] = UnobservableJson(job.unobservable);
  return j;
}

}  // namespace

const char* TruthName(Truth c) { return kNames[static_cast<int>(c)]; }

bool Allocated(Truth c) { return c != Truth::kQueued && c != Truth::kRecovery; }

int64_t JobTruth::TotalMs() const {
  int64_t total = 0;
  for (int64_t v : ms) total += v;
  return total;
}

int64_t JobTruth::AllocatedMs() const {
  return TotalMs() - Get(Truth::kQueued) - Get(Truth::kRecovery);
}

int64_t FleetTruth::ElasticHeldChipMs() const {
  int64_t sum = 0;
  for (const JobTruth& job : jobs) {
    if (job.min_chips > 0) sum += job.held_chip_ms;
  }
  return sum;
}

int64_t FleetTruth::ElasticRequestedChipMs() const {
  int64_t sum = 0;
  for (const JobTruth& job : jobs) {
    if (job.min_chips > 0) sum += job.RequestedChipMs();
  }
  return sum;
}

void WriteTruthJson(const FleetTruth& truth, std::ostream& out) {
  nlohmann::ordered_json j;
  j["start_seconds"] = truth.start_ms / 1e3;
  j["end_seconds"] = truth.end_ms / 1e3;
  j["capacity_chip_seconds"] = truth.capacity_chip_seconds;
  const int64_t held = truth.ElasticHeldChipMs();
  const int64_t requested = truth.ElasticRequestedChipMs();
  j["degraded_chip_seconds"] = (requested - held) / 1e3;
  j["slice_efficiency"] = Ratio(held, requested);
  j["jobs"] = nlohmann::ordered_json::array();
  for (const JobTruth& job : truth.jobs) j["jobs"].push_back(JobJson(job));
  out << j.dump(1) << "\n";
}

}  // namespace goodput::sim
