// Which live goodputd instance should own each partition: rendezvous
// (highest random weight) hashing of (instance, partition), so instances
// share the partitions about evenly and a join or a departure moves only
// the partitions that the joiner wins or the leaver held (docs/scaling.md,
// "Cluster mode"). Pure functions; thread-safe.
#ifndef GOODPUT_CLUSTER_PARTITION_ASSIGNER_H_
#define GOODPUT_CLUSTER_PARTITION_ASSIGNER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace goodput::cluster {

// The member of `members` (non-empty) that owns `partition`.
const std::string& OwnerOf(int32_t partition,
                           const std::vector<std::string>& members);

// The partitions in [0, partitions) that `self` owns among `members`
// (which need not contain `self`: then none), ascending.
std::vector<int32_t> PartitionsOf(absl::string_view self, int32_t partitions,
                                  const std::vector<std::string>& members);

// The partition of `job_id` among `partitions`: the same jump hash of the
// FNV-1a hash as the static shard list (util/shard_map.h).
int32_t PartitionOfJob(absl::string_view job_id, int32_t partitions);

}  // namespace goodput::cluster

#endif  // GOODPUT_CLUSTER_PARTITION_ASSIGNER_H_
