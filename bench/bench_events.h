#ifndef GOODPUT_BENCH_BENCH_EVENTS_H_
#define GOODPUT_BENCH_BENCH_EVENTS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "proto/event.pb.h"

namespace goodput::bench {

// One training job of `steps` steps, 1 s each, a checkpoint every 100, in
// apply order (the shape of a long healthy run).
std::vector<v1::Event> LongJob(const std::string& job_id, int64_t steps);
// The same with a checkpoint every `checkpoint_every` steps.
std::vector<v1::Event> LongJob(const std::string& job_id, int64_t steps,
                               int64_t checkpoint_every);

// `jobs` jobs of `steps_per_job` steps each, interleaved by time as a fleet
// log would be, with a preemption and restore in every tenth job and a
// checkpoint every `checkpoint_every` steps.
std::vector<v1::Event> Fleet(int jobs, int64_t steps_per_job,
                             int64_t checkpoint_every = 100);

// The events as JSON Lines (protobuf's JSON mapping), one per line.
std::string ToJsonLines(const std::vector<v1::Event>& events);

}  // namespace goodput::bench

#endif  // GOODPUT_BENCH_BENCH_EVENTS_H_
