#ifndef GOODPUT_CORE_CAPACITY_TRACKER_H_
#define GOODPUT_CORE_CAPACITY_TRACKER_H_

#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>

#include "absl/numeric/int128.h"
#include "core/config.h"
#include "proto/event.pb.h"

namespace goodput::core {

// Fleet capacity from host heartbeats (SPEC section 3 rule 10): a host's
// last heartbeat holds from its time until the host's next heartbeat, or
// for at most `host_timeout_ns` if none comes. Accumulates chip-seconds
// within the config's window, per accelerator, as exact integer
// chip-nanoseconds: the result does not depend on how the hosts'
// heartbeats interleave (live arrival or replay order) nor on the order of
// the hosts, to the last bit. Memory is one entry per host. `config` must
// outlive it. Not thread-safe.
class CapacityTracker {
 public:
  explicit CapacityTracker(const Config* config) : config_(config) {}

  // Applies one heartbeat; a host's heartbeats must come in time order.
  void Apply(const v1::Event& heartbeat);

  // Capacity chip-seconds as of `as_of_ns`, per accelerator. Empty if no
  // heartbeat was ever applied.
  std::map<std::string, double> ChipSeconds(int64_t as_of_ns) const;

  bool empty() const { return hosts_.empty(); }

 private:
  struct Host {
    int64_t time_ns = 0;  // of the host's last heartbeat
    int64_t chips = 0;
    std::string accelerator;
  };
  // Chip-nanoseconds of `h`'s heartbeat held until `end_ns` (capped by the
  // timeout), within the window.
  absl::int128 HeldChipNanos(const Host& h, int64_t end_ns) const;

  const Config* config_;
  std::unordered_map<std::string, Host> hosts_;
  std::map<std::string, absl::int128> closed_;  // accelerator -> chip-ns
};

}  // namespace goodput::core

#endif  // GOODPUT_CORE_CAPACITY_TRACKER_H_
