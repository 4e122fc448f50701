#include "core/job_hosts.h"

#include <algorithm>

namespace goodput::core {

void JobHosts::Add(const std::string& host, int64_t time_ns) {
  if (host.empty()) return;
  auto [it, added] = last_ns_.try_emplace(host, time_ns);
  it->second = std::max(it->second, time_ns);
  newest_ns_ = std::max(newest_ns_, time_ns);
  if (added && last_ns_.size() > max_hosts_) DropStalest();
}

void JobHosts::DropStalest() {
  auto stalest = std::min_element(
      last_ns_.begin(), last_ns_.end(),
      [](const auto& a, const auto& b) { return a.second < b.second; });
  last_ns_.erase(stalest);
}

std::vector<std::string> JobHosts::Current() const {
  std::vector<std::string> out;
  for (const auto& [host, ns] : last_ns_) {
    if (newest_ns_ - ns <= recent_ns_) out.push_back(host);
  }
  return out;
}

}  // namespace goodput::core
