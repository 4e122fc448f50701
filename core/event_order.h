#ifndef GOODPUT_CORE_EVENT_ORDER_H_
#define GOODPUT_CORE_EVENT_ORDER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "proto/event.pb.h"

namespace goodput::core {

// Event time in integer nanoseconds since the Unix epoch.
int64_t EventTimeNanos(const v1::Event& e);

// `ns` since the epoch as RFC 3339 UTC, e.g. "2026-11-22T10:00:00.25Z".
std::string FormatTimeNanos(int64_t ns);

// The rank of `e`'s kind among events of one job at the same time (SPEC
// section 3 rule 1): job_submitted, allocation, step, checkpoint,
// interruption, started, activity, job_ended. Heartbeats rank last.
int KindRank(const v1::Event& e);

// Stable-sorts `order` (indices into `events`) into the order in which a
// job's events apply: by time, then kind rank, then arrival order.
void SortForApply(const std::vector<v1::Event>& events,
                  std::vector<uint32_t>* order);

}  // namespace goodput::core

#endif  // GOODPUT_CORE_EVENT_ORDER_H_
