#ifndef GOODPUT_SERVER_BATCH_FINGERPRINTS_H_
#define GOODPUT_SERVER_BATCH_FINGERPRINTS_H_

#include <cstdint>
#include <deque>
#include <string>
#include <unordered_map>
#include <utility>

#include "absl/strings/string_view.h"

namespace goodput::server {

// BatchFingerprints: for each agent id, a fingerprint of each of its last
// kKept acknowledged batches (issue 15 item 3, docs/security.md, "Agent
// identities"). A resend of an acknowledged batch carries the same events;
// a batch with an acknowledged sequence and other events comes from a
// second agent with the same id (a cloned spool), which the sequence
// dedupe alone would silently take for a duplicate. In memory only: after
// a restart an agent's earlier batches cannot be compared. Plain value;
// not thread-safe (the Ingestor's lock guards it).
class BatchFingerprints {
 public:
  // More than an agent's batches in flight (--max_in_flight, 8 by
  // default), the ones a legitimate agent resends.
  static constexpr size_t kKept = 32;

  enum class Match { kUnknown, kSame, kDiffers };

  // The fingerprint of a batch of `events` events whose first and last
  // serialize to `first` and `last`: the count and the CRC-32C of the two
  // (a clone's batch differs in its events' times and contents); 0 for no
  // event.
  static uint64_t Of(int events, absl::string_view first,
                     absl::string_view last);

  // Remembers batch `sequence` of `agent` (acknowledged).
  void Record(const std::string& agent, uint64_t sequence,
              uint64_t fingerprint);
  // Whether batch `sequence` of `agent` had `fingerprint`, if remembered.
  Match Compare(const std::string& agent, uint64_t sequence,
                uint64_t fingerprint) const;
  // Forgets `agent` (its metrics series expired: it went silent).
  void Forget(const std::string& agent) { by_agent_.erase(agent); }

 private:
  using Recent = std::deque<std::pair<uint64_t, uint64_t>>;  // seq, print
  std::unordered_map<std::string, Recent> by_agent_;
};

}  // namespace goodput::server

#endif  // GOODPUT_SERVER_BATCH_FINGERPRINTS_H_
