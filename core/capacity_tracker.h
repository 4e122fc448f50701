#ifndef GOODPUT_CORE_CAPACITY_TRACKER_H_
#define GOODPUT_CORE_CAPACITY_TRACKER_H_

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <unordered_map>

#include "absl/numeric/int128.h"
#include "absl/status/status.h"
#include "core/config.h"
#include "core/exclusions.h"
#include "proto/event.pb.h"
#include "proto/tracker_state.pb.h"

namespace goodput::core {

// The CapacityTrackerState layout that CapacityTracker::SaveState writes
// and RestoreState reads (proto/tracker_state.proto).
inline constexpr uint32_t kCapacityTrackerStateVersion = 1;

// Fleet capacity from host heartbeats (SPEC section 3 rule 10): a host's
// last heartbeat holds from its time until the host's next heartbeat, or
// for at most `host_timeout_ns` if none comes. Accumulates chip-seconds
// within the config's window, per accelerator, as exact integer
// chip-nanoseconds: the result does not depend on how the hosts'
// heartbeats interleave (live arrival or replay order) nor on the order of
// the hosts, to the last bit. HOSTS and FLEET exclusions leave their hosts'
// time out (docs/semantics.md, "Exclusions"). Memory is one entry per host
// plus the exclusions. `config` must outlive it. Not thread-safe.
class CapacityTracker {
 public:
  explicit CapacityTracker(const Config* config) : config_(config) {}

  // Applies one heartbeat; a host's heartbeats must come in time order.
  void Apply(const v1::Event& heartbeat);

  // Leaves [start_ns, until_ns) of the capacity of `hosts` (of every host,
  // also ones not seen yet, if empty) out; overlapping exclusions count
  // once. Must come before any heartbeat after `start_ns` (apply order).
  void Exclude(int64_t start_ns, int64_t until_ns,
               const std::set<std::string>& hosts);

  // Capacity chip-seconds as of `as_of_ns`, per accelerator. Empty if no
  // heartbeat was ever applied.
  std::map<std::string, double> ChipSeconds(int64_t as_of_ns) const;

  bool empty() const { return hosts_.empty(); }

  // Writes each host's last heartbeat and the closed sums (not the
  // exclusions), replacing `*state`.
  void SaveState(internal::v1::CapacityTrackerState* state) const;
  // Replaces the hosts and the closed sums by those SaveState wrote; the
  // exclusions are left as they are (add them again, before or after).
  // Applying the heartbeats after the saved ones then gives exactly what
  // an uninterrupted tracker gives. On an error nothing changes:
  // InvalidArgument for another version or host timeout, DataLoss naming
  // the host or accelerator for a state that cannot be one (negative
  // chips or sums, a repeated name).
  absl::Status RestoreState(const internal::v1::CapacityTrackerState& state);

 private:
  struct Host {
    int64_t time_ns = 0;  // of the host's last heartbeat
    int64_t chips = 0;
    std::string accelerator;
  };
  // Chip-nanoseconds of host `name`'s heartbeat `h` held until `end_ns`
  // (capped by the timeout), within the window, less excluded time.
  absl::int128 HeldChipNanos(const std::string& name, const Host& h,
                             int64_t end_ns) const;
  // Excluded nanoseconds of host `name` within [from, to).
  int64_t ExcludedNanos(const std::string& name, int64_t from,
                        int64_t to) const;

  const Config* config_;
  std::unordered_map<std::string, Host> hosts_;
  ExclusionSet fleet_excluded_;                             // every host
  std::unordered_map<std::string, ExclusionSet> excluded_;  // by host
  std::map<std::string, absl::int128> closed_;  // accelerator -> chip-ns
};

}  // namespace goodput::core

#endif  // GOODPUT_CORE_CAPACITY_TRACKER_H_
