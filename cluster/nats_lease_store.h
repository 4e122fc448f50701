// NatsLeaseStore: the LeaseStore of cluster mode, a JetStream KV bucket
// (replicated, with a TTL on every key) reached through a NatsConnection it
// borrows. Thread-safe (the C client is).
#ifndef GOODPUT_CLUSTER_NATS_LEASE_STORE_H_
#define GOODPUT_CLUSTER_NATS_LEASE_STORE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "cluster/lease_store.h"
#include "cluster/nats_connection.h"

namespace goodput::cluster {

class NatsLeaseStore : public LeaseStore {
 public:
  // Creates bucket `bucket` (or binds to it if it exists with the same
  // settings) with `replicas` copies and keys that live `ttl_ms`.
  static absl::StatusOr<std::unique_ptr<NatsLeaseStore>> Open(
      NatsConnection* nats, const std::string& bucket, int64_t ttl_ms,
      int replicas);
  ~NatsLeaseStore() override;

  absl::StatusOr<uint64_t> Create(absl::string_view key,
                                  absl::string_view value) override;
  absl::StatusOr<uint64_t> Update(absl::string_view key,
                                  absl::string_view value,
                                  uint64_t revision) override;
  absl::StatusOr<LeaseEntry> Get(absl::string_view key) override;
  absl::Status Delete(absl::string_view key) override;
  absl::StatusOr<std::vector<std::string>> Keys() override;

 private:
  NatsLeaseStore(kvStore* kv, int64_t timeout_ms)
      : kv_(kv), timeout_ms_(timeout_ms) {}

  kvStore* kv_;
  int64_t timeout_ms_;  // Keys' wait (the C client's default: for ever)
};

}  // namespace goodput::cluster

#endif  // GOODPUT_CLUSTER_NATS_LEASE_STORE_H_
