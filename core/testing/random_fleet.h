#ifndef GOODPUT_CORE_TESTING_RANDOM_FLEET_H_
#define GOODPUT_CORE_TESTING_RANDOM_FLEET_H_

#include <cstdint>
#include <vector>

#include "proto/event.pb.h"

namespace goodput::core::testing {

// Generates a random but valid fleet log from `seed`: `jobs` jobs of up to
// `events_per_job` events each (every kind, attempts with and without ids,
// restarts, backwards steps, notices, short allocations, k-step reports,
// costs, elastic jobs with resizes and RESHARD, JOB exclusions) plus host
// heartbeats. A
// job's events have distinct times, but for an elastic job's allocation
// and the event after it, which may share its instant (rule 14: a step
// there completes before the resize); the result is in time order per
// job, jobs interleaved by time.
std::vector<v1::Event> RandomFleet(uint32_t seed, int jobs, int events_per_job);

// RandomFleet's log with each job's events from a host (one of the
// heartbeats' three or a fourth without heartbeats; a job may move at a
// `started`), plus about one HOSTS or FLEET exclusion per four jobs at
// random times within the fleet's two hours (docs/semantics.md,
// "Exclusions"), in time order.
std::vector<v1::Event> RandomFleetWithFleetExclusions(uint32_t seed, int jobs,
                                                      int events_per_job);

}  // namespace goodput::core::testing

#endif  // GOODPUT_CORE_TESTING_RANDOM_FLEET_H_
