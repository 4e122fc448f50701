#ifndef GOODPUT_SIM_JOB_SPEC_H_
#define GOODPUT_SIM_JOB_SPEC_H_

#include <cstdint>
#include <string>

#include "core/catalog.h"
#include "proto/event.pb.h"
#include "sim/sim_config.h"
#include "sim/sim_random.h"

namespace goodput::sim {

// Everything about one simulated job that is decided before it runs: its
// shape, program and the distributions of its phases. Plain data; times
// are simulated milliseconds.
struct JobSpec {
  std::string job_id;
  int64_t submit_ms = 0;
  int64_t chips = 0;
  std::string accelerator;
  v1::JobSubmitted::Workload workload = v1::JobSubmitted::TRAINING;
  std::string framework;
  std::string team;
  double efficiency = 0.5;  // ideal step time / step compute time
  int64_t step_ms = 1000;   // compute of one step (serving: window)
  double step_flops = 0;    // all chips, one step
  double ideal_step_s = 0;  // step_flops / (chips x peak)
  double wait_share = 0;    // input wait per step / step_ms
  double idle_share = 0;    // serving: idle per window / step_ms
  int64_t steps_per_report = 1;
  int64_t total_steps = 1;
  int64_t checkpoint_every = 0;  // steps; 0 = none
  bool async_checkpoint = false;
  int64_t mtbi_ms = 0;
  double fatal_failures = 0;
  // Elastic jobs (SPEC rule 14); min_chips 0 = a fixed-size job.
  int64_t min_chips = 0;
  int64_t chips_per_host = 1;  // a host failure takes this many chips
  int64_t reshard_ms = 0;      // RESHARD after each resize
  int64_t repair_ms = 0;       // a failed host returns after this long
};

// The mean time between interruptions of a job of `chips` chips under
// `config` (SimConfig::mtbi_chips), at least 1 ms.
int64_t JobMtbiMs(const SimConfig& config, int64_t chips);

// Draws job specs for a fleet from `config` and the catalog's peaks:
// heavy-tailed power-of-two sizes, a workload mix, frameworks and program
// efficiencies per accelerator family. Not thread-safe (uses `rng`).
class JobSpecFactory {
 public:
  // `rng` and `catalog` are not owned and must outlive the factory.
  JobSpecFactory(const SimConfig* config, const core::Catalog* catalog,
                 SimRandom* rng)
      : config_(config), catalog_(catalog), rng_(rng) {}

  // Job number `index` on `accelerator`, at most `max_chips` chips, a
  // multiple of `chips_per_host` when larger than one host.
  JobSpec Make(int64_t index, const std::string& accelerator, int64_t max_chips,
               int chips_per_host);

 private:
  int64_t DrawChips(int64_t max_chips, int chips_per_host);
  v1::JobSubmitted::Workload DrawWorkload();
  void DrawProgram(JobSpec* spec);
  void DrawLength(JobSpec* spec);
  void DrawElastic(JobSpec* spec);

  const SimConfig* config_;
  const core::Catalog* catalog_;
  SimRandom* rng_;
};

}  // namespace goodput::sim

#endif  // GOODPUT_SIM_JOB_SPEC_H_
