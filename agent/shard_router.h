// ShardRouter: the agent's routing by job (docs/scaling.md). Sends each
// event to the sink of the shard that owns its job_id (ShardMap::ShardOf,
// the rule goodputctl uses too), a host heartbeat to its host's capacity
// shard only (ShardMap::CapacityShardOf: the shards' capacities add up to
// the fleet's), and a HOSTS or FLEET exclusion to every shard. Does not
// own the sinks (one Batcher per shard, each with its own spool and
// uplink). Thread-safe: immutable after construction.
#ifndef GOODPUT_AGENT_SHARD_ROUTER_H_
#define GOODPUT_AGENT_SHARD_ROUTER_H_

#include <string>
#include <vector>

#include "agent/event_sink.h"
#include "util/shard_map.h"

namespace goodput::agent {

class ShardRouter : public EventSink {
 public:
  // `shards[i]` takes the events of map.address(i); same size as `map`.
  ShardRouter(ShardMap map, std::vector<EventSink*> shards);

  void Add(v1::Event event) override;
  void AddWithId(v1::Event event, uint64_t id) override;
  void AddPlainStep(const codec::PlainStep& step) override;
  // Syncs every shard; the first error.
  absl::Status Sync() override;

 private:
  const ShardMap map_;
  const std::vector<EventSink*> shards_;
};

// The spool directory of shard `shard` of `shards` under --spool_dir
// `dir`: `dir` itself for one shard (today's layout), else
// `dir/shard-<shard>`; each is its own agent identity and sequence.
std::string ShardSpoolDir(const std::string& dir, size_t shard, size_t shards);

}  // namespace goodput::agent

#endif  // GOODPUT_AGENT_SHARD_ROUTER_H_
