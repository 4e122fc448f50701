#include "cluster/nats_lease_store.h"

#include "absl/strings/str_cat.h"
#include "cluster/nats_status.h"

namespace goodput::cluster {
namespace {}  // namespace

absl::StatusOr<std::unique_ptr<NatsLeaseStore>> NatsLeaseStore::Open(
    NatsConnection* nats, const std::string& bucket, int64_t ttl_ms,
    int replicas) {
  kvConfig cfg;
  kvConfig_Init(&cfg);
  cfg.Bucket = bucket.c_str();
  cfg.History = 1;
  cfg.TTL = ttl_ms * 1000 * 1000;  // the C client takes nanoseconds
  cfg.Replicas = replicas;
  cfg.StorageType = js_FileStorage;
  kvStore* kv = nullptr;
  natsStatus s = js_CreateKeyValue(&kv, nats->js(), &cfg);
  if (s != NATS_OK) {
    return FromNats(s, absl::StrCat("create KV bucket ", bucket));
  }
  return std::unique_ptr<NatsLeaseStore>(
      new NatsLeaseStore(kv, nats->timeout_ms()));
}

NatsLeaseStore::~NatsLeaseStore() { kvStore_Destroy(kv_); }

absl::StatusOr<uint64_t> NatsLeaseStore::Create(absl::string_view key,
                                                absl::string_view value) {
  const std::string k(key);
  uint64_t rev = 0;
  natsStatus s = kvStore_Create(&rev, kv_, k.c_str(), value.data(),
                                static_cast<int>(value.size()));
  if (s == NATS_OK) return rev;
  // A lost create is a wrong last sequence: the stream's leader holds a
  // revision of the key. Ask only if the text did not say so: a Get may be
  // answered by a replica that already expired the key (it then came back
  // as Internal, the flake of NatsClusterTest.ThreeKeepers...).
  absl::Status status = FromNats(s, absl::StrCat("create ", key));
  if (absl::IsFailedPrecondition(status) || Get(key).ok()) {
    return absl::AlreadyExistsError(status.message());
  }
  return status;
}

absl::StatusOr<uint64_t> NatsLeaseStore::Update(absl::string_view key,
                                                absl::string_view value,
                                                uint64_t revision) {
  const std::string k(key);
  uint64_t rev = 0;
  natsStatus s = kvStore_Update(&rev, kv_, k.c_str(), value.data(),
                                static_cast<int>(value.size()), revision);
  if (s == NATS_OK) return rev;
  // A lost compare-and-set is a generic error too: the key now holds
  // another revision, or none (deleted or expired).
  absl::Status status =
      FromNats(s, absl::StrCat("update ", key, " at revision ", revision));
  if (absl::IsFailedPrecondition(status)) return status;
  absl::StatusOr<LeaseEntry> now = Get(key);
  if ((now.ok() && now->revision != revision) ||
      absl::IsNotFound(now.status())) {
    return absl::FailedPreconditionError(status.message());
  }
  return status;
}

absl::StatusOr<LeaseEntry> NatsLeaseStore::Get(absl::string_view key) {
  const std::string k(key);
  kvEntry* e = nullptr;
  natsStatus s = kvStore_Get(&e, kv_, k.c_str());
  if (s != NATS_OK) return FromNats(s, absl::StrCat("get ", key));
  LeaseEntry entry{std::string(static_cast<const char*>(kvEntry_Value(e)),
                               kvEntry_ValueLen(e)),
                   kvEntry_Revision(e)};
  kvEntry_Destroy(e);
  return entry;
}

absl::Status NatsLeaseStore::Delete(absl::string_view key) {
  const std::string k(key);
  return FromNats(kvStore_Delete(kv_, k.c_str()), absl::StrCat("delete ", key));
}

absl::StatusOr<std::vector<std::string>> NatsLeaseStore::Keys() {
  kvKeysList list;
  // Without a timeout the C client waits for ever for the listing's end,
  // which never comes if the connection drops meanwhile: the lease round
  // (and with it the "NATS unreachable" log line) would hang until NATS
  // returns.
  kvWatchOptions options;
  kvWatchOptions_Init(&options);
  options.Timeout = timeout_ms_;
  natsStatus s = kvStore_Keys(&list, kv_, &options);
  if (s == NATS_NOT_FOUND) return std::vector<std::string>();
  if (s != NATS_OK) return FromNats(s, "list keys");
  std::vector<std::string> keys(list.Keys, list.Keys + list.Count);
  kvKeysList_Destroy(&list);
  return keys;
}

}  // namespace goodput::cluster
