#include "cluster/partition_assigner.h"

#include "absl/strings/str_cat.h"
#include "util/shard_map.h"

namespace goodput::cluster {
namespace {

// A well-mixed weight of (member, partition): FNV-1a of the member id and
// the partition, then a 64-bit finalizer (splitmix64's) so that nearby
// partitions do not rank the members alike.
uint64_t Weight(absl::string_view member, int32_t partition) {
  uint64_t x = Fnv1a64(absl::StrCat(member, "/", partition));
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

}  // namespace

const std::string& OwnerOf(int32_t partition,
                           const std::vector<std::string>& members) {
  size_t best = 0;
  uint64_t best_weight = Weight(members[0], partition);
  for (size_t i = 1; i < members.size(); ++i) {
    const uint64_t w = Weight(members[i], partition);
    if (w > best_weight || (w == best_weight && members[i] < members[best])) {
      best = i;
      best_weight = w;
    }
  }
  return members[best];
}

std::vector<int32_t> PartitionsOf(absl::string_view self, int32_t partitions,
                                  const std::vector<std::string>& members) {
  std::vector<int32_t> out;
  if (members.empty()) return out;
  for (int32_t p = 0; p < partitions; ++p) {
    if (OwnerOf(p, members) == self) out.push_back(p);
  }
  return out;
}

int32_t PartitionOfJob(absl::string_view job_id, int32_t partitions) {
  return JumpConsistentHash(Fnv1a64(job_id), partitions);
}

}  // namespace goodput::cluster
