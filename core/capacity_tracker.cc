#include "core/capacity_tracker.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "core/event_order.h"

namespace goodput::core {

absl::int128 CapacityTracker::HeldChipNanos(const std::string& name,
                                            const Host& h,
                                            int64_t end_ns) const {
  int64_t stop = std::min(end_ns, h.time_ns + config_->host_timeout_ns);
  int64_t start = std::max(h.time_ns, config_->since_ns);
  if (stop <= start) return 0;
  const int64_t counted = stop - start - ExcludedNanos(name, start, stop);
  return absl::int128(h.chips) * absl::int128(counted);
}

int64_t CapacityTracker::ExcludedNanos(const std::string& name, int64_t from,
                                       int64_t to) const {
  auto it = excluded_.find(name);
  if (it == excluded_.end()) return fleet_excluded_.ExcludedIn(from, to);
  ExclusionSet both = it->second;  // the union: overlaps count once
  for (const auto& [start, until] : fleet_excluded_.intervals()) {
    both.Add(start, until);
  }
  return both.ExcludedIn(from, to);
}

void CapacityTracker::Exclude(int64_t start_ns, int64_t until_ns,
                              const std::set<std::string>& hosts) {
  if (hosts.empty()) fleet_excluded_.Add(start_ns, until_ns);
  for (const std::string& host : hosts) {
    excluded_[host].Add(start_ns, until_ns);
  }
}

void CapacityTracker::Apply(const v1::Event& heartbeat) {
  int64_t t = EventTimeNanos(heartbeat);
  auto [it, inserted] = hosts_.try_emplace(heartbeat.host());
  Host& h = it->second;
  if (!inserted) {
    closed_[h.accelerator] += HeldChipNanos(heartbeat.host(), h, t);
  }
  h.time_ns = t;
  h.chips = heartbeat.heartbeat().chips();
  h.accelerator = heartbeat.heartbeat().accelerator();
}

std::map<std::string, double> CapacityTracker::ChipSeconds(
    int64_t as_of_ns) const {
  std::map<std::string, absl::int128> chip_ns = closed_;
  for (const auto& [name, h] : hosts_) {
    chip_ns[h.accelerator] += HeldChipNanos(name, h, as_of_ns);
  }
  std::map<std::string, double> out;
  for (const auto& [accelerator, n] : chip_ns) {
    out.emplace_hint(out.end(), accelerator,
                     static_cast<double>(n) / kNanosPerSecond);
  }
  return out;
}

void CapacityTracker::SaveState(
    internal::v1::CapacityTrackerState* state) const {
  state->Clear();
  state->set_version(kCapacityTrackerStateVersion);
  state->set_host_timeout_ns(config_->host_timeout_ns);
  std::map<std::string, const Host*> by_name;  // a stable order
  for (const auto& [name, h] : hosts_) by_name.emplace(name, &h);
  for (const auto& [name, h] : by_name) {
    internal::v1::CapacityTrackerState::Host* out = state->add_hosts();
    out->set_name(name);
    out->set_time_ns(h->time_ns);
    out->set_chips(h->chips);
    out->set_accelerator(h->accelerator);
  }
  for (const auto& [accelerator, n] : closed_) {
    internal::v1::CapacityTrackerState::Closed* out = state->add_closed();
    out->set_accelerator(accelerator);
    out->set_high(static_cast<uint64_t>(absl::Int128High64(n)));
    out->set_low(absl::Int128Low64(n));
  }
}

absl::Status CapacityTracker::RestoreState(
    const internal::v1::CapacityTrackerState& state) {
  if (state.version() != kCapacityTrackerStateVersion ||
      state.host_timeout_ns() != config_->host_timeout_ns) {
    return absl::InvalidArgumentError(absl::StrCat(
        "capacity state version ", state.version(), " under host timeout ",
        state.host_timeout_ns(), " ns; this goodputd keeps version ",
        kCapacityTrackerStateVersion, " under ", config_->host_timeout_ns));
  }
  std::unordered_map<std::string, Host> hosts;
  for (const auto& h : state.hosts()) {
    if (h.chips() < 0 ||
        !hosts
             .try_emplace(h.name(),
                          Host{h.time_ns(), h.chips(), h.accelerator()})
             .second) {
      return absl::DataLossError(
          absl::StrCat("capacity state: host \"", h.name(),
                       "\" is repeated or has ", h.chips(), " chips"));
    }
  }
  std::map<std::string, absl::int128> closed;
  for (const auto& c : state.closed()) {
    const absl::int128 n =
        absl::MakeInt128(static_cast<int64_t>(c.high()), c.low());
    if (n < 0 || !closed.emplace(c.accelerator(), n).second) {
      return absl::DataLossError(
          absl::StrCat("capacity state: accelerator \"", c.accelerator(),
                       "\" is repeated or its closed sum is negative"));
    }
  }
  hosts_ = std::move(hosts);
  closed_ = std::move(closed);
  return absl::OkStatus();
}

}  // namespace goodput::core
