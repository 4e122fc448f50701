// ShardMap: the list of goodputd shards (`--server=HOST:PORT,HOST:PORT,...`)
// and the one rule that places a job on a shard: the jump consistent hash
// (Lamping and Veach, 2014) of the FNV-1a 64-bit hash of the job_id's
// bytes, over the number of shards. goodput-agent and goodputctl both use
// this class, so they always agree (docs/scaling.md says why this hash).
// An immutable value; thread-safe.
#ifndef GOODPUT_UTIL_SHARD_MAP_H_
#define GOODPUT_UTIL_SHARD_MAP_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace goodput {

class ShardMap {
 public:
  // Parses "HOST:PORT[,HOST:PORT...]". Each entry needs a host and a port
  // in 1..65535; entries must be distinct. Errors name `flag` and the
  // entry, e.g. `--server: entry 2 "b:x": want HOST:PORT`.
  static absl::StatusOr<ShardMap> Parse(absl::string_view text,
                                        absl::string_view flag);

  explicit ShardMap(std::vector<std::string> addresses)
      : addresses_(std::move(addresses)) {}

  size_t size() const { return addresses_.size(); }
  const std::string& address(size_t shard) const { return addresses_[shard]; }
  const std::vector<std::string>& addresses() const { return addresses_; }

  // The shard (index into addresses) that owns `job_id`.
  size_t ShardOf(absl::string_view job_id) const;
  // The shards an event with `job_id` goes to: its job's one, or, for an
  // event without a job_id (a host heartbeat), every shard, ascending. The
  // agent and goodputctl send both through this rule.
  std::vector<size_t> ShardsFor(absl::string_view job_id) const;

 private:
  std::vector<std::string> addresses_;
};

// FNV-1a, 64 bits, of `bytes`.
uint64_t Fnv1a64(absl::string_view bytes);

// Jump consistent hash: a bucket in [0, buckets) for `key`; growing
// `buckets` by one moves only 1/(buckets+1) of the keys, all to the new
// bucket. `buckets` must be >= 1.
int32_t JumpConsistentHash(uint64_t key, int32_t buckets);

}  // namespace goodput

#endif  // GOODPUT_UTIL_SHARD_MAP_H_
