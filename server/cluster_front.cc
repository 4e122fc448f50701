#include "server/cluster_front.h"

#include <string>
#include <utility>

#include "absl/strings/str_cat.h"

namespace goodput::server {

ClusterFront::ClusterFront(cluster::BatchPublisher* publisher, Clock* clock,
                           codec::ValidationLimits limits)
    : publisher_(publisher), clock_(clock), limits_(std::move(limits)) {}

absl::StatusOr<v1::Ack> ClusterFront::IngestTaking(v1::Batch* batch) {
  if (batch->agent_id().empty() || batch->sequence() == 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "batch: agent_id and a sequence from 1 are required, got agent_id \"",
        batch->agent_id(), "\" sequence ", batch->sequence()));
  }
  codec::ValidationLimits limits = limits_;
  limits.now_ns = clock_->NowNanos();
  v1::Ack ack;
  ack.set_sequence(batch->sequence());
  v1::Batch accepted;
  accepted.set_agent_id(batch->agent_id());
  accepted.set_sequence(batch->sequence());
  for (int i = 0; i < batch->events_size(); ++i) {
    absl::Status s = codec::ValidateEvent(batch->events(i), limits);
    if (s.ok()) {
      *accepted.add_events() = std::move(*batch->mutable_events(i));
      continue;
    }
    v1::Rejection* r = ack.add_rejections();
    r->set_index(i);
    r->set_reason(std::string(s.message()));
  }
  absl::StatusOr<cluster::PublishResult> published =
      publisher_->Publish(accepted);
  if (!published.ok()) {
    ++failed_;
    return absl::UnavailableError(absl::StrCat(
        "cluster log: batch ", batch->sequence(), " of agent ",
        batch->agent_id(),
        " not stored (the agent resends it): ", published.status().message()));
  }
  ack.set_accepted(static_cast<uint32_t>(accepted.events_size()));
  ++batches_;
  accepted_ += accepted.events_size();
  rejected_ += ack.rejections_size();
  duplicates_ += published->duplicates;
  return ack;
}

ClusterFrontStats ClusterFront::stats() const {
  return ClusterFrontStats{batches_.load(), accepted_.load(), rejected_.load(),
                           failed_.load(), duplicates_.load()};
}

}  // namespace goodput::server
