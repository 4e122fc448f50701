// ShardMap: the list of goodputd shards (`--server=HOST:PORT,HOST:PORT,...`)
// and the one rule that places a job on a shard: the jump consistent hash
// (Lamping and Veach, 2014) of the FNV-1a 64-bit hash of the job_id's
// bytes, over the number of shards. A host's heartbeats go the same way by
// its host id, to its "capacity shard". goodput-agent and goodputctl both
// use this class, so they always agree (docs/scaling.md says why this
// hash). An immutable value; thread-safe.
#ifndef GOODPUT_UTIL_SHARD_MAP_H_
#define GOODPUT_UTIL_SHARD_MAP_H_

#include <cstdint>
#include <optional>
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
  // The shard that keeps `host`'s heartbeats (CapacityShardOf).
  size_t CapacityShardOf(absl::string_view host) const;
  // The shards an event goes to: a host heartbeat (`heartbeat_host` set)
  // to its host's capacity shard, else to its job's shard, or, without a
  // job_id (a HOSTS or FLEET exclusion), to every shard, ascending. The
  // agent and goodputctl send both through this rule.
  std::vector<size_t> ShardsFor(
      absl::string_view job_id,
      std::optional<absl::string_view> heartbeat_host = std::nullopt) const;

 private:
  std::vector<std::string> addresses_;
};

// goodputd --shard=I/N: the server is entry `index` (from 0) of a shard
// list of `count` entries, and keeps only its own hosts' heartbeats.
struct ShardPosition {
  size_t index = 0;
  size_t count = 1;
};
// Parses "I/N" (0 <= I < N); errors name `flag` and the text.
absl::StatusOr<ShardPosition> ParseShardPosition(absl::string_view text,
                                                 absl::string_view flag);

// The capacity shard of `host` among `count` (>= 1) shards: the jump hash
// of the FNV-1a of the host id, the rule of jobs (ShardMap::ShardOf).
size_t CapacityShardOf(absl::string_view host, size_t count);

// FNV-1a, 64 bits, of `bytes`.
uint64_t Fnv1a64(absl::string_view bytes);

// Jump consistent hash: a bucket in [0, buckets) for `key`; growing
// `buckets` by one moves only 1/(buckets+1) of the keys, all to the new
// bucket. `buckets` must be >= 1.
int32_t JumpConsistentHash(uint64_t key, int32_t buckets);

}  // namespace goodput

#endif  // GOODPUT_UTIL_SHARD_MAP_H_
