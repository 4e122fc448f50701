// FakeLeaseStore: an in-memory LeaseStore whose keys expire `ttl_ns` after
// their last write by the given clock, like a JetStream KV bucket with a
// TTL; `set_unavailable` makes every call fail as a lost connection does
// (`set_unavailable_after`: from the n-th next call on).
// Thread-safe.
#ifndef GOODPUT_CLUSTER_TESTING_FAKE_LEASE_STORE_H_
#define GOODPUT_CLUSTER_TESTING_FAKE_LEASE_STORE_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "cluster/lease_store.h"
#include "util/clock.h"

namespace goodput::cluster {

class FakeLeaseStore : public LeaseStore {
 public:
  FakeLeaseStore(Clock* clock, int64_t ttl_ns)
      : clock_(clock), ttl_ns_(ttl_ns) {}

  absl::StatusOr<uint64_t> Create(absl::string_view key,
                                  absl::string_view value) override {
    absl::MutexLock lock(&mu_);
    if (Refuse()) return Down();
    if (Live(key) != nullptr) {
      return absl::AlreadyExistsError(absl::StrCat("key ", key, " exists"));
    }
    return Write(key, value);
  }
  absl::StatusOr<uint64_t> Update(absl::string_view key,
                                  absl::string_view value,
                                  uint64_t revision) override {
    absl::MutexLock lock(&mu_);
    if (Refuse()) return Down();
    const Entry* e = Live(key);
    if (e == nullptr || e->revision != revision) {
      return absl::FailedPreconditionError(
          absl::StrCat("key ", key, ": wrong last revision ", revision));
    }
    return Write(key, value);
  }
  absl::StatusOr<LeaseEntry> Get(absl::string_view key) override {
    absl::MutexLock lock(&mu_);
    if (Refuse()) return Down();
    const Entry* e = Live(key);
    if (e == nullptr) return absl::NotFoundError(std::string(key));
    return LeaseEntry{e->value, e->revision};
  }
  absl::Status Delete(absl::string_view key) override {
    absl::MutexLock lock(&mu_);
    if (Refuse()) return Down();
    entries_.erase(std::string(key));
    return absl::OkStatus();
  }
  absl::StatusOr<std::vector<std::string>> Keys() override {
    absl::MutexLock lock(&mu_);
    if (Refuse()) return Down();
    std::vector<std::string> keys;
    for (const auto& [key, e] : entries_) {
      if (Live(key) != nullptr) keys.push_back(key);
    }
    return keys;
  }

  void set_unavailable(bool down) {
    absl::MutexLock lock(&mu_);
    unavailable_ = down;
  }
  // Goes down after `calls` more calls (a connection lost mid-round).
  void set_unavailable_after(int64_t calls) {
    absl::MutexLock lock(&mu_);
    down_after_ = calls;
  }
  // Calls refused as unavailable so far.
  int64_t refused() {
    absl::MutexLock lock(&mu_);
    return refused_;
  }

 private:
  struct Entry {
    std::string value;
    uint64_t revision = 0;
    int64_t written_ns = 0;
  };

  bool Refuse() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (down_after_ >= 0 && down_after_-- == 0) unavailable_ = true;
    if (unavailable_) ++refused_;
    return unavailable_;
  }
  static absl::Status Down() {
    return absl::UnavailableError("fake lease store: unavailable");
  }
  const Entry* Live(absl::string_view key) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    auto it = entries_.find(std::string(key));
    if (it == entries_.end()) return nullptr;
    if (clock_->NowNanos() >= it->second.written_ns + ttl_ns_) return nullptr;
    return &it->second;
  }
  uint64_t Write(absl::string_view key, absl::string_view value)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    entries_[std::string(key)] =
        Entry{std::string(value), ++revision_, clock_->NowNanos()};
    return revision_;
  }

  Clock* const clock_;
  const int64_t ttl_ns_;
  absl::Mutex mu_;
  std::map<std::string, Entry> entries_ ABSL_GUARDED_BY(mu_);
  uint64_t revision_ ABSL_GUARDED_BY(mu_) = 0;
  bool unavailable_ ABSL_GUARDED_BY(mu_) = false;
  int64_t down_after_ ABSL_GUARDED_BY(mu_) = -1;  // -1: never
  int64_t refused_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace goodput::cluster

#endif  // GOODPUT_CLUSTER_TESTING_FAKE_LEASE_STORE_H_
