#include "sim/job_spec.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace goodput::sim {
namespace {

constexpr const char* kTeams[] = {"search", "ads", "research", "cloud"};

bool IsTpu(const std::string& accelerator) {
  return absl::StartsWith(accelerator, "tpu");
}

// Typical model FLOPs utilisation of a framework on an accelerator family.
double BaseEfficiency(const std::string& framework, bool tpu) {
  if (framework == "jax") return tpu ? 0.55 : 0.40;
  return tpu ? 0.35 : 0.45;
}

int64_t Clamp(double v, int64_t lo, int64_t hi) {
  return std::clamp(static_cast<int64_t>(std::llround(v)), lo, hi);
}

}  // namespace

int64_t JobMtbiMs(const SimConfig& config, int64_t chips) {
  if (config.mtbi_chips <= 0 || chips <= 0) return config.mtbi_ms;
  const double scaled = static_cast<double>(config.mtbi_ms) *
                        static_cast<double>(config.mtbi_chips) /
                        static_cast<double>(chips);
  return std::max<int64_t>(1, std::llround(scaled));
}

JobSpec JobSpecFactory::Make(int64_t index, const std::string& accelerator,
                             int64_t max_chips, int chips_per_host) {
  JobSpec spec;
  spec.job_id = absl::StrCat("job-", index);
  spec.accelerator = accelerator;
  spec.chips = DrawChips(max_chips, chips_per_host);
  spec.workload = DrawWorkload();
  spec.team = kTeams[rng_->Between(0, 3)];
  const bool tpu = IsTpu(accelerator);
  spec.framework = rng_->Chance(tpu ? 0.8 : 0.3) ? "jax" : "pytorch";
  spec.mtbi_ms = JobMtbiMs(*config_, spec.chips);
  spec.fatal_failures = config_->fatal_failures;
  spec.chips_per_host = chips_per_host;
  DrawProgram(&spec);
  DrawLength(&spec);
  // No draw without elastic jobs: older seeds give the same fleets.
  if (config_->elastic_jobs > 0 && rng_->Chance(config_->elastic_jobs)) {
    DrawElastic(&spec);
  }
  return spec;
}

int64_t JobSpecFactory::DrawChips(int64_t max_chips, int chips_per_host) {
  // P(chips >= 2^k) = 2^(-tail k): most jobs are small, a few are huge.
  const double k = -std::log2(1.0 - rng_->Uniform()) / config_->size_tail;
  int64_t chips = int64_t{1} << std::min<int64_t>(static_cast<int64_t>(k), 20);
  chips = std::min({chips, max_chips, config_->max_job_chips});
  if (chips > chips_per_host) chips -= chips % chips_per_host;
  return std::max<int64_t>(chips, 1);
}

v1::JobSubmitted::Workload JobSpecFactory::DrawWorkload() {
  const double u = rng_->Uniform();
  if (u < config_->workload_training) return v1::JobSubmitted::TRAINING;
  if (u < config_->workload_training + config_->workload_serving) {
    return v1::JobSubmitted::SERVING;
  }
  return v1::JobSubmitted::BULK_INFERENCE;
}

void JobSpecFactory::DrawProgram(JobSpec* spec) {
  const core::ChipPeak* peak = catalog_->Find(spec->accelerator);
  const double base = BaseEfficiency(spec->framework, IsTpu(spec->accelerator));
  spec->efficiency = std::clamp(rng_->LogNormal(base, 0.25), 0.05, 0.95);
  const bool serving = spec->workload == v1::JobSubmitted::SERVING;
  spec->step_ms = serving ? rng_->Between(5, 30) * 1000
                          : Clamp(rng_->LogNormal(1500, 0.8), 200, 20'000);
  const double ideal_s = spec->step_ms / 1e3 * spec->efficiency;
  const double peak_flops = peak ? peak->flops_per_second : 1e14;
  spec->step_flops = ideal_s * spec->chips * peak_flops;
  spec->ideal_step_s = spec->step_flops / (spec->chips * peak_flops);
  // A third of the programs are input-bound.
  spec->wait_share =
      rng_->Chance(0.3) ? rng_->Uniform() * 0.3 : rng_->Uniform() * 0.02;
  spec->idle_share = serving ? 0.05 + rng_->Uniform() * 0.5 : 0;
  if (serving) spec->wait_share = 0;
}

void JobSpecFactory::DrawLength(JobSpec* spec) {
  const double work_ms = rng_->LogNormal(config_->job_duration_ms, 0.9);
  const double per_step =
      spec->step_ms * (1 + spec->wait_share + spec->idle_share);
  spec->total_steps = std::max<int64_t>(20, std::llround(work_ms / per_step));
  spec->steps_per_report =
      spec->workload == v1::JobSubmitted::SERVING
          ? 1
          : std::max<int64_t>(1, config_->report_every_ms / spec->step_ms);
  if (spec->workload != v1::JobSubmitted::TRAINING) return;
  const int64_t k = spec->steps_per_report;
  const int64_t every = config_->checkpoint_interval_ms / spec->step_ms / k * k;
  spec->checkpoint_every = std::max(k, every);
  spec->async_checkpoint = rng_->Chance(config_->async_checkpoints);
}

// An elastic job can lose up to half its hosts (a one-host job none: its
// min_chips is its chips).
void JobSpecFactory::DrawElastic(JobSpec* spec) {
  const int64_t per_host = std::max<int64_t>(spec->chips_per_host, 1);
  const int64_t half = spec->chips / 2 / per_host * per_host;
  spec->min_chips = spec->chips >= 2 * per_host ? half : spec->chips;
  spec->reshard_ms = rng_->Between(10, 120) * 1000;
  spec->repair_ms = rng_->Between(10, 60) * 60'000;
}

}  // namespace goodput::sim
