#ifndef GOODPUT_CORE_REPLAY_EVENTS_H_
#define GOODPUT_CORE_REPLAY_EVENTS_H_

#include <cstdint>
#include <vector>

#include "core/config.h"
#include "core/report.h"
#include "proto/event.pb.h"

namespace goodput::core {

// The reference semantics of a set of events: applies those at or before
// `as_of_ns` to a fresh FleetTracker in apply order (SortForApply) and
// returns its report as of `as_of_ns`. Events the trackers reject (e.g.
// after job_ended) are skipped and counted in `*rejected` if given. Live
// reports must equal this for the same stored events.
FleetReport ReplayEvents(const std::vector<v1::Event>& events,
                         const Config& config, int64_t as_of_ns,
                         int64_t* rejected = nullptr);

}  // namespace goodput::core

#endif  // GOODPUT_CORE_REPLAY_EVENTS_H_
