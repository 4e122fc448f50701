#include "server/batch_fingerprints.h"

#include "util/crc32c.h"

namespace goodput::server {

uint64_t BatchFingerprints::Of(int events, absl::string_view first,
                               absl::string_view last) {
  if (events == 0) return 0;
  const uint32_t crc = Crc32c(last, Crc32c(first));
  return (static_cast<uint64_t>(events) << 32) | crc;
}

void BatchFingerprints::Record(const std::string& agent, uint64_t sequence,
                               uint64_t fingerprint) {
  Recent& recent = by_agent_[agent];
  recent.emplace_back(sequence, fingerprint);
  if (recent.size() > kKept) recent.pop_front();
}

BatchFingerprints::Match BatchFingerprints::Compare(
    const std::string& agent, uint64_t sequence, uint64_t fingerprint) const {
  auto it = by_agent_.find(agent);
  if (it == by_agent_.end()) return Match::kUnknown;
  for (const auto& [seq, print] : it->second) {
    if (seq == sequence) {
      return print == fingerprint ? Match::kSame : Match::kDiffers;
    }
  }
  return Match::kUnknown;
}

}  // namespace goodput::server
