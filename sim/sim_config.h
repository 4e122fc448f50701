#ifndef GOODPUT_SIM_SIM_CONFIG_H_
#define GOODPUT_SIM_SIM_CONFIG_H_

#include <cstdint>
#include <string>
#include <vector>

namespace goodput::sim {

// The knobs of a simulated fleet (goodput-sim's flags; see sim/README.md).
// Durations are simulated milliseconds. A plain value.
struct SimConfig {
  uint64_t seed = 1;
  int64_t hosts = 64;
  int64_t jobs = 40;
  int64_t start_ms = 1795305600000;  // 2026-11-22T00:00:00Z
  // Simulated window; 0 = steady: runs until stopped, `jobs` is the mean
  // number of jobs in the fleet and new ones keep arriving.
  int64_t duration_ms = 6 * 3600'000;
  // Accelerator generations (catalog names) the hosts are spread over.
  std::vector<std::string> accelerators = {"tpu-v5p", "tpu-v5e", "h100",
                                           "a100"};
  int64_t max_job_chips = 4096;
  double size_tail = 0.7;     // P(chips >= 2^k) ~ 2^(-size_tail * k)
  double initial_jobs = 0.5;  // share of jobs submitted at the start
  int64_t job_duration_ms = 3 * 3600'000;  // median work of a job
  // Mean time between interruptions of a running job of `mtbi_chips`
  // chips; a job of n chips has mtbi_ms x mtbi_chips / n (each chip fails
  // independently, sim/README.md). mtbi_chips 0: every job has mtbi_ms.
  // Default: 8 h at 1,024 chips (Meta's research clusters, ~7.9 h).
  int64_t mtbi_ms = 8 * 3600'000;
  int64_t mtbi_chips = 1024;
  double fatal_failures = 0.1;  // share of FAILED that end the job
  int64_t checkpoint_interval_ms = 30 * 60'000;
  double async_checkpoints = 0.3;    // share of training jobs
  int64_t report_every_ms = 10'000;  // a job reports every k-th step
  double workload_training = 0.6, workload_serving = 0.2;  // rest: bulk
  int64_t heartbeat_interval_ms = 60'000;
  // Share of jobs that are elastic (SPEC rule 14): a host failure shrinks
  // such a job to what is left, and it grows back when the host returns.
  double elastic_jobs = 0;
};

}  // namespace goodput::sim

#endif  // GOODPUT_SIM_SIM_CONFIG_H_
