// LeaseStore: the narrow interface of a replicated key-value bucket with
// per-key revisions and one time-to-live for every key (a NATS JetStream KV
// bucket in production: cluster/nats_lease_store.h; an in-memory fake in
// tests: cluster/testing/fake_lease_store.h). Partition leases and cluster
// membership are keys in it (cluster/lease_keeper.h).
//
// A key written at time t is gone at t + ttl unless written again.
// Implementations are thread-safe.
#ifndef GOODPUT_CLUSTER_LEASE_STORE_H_
#define GOODPUT_CLUSTER_LEASE_STORE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace goodput::cluster {

struct LeaseEntry {
  std::string value;
  uint64_t revision = 0;
};

class LeaseStore {
 public:
  virtual ~LeaseStore() = default;

  // Writes `key` only if it is absent (never written, deleted or expired);
  // AlreadyExists if it holds a value. Returns the new revision.
  virtual absl::StatusOr<uint64_t> Create(absl::string_view key,
                                          absl::string_view value) = 0;
  // Compare-and-set: writes `key` only if its revision is `revision`;
  // FailedPrecondition if another write came between (or it expired).
  virtual absl::StatusOr<uint64_t> Update(absl::string_view key,
                                          absl::string_view value,
                                          uint64_t revision) = 0;
  // NotFound if absent.
  virtual absl::StatusOr<LeaseEntry> Get(absl::string_view key) = 0;
  // Removes `key` (absent is OK).
  virtual absl::Status Delete(absl::string_view key) = 0;
  // The keys that hold a value now, in any order.
  virtual absl::StatusOr<std::vector<std::string>> Keys() = 0;
};

}  // namespace goodput::cluster

#endif  // GOODPUT_CLUSTER_LEASE_STORE_H_
