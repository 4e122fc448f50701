// LeaseKeeper: one goodputd instance's side of partition ownership in
// cluster mode (docs/scaling.md, "Cluster mode"). Each Tick renews the
// instance's membership key ("member.<id>"), reads the live members, and
// takes, renews or gives back the partition leases ("lease.<p>") so that
// the instance holds exactly the partitions rendezvous hashing gives it
// (cluster/partition_assigner.h). Leases are compare-and-set writes with the
// bucket's TTL, so a partition has at most one holder: a newcomer waits
// until the old holder deletes the lease or it expires.
//
// Holds(p) is what the apply loop asks before applying partition p's
// messages: it turns false at half the TTL after the last successful
// renewal, well before the key expires and another instance may take it.
// Borrows the store and clock, which must outlive it. Not thread-safe:
// one thread ticks it; Holds() is for that same thread.
#ifndef GOODPUT_CLUSTER_LEASE_KEEPER_H_
#define GOODPUT_CLUSTER_LEASE_KEEPER_H_

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "cluster/lease_store.h"
#include "util/clock.h"

namespace goodput::cluster {

struct LeaseKeeperOptions {
  std::string self;         // this instance's id: [-_a-zA-Z0-9]+
  int32_t partitions = 64;  // fixed when the cluster is created
  int64_t ttl_ns = 0;       // the bucket's TTL; tick at most every ttl/3
  // The gRPC address peers call this instance at (--cluster_advertise),
  // kept in its membership key (cluster/member_directory.h); may be empty.
  std::string advertise;
};

struct LeaseChanges {
  std::vector<int32_t> acquired;  // start applying these (from the tail)
  std::vector<int32_t> released;  // stopped holding these
  absl::Status status;            // the first error of the round, if any
};

class LeaseKeeper {
 public:
  LeaseKeeper(LeaseStore* store, Clock* clock, LeaseKeeperOptions options);

  // Checks the options: an id a KV key can hold, partitions > 0, ttl > 0.
  static absl::Status Validate(const LeaseKeeperOptions& options);

  // One round of membership and leases. Leases whose renewal is overdue
  // are released first, even when the store is unreachable.
  LeaseChanges Tick();
  // Gives back every lease and the membership (a clean shutdown).
  absl::Status Leave();

  bool Holds(int32_t partition) const;
  std::vector<int32_t> Held() const;
  // The live members seen by the last Tick, sorted.
  const std::vector<std::string>& members() const { return members_; }
  // Partitions that, at the end of the last Tick, no lease key named
  // (read at the round's start) and this instance did not hold: nobody
  // applies them. A healthy cluster has none after a round or two; -1
  // before the first Tick that could read the store.
  int32_t unowned() const { return unowned_; }

 private:
  struct Lease {
    uint64_t revision = 0;
    int64_t renewed_ns = 0;
  };

  absl::Status RenewMembership();
  absl::Status ReadMembers();
  void ReleaseStale(LeaseChanges* changes);
  void Release(int32_t partition, LeaseChanges* changes);
  void Keep(int32_t partition, LeaseChanges* changes);
  void Adopt(int32_t partition, LeaseChanges* changes);
  // Records `partition` as held at `revision`, renewed at `now_ns`; a
  // partition not held before is reported as acquired.
  void Take(int32_t partition, uint64_t revision, int64_t now_ns,
            LeaseChanges* changes);
  void Note(const absl::Status& s, LeaseChanges* changes);
  // Whether `s` says the store cannot be reached (down or timed out).
  static bool Unreachable(const absl::Status& s);
  void CountUnowned();

  LeaseStore* const store_;
  Clock* const clock_;
  const LeaseKeeperOptions options_;
  const std::string member_key_;
  std::optional<uint64_t> member_revision_;
  std::vector<std::string> members_;
  std::set<int32_t> leased_;  // lease keys seen by the last ReadMembers
  int32_t unowned_ = -1;
  std::map<int32_t, Lease> held_;
};

// "lease.<p>" and "member.<id>": the keys LeaseKeeper writes.
std::string LeaseKey(int32_t partition);
std::string MemberKey(absl::string_view id);

}  // namespace goodput::cluster

#endif  // GOODPUT_CLUSTER_LEASE_KEEPER_H_
