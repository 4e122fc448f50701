#include "agent/shard_router.h"

#include <utility>

#include "absl/strings/str_cat.h"

namespace goodput::agent {

ShardRouter::ShardRouter(ShardMap map, std::vector<EventSink*> shards)
    : map_(std::move(map)), shards_(std::move(shards)) {}

void ShardRouter::Add(v1::Event event) {
  const std::vector<size_t> to = map_.ShardsFor(event.job_id());
  for (size_t i = 0; i + 1 < to.size(); ++i) shards_[to[i]]->Add(event);
  shards_[to.back()]->Add(std::move(event));
}

std::string ShardSpoolDir(const std::string& dir, size_t shard, size_t shards) {
  if (shards == 1) return dir;
  return absl::StrCat(dir, "/shard-", shard);
}

}  // namespace goodput::agent
