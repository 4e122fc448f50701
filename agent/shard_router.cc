#include "agent/shard_router.h"

#include <utility>

#include "absl/strings/str_cat.h"

namespace goodput::agent {

ShardRouter::ShardRouter(ShardMap map, std::vector<EventSink*> shards)
    : map_(std::move(map)), shards_(std::move(shards)) {}

void ShardRouter::Add(v1::Event event) { AddWithId(std::move(event), 0); }

void ShardRouter::AddWithId(v1::Event event, uint64_t id) {
  const std::vector<size_t> to =
      event.has_heartbeat() ? map_.ShardsFor(event.job_id(), event.host())
                            : map_.ShardsFor(event.job_id());
  for (size_t i = 0; i + 1 < to.size(); ++i) {
    shards_[to[i]]->AddWithId(event, id);
  }
  shards_[to.back()]->AddWithId(std::move(event), id);
}

void ShardRouter::AddPlainStep(const codec::PlainStep& step) {
  // A plain step always has a job_id: ShardsFor's one shard.
  shards_[map_.ShardOf(step.job_id)]->AddPlainStep(step);
}

absl::Status ShardRouter::Sync() {
  absl::Status result;
  for (EventSink* shard : shards_) result.Update(shard->Sync());
  return result;
}

std::string ShardSpoolDir(const std::string& dir, size_t shard, size_t shards) {
  if (shards == 1) return dir;
  return absl::StrCat(dir, "/shard-", shard);
}

}  // namespace goodput::agent
