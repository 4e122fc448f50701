#include "core/replay_events.h"

#include "core/event_order.h"
#include "core/fleet_tracker.h"

namespace goodput::core {

FleetReport ReplayEvents(const std::vector<v1::Event>& events,
                         const Config& config, int64_t as_of_ns,
                         int64_t* rejected) {
  std::vector<uint32_t> order;
  for (uint32_t i = 0; i < events.size(); ++i) {
    if (EventTimeNanos(events[i]) <= as_of_ns) order.push_back(i);
  }
  SortForApply(events, &order);
  FleetTracker fleet(&config);
  int64_t bad = 0;
  for (uint32_t i : order) bad += fleet.Apply(events[i]).ok() ? 0 : 1;
  if (rejected != nullptr) *rejected = bad;
  return fleet.Report(as_of_ns);
}

}  // namespace goodput::core
