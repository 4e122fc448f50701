// MemberDirectory: who is in the cluster and where to call them, read from
// the lease bucket (docs/scaling.md, "One view whoever you ask"). Each
// live instance's membership key ("member.<id>", kept by its LeaseKeeper)
// holds the gRPC address it advertises (--cluster_advertise), and each
// partition's lease key ("lease.<p>") the id of its holder, so any
// instance can find every member to fan a query out to, and the owner of a
// job's partition. Borrows the store, which must outlive it. Thread-safe
// (the store is).
#ifndef GOODPUT_CLUSTER_MEMBER_DIRECTORY_H_
#define GOODPUT_CLUSTER_MEMBER_DIRECTORY_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "cluster/lease_store.h"

namespace goodput::cluster {

// A live member: its id and the address it advertises (empty if its
// record names none: a goodputd from before --cluster_advertise).
struct Member {
  std::string id;
  std::string address;
};

// The value of member `id`'s key: "advertise=HOST:PORT", or the id alone
// without an address (as before --cluster_advertise).
std::string MemberValue(absl::string_view id, absl::string_view advertise);
// The address in a member key's value; empty if it holds none.
std::string AdvertisedAddress(absl::string_view member_value);

class MemberDirectory {
 public:
  explicit MemberDirectory(LeaseStore* store) : store_(store) {}

  // The live members, sorted by id; a store error as it came.
  absl::StatusOr<std::vector<Member>> Members() const;
  // The id of the member whose lease names `partition`; NotFound if none
  // does (the partition has no owner now).
  absl::StatusOr<std::string> HolderOf(int32_t partition) const;

 private:
  LeaseStore* const store_;
};

}  // namespace goodput::cluster

#endif  // GOODPUT_CLUSTER_MEMBER_DIRECTORY_H_
