#include "sim/host_pool.h"

#include <utility>

namespace goodput::sim {

int HostPool::AddHost(Host host) {
  Group* group = FindGroup(host.accelerator);
  if (group == nullptr) {
    group = &groups_.emplace_back();
    group->accelerator = host.accelerator;
    group->chips_per_host = host.chips;
    group->by_free.resize(host.chips + 1);
  }
  // A group's hosts all have its chips per host.
  host.chips = group->chips_per_host;
  const int index = static_cast<int>(hosts_.size());
  group->capacity += host.chips;
  group->by_free[host.chips].insert(index);
  free_.push_back(host.chips);
  free_chips_ += host.chips;
  hosts_.push_back(std::move(host));
  return index;
}

std::optional<HostPool::Grant> HostPool::Allocate(
    const std::string& accelerator, int64_t chips) {
  Group* group = FindGroup(accelerator);
  if (group == nullptr || chips <= 0) return std::nullopt;
  const int per_host = group->chips_per_host;
  Grant grant;
  if (chips < per_host) {
    for (int free = static_cast<int>(chips); free <= per_host; ++free) {
      if (group->by_free[free].empty()) continue;
      const int host = *group->by_free[free].begin();
      SetFree(*group, host, free - static_cast<int>(chips));
      grant.hosts.push_back(host);
      grant.chips_per_host = static_cast<int>(chips);
      return grant;
    }
    return std::nullopt;
  }
  const int64_t needed = (chips + per_host - 1) / per_host;
  std::set<int>& whole = group->by_free[per_host];
  if (static_cast<int64_t>(whole.size()) < needed) return std::nullopt;
  grant.hosts.assign(whole.begin(), std::next(whole.begin(), needed));
  grant.chips_per_host = per_host;
  for (int host : grant.hosts) SetFree(*group, host, 0);
  return grant;
}

void HostPool::Release(const Grant& grant) {
  for (int host : grant.hosts) {
    Group* group = FindGroup(hosts_[host].accelerator);
    SetFree(*group, host, free_[host] + grant.chips_per_host);
  }
}

int64_t HostPool::Capacity(const std::string& accelerator) const {
  const Group* group = FindGroup(accelerator);
  return group == nullptr ? 0 : group->capacity;
}

int HostPool::ChipsPerHost(const std::string& accelerator) const {
  const Group* group = FindGroup(accelerator);
  return group == nullptr ? 0 : group->chips_per_host;
}

HostPool::Group* HostPool::FindGroup(const std::string& accelerator) {
  for (Group& group : groups_) {
    if (group.accelerator == accelerator) return &group;
  }
  return nullptr;
}

const HostPool::Group* HostPool::FindGroup(
    const std::string& accelerator) const {
  return const_cast<HostPool*>(this)->FindGroup(accelerator);
}

void HostPool::SetFree(Group& group, int host, int free) {
  group.by_free[free_[host]].erase(host);
  group.by_free[free].insert(host);
  free_chips_ += free - free_[host];
  free_[host] = free;
}

}  // namespace goodput::sim
