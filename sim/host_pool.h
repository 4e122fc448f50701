#ifndef GOODPUT_SIM_HOST_POOL_H_
#define GOODPUT_SIM_HOST_POOL_H_

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace goodput::sim {

// One simulated host: `chips` chips of `accelerator`.
struct Host {
  std::string name;
  std::string accelerator;
  int chips = 0;
};

// The simulated hosts and their free chips, with gang allocation: a job
// gets all its chips at once or nothing. A job of fewer chips than a host
// has shares one host (best fit); a larger one takes whole free hosts.
// Owns its hosts; a value type; not thread-safe.
class HostPool {
 public:
  // A gang: the hosts a job holds and the chips it holds on each.
  struct Grant {
    std::vector<int> hosts;
    int chips_per_host = 0;
  };

  // Adds a host; returns its index.
  int AddHost(Host host);

  // Allocates `chips` chips of `accelerator`, or nullopt if they are not
  // free now (or the accelerator is unknown).
  std::optional<Grant> Allocate(const std::string& accelerator, int64_t chips);

  // Returns a grant's chips.
  void Release(const Grant& grant);

  // Total chips of `accelerator` (0 if unknown): the most a job can get.
  int64_t Capacity(const std::string& accelerator) const;
  int ChipsPerHost(const std::string& accelerator) const;
  int64_t FreeChips() const { return free_chips_; }

  const std::vector<Host>& hosts() const { return hosts_; }

 private:
  // The hosts of one accelerator, bucketed by their free chips.
  struct Group {
    std::string accelerator;
    int chips_per_host = 0;
    int64_t capacity = 0;
    std::vector<std::set<int>> by_free;  // free chips -> host indices
  };

  Group* FindGroup(const std::string& accelerator);
  const Group* FindGroup(const std::string& accelerator) const;
  void SetFree(Group& group, int host, int free);

  std::vector<Host> hosts_;
  std::vector<int> free_;  // per host
  std::vector<Group> groups_;
  int64_t free_chips_ = 0;
};

}  // namespace goodput::sim

#endif  // GOODPUT_SIM_HOST_POOL_H_
