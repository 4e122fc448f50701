#ifndef GOODPUT_SIM_FLEET_SIM_H_
#define GOODPUT_SIM_FLEET_SIM_H_

#include <cstdint>
#include <deque>
#include <memory>
#include <queue>
#include <vector>

#include "core/catalog.h"
#include "sim/event_sink.h"
#include "sim/host_pool.h"
#include "sim/job_run.h"
#include "sim/sim_config.h"
#include "sim/sim_random.h"
#include "sim/truth.h"

namespace goodput::sim {

// A whole simulated fleet: builds hosts (spread over the configured
// accelerator generations) and jobs from the config's seed, then runs a
// discrete-event simulation in simulated time: job arrivals, a FIFO queue
// with backfill and gang allocation on the HostPool, every job's JobRun,
// and a heartbeat per host per interval. Events go to the sink in time
// order; the ground truth is the JobRuns' own bookkeeping plus the hosts'
// capacity. With duration 0 (steady) it runs until stopped: jobs arrive
// as a Poisson process that keeps about `jobs` in the fleet, and a job's
// run is freed when it ends (no truth). Owns its jobs and hosts; not
// thread-safe; Run() once.
class FleetSim {
 public:
  explicit FleetSim(const SimConfig& config);

  // Simulates [start, start + duration) (steady: [start, forever)) into
  // `sink`; returns the sink's Finish() status.
  absl::Status Run(EventSink& sink);

  // The ground truth as of the end (valid after Run()).
  const FleetTruth& truth() const { return truth_; }
  const HostPool& hosts() const { return pool_; }

 private:
  // A heap entry: something due at `time` (a job, or a source below).
  struct Due {
    int64_t time;
    uint64_t order;  // FIFO among equal times
    int64_t who;     // job index, kArrivals, kHeartbeats or Requeue(job)
    bool operator>(const Due& o) const {
      return time != o.time ? time > o.time : order > o.order;
    }
  };
  static constexpr int64_t kArrivals = -1, kHeartbeats = -2;

  // Negative so that jobs can be added while running (steady mode).
  static int64_t Requeue(int64_t job) { return -3 - job; }
  static int64_t Requeued(int64_t who) { return -3 - who; }
  bool steady() const { return config_.duration_ms == 0; }
  void BuildHosts();
  void BuildJobs();
  JobSpec MakeSpec(JobSpecFactory& factory, int64_t index);
  void AddSteadyArrival(int64_t after_ms);
  void Push(int64_t time, int64_t who);
  void FireJob(int64_t index, EventSink& sink);
  void FireArrival(int64_t now, EventSink& sink);
  void FireHeartbeat(EventSink& sink);
  void Schedule(int64_t now, EventSink& sink);
  void Close();

  SimConfig config_;
  core::Catalog catalog_;
  SimRandom rng_;
  HostPool pool_;
  std::vector<std::unique_ptr<JobRun>> jobs_;  // by submit time
  std::vector<HostPool::Grant> grants_;        // per job, while held
  std::deque<int64_t> waiting_;                // job indices, FIFO
  std::priority_queue<Due, std::vector<Due>, std::greater<Due>> heap_;
  uint64_t order_ = 0;
  size_t next_arrival_ = 0;
  SimRandom arrivals_rng_;  // steady mode's arrival times
  int64_t next_heartbeat_host_ = 0, heartbeat_round_ = 0;
  FleetTruth truth_;
};

}  // namespace goodput::sim

#endif  // GOODPUT_SIM_FLEET_SIM_H_
