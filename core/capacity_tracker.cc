#include "core/capacity_tracker.h"

#include <algorithm>

#include "core/event_order.h"

namespace goodput::core {

double CapacityTracker::HeldChipSeconds(const Host& h, int64_t end_ns) const {
  int64_t stop = std::min(end_ns, h.time_ns + config_->host_timeout_ns);
  int64_t start = std::max(h.time_ns, config_->since_ns);
  if (stop <= start) return 0;
  return static_cast<double>(h.chips) * static_cast<double>(stop - start) /
         static_cast<double>(kNanosPerSecond);
}

void CapacityTracker::Apply(const v1::Event& heartbeat) {
  int64_t t = EventTimeNanos(heartbeat);
  auto [it, inserted] = hosts_.try_emplace(heartbeat.host());
  Host& h = it->second;
  if (!inserted) closed_[h.accelerator] += HeldChipSeconds(h, t);
  h.time_ns = t;
  h.chips = heartbeat.heartbeat().chips();
  h.accelerator = heartbeat.heartbeat().accelerator();
}

std::map<std::string, double> CapacityTracker::ChipSeconds(
    int64_t as_of_ns) const {
  std::map<std::string, double> out = closed_;
  for (const auto& [name, h] : hosts_) {
    out[h.accelerator] += HeldChipSeconds(h, as_of_ns);
  }
  return out;
}

}  // namespace goodput::core
