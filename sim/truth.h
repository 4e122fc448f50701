#ifndef GOODPUT_SIM_TRUTH_H_
#define GOODPUT_SIM_TRUTH_H_

#include <array>
#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

namespace goodput::sim {

// The simulator's own time categories (the SPEC's report categories, kept
// here so that the ground truth does not depend on core/).
enum class Truth {
  kQueued,
  kRecovery,
  kInit,
  kPrep,
  kCompile,
  kRestore,
  kDataWait,
  kCheckpoint,
  kReshard,  // re-sharding after an elastic resize (SPEC rule 14)
  kCustom,
  kIdle,
  kProductive,
  kLost,
};
inline constexpr int kTruthCategories = 13;

// The category's report key, e.g. "data_wait".
const char* TruthName(Truth c);

// Time that physically happened but that the service cannot attribute as
// it happened, in milliseconds, by reason. The ground-truth test adds
// these to the physical truth to get what the service must report; each
// is a case the service cannot see (see sim/README.md).
struct Unobservable {
  // Input wait inside steps that never reported (in flight at a kill):
  // physically data_wait, the service counts the in-flight step lost.
  int64_t wait_in_killed_step_ms = 0;
  // Serving idle inside an unreported step at a kill: physically idle,
  // the service keeps in-flight serving time productive.
  int64_t idle_in_killed_step_ms = 0;
  // Input wait / serving idle inside the step in flight at as-of: the
  // service counts in-flight time productive until the step reports.
  int64_t wait_in_flight_ms = 0;
  int64_t idle_in_flight_ms = 0;
  // Completed steps already lost at a kill whose next attempt has not
  // restored by as-of: the service keeps them productive (at risk) until
  // a resume point says what survived.
  int64_t lost_undecided_ms = 0;
  int64_t lost_undecided_steps = 0;
};

// Whether the job holds its chips in `c` (not queued, not in recovery).
bool Allocated(Truth c);

// The physical timeline of one job, as the simulator lived it.
struct JobTruth {
  std::string job_id;
  int64_t chips = 0;
  int64_t min_chips = 0;  // elastic jobs only (SPEC rule 14); 0 = fixed
  std::array<int64_t, kTruthCategories> ms{};  // per category
  // Chip-milliseconds of the allocated time at the chips held at each
  // instant (an elastic job's allocation; a fixed-size job's `chips`).
  int64_t held_chip_ms = 0;
  int64_t resizes = 0;            // elastic: allocations that shrank or grew it
  int64_t productive_steps = 0;   // completed, not lost (ideal time basis)
  double ideal_seconds = 0;       // of the productive steps
  double ideal_step_seconds = 0;  // of one step
  int64_t interruptions = 0;
  Unobservable unobservable;

  void Add(Truth c, int64_t duration_ms) {
    ms[static_cast<int>(c)] += duration_ms;
  }
  int64_t Get(Truth c) const { return ms[static_cast<int>(c)]; }
  int64_t TotalMs() const;
  int64_t AllocatedMs() const;  // all but queued and recovery
  // Rule 14's measures: requested chips x allocated time, minus held.
  int64_t RequestedChipMs() const { return chips * AllocatedMs(); }
  int64_t DegradedChipMs() const { return RequestedChipMs() - held_chip_ms; }
};

// The fleet's ground truth: every job plus host capacity.
struct FleetTruth {
  int64_t start_ms = 0, end_ms = 0;  // simulated window (as-of = end)
  std::vector<JobTruth> jobs;
  double capacity_chip_seconds = 0;

  // Rule 14 over the elastic jobs: held and requested chip-milliseconds of
  // their allocated time (slice_efficiency = held / requested).
  int64_t ElasticHeldChipMs() const;
  int64_t ElasticRequestedChipMs() const;
};

// Writes `truth` as one JSON object (seconds per category per job, the
// unobservable parts, elastic measures, capacity). Stateless.
void WriteTruthJson(const FleetTruth& truth, std::ostream& out);

}  // namespace goodput::sim

#endif  // GOODPUT_SIM_TRUTH_H_
