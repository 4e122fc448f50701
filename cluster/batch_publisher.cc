#include "cluster/batch_publisher.h"

#include <map>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "cluster/partition_assigner.h"
#include "cluster/partition_sink.h"

namespace goodput::cluster {
namespace {

constexpr int32_t kHeartbeats = kHeartbeatPartition;  // events without job_id

// The batch's events grouped by partition (kHeartbeats for no job_id), in
// their order within each group.
std::map<int32_t, v1::Batch> Split(const v1::Batch& batch, int32_t partitions) {
  std::map<int32_t, v1::Batch> parts;
  for (const v1::Event& e : batch.events()) {
    const int32_t p = e.job_id().empty()
                          ? kHeartbeats
                          : PartitionOfJob(e.job_id(), partitions);
    v1::Batch& part = parts[p];
    if (part.agent_id().empty()) {
      part.set_agent_id(batch.agent_id());
      part.set_sequence(batch.sequence());
    }
    *part.add_events() = e;
  }
  return parts;
}

// `part` cut into batches of at most `max_bytes` serialized (at least one
// event each).
std::vector<v1::Batch> Chunks(const v1::Batch& part, int64_t max_bytes) {
  std::vector<v1::Batch> chunks(1);
  for (const v1::Event& e : part.events()) {
    v1::Batch* c = &chunks.back();
    const int64_t size =
        static_cast<int64_t>(c->ByteSizeLong() + e.ByteSizeLong() + 16);
    if (c->events_size() > 0 && size > max_bytes) c = &chunks.emplace_back();
    if (c->agent_id().empty()) {
      c->set_agent_id(part.agent_id());
      c->set_sequence(part.sequence());
    }
    *c->add_events() = e;
  }
  return chunks;
}

}  // namespace

std::string BatchPublisher::PartitionSubject(int32_t partition) const {
  return absl::StrCat(options_.subject_prefix, ".p.", partition);
}

std::string BatchPublisher::HeartbeatSubject() const {
  return absl::StrCat(options_.subject_prefix, ".hb");
}

absl::StatusOr<PublishResult> BatchPublisher::Publish(const v1::Batch& batch) {
  PublishResult result;
  for (const auto& [p, part] : Split(batch, options_.partitions)) {
    const std::string subject =
        p == kHeartbeats ? HeartbeatSubject() : PartitionSubject(p);
    const std::string id_base =
        absl::StrCat(batch.agent_id(), "/", batch.sequence(), "/",
                     p == kHeartbeats ? std::string("hb") : absl::StrCat(p));
    absl::Status s = PublishPart(part, subject, id_base, &result);
    if (!s.ok()) return s;
  }
  return result;
}

absl::Status BatchPublisher::PublishPart(const v1::Batch& part,
                                         const std::string& subject,
                                         const std::string& id_base,
                                         PublishResult* result) {
  std::vector<v1::Batch> chunks = Chunks(part, options_.max_message_bytes);
  for (size_t i = 0; i < chunks.size(); ++i) {
    const std::string id = absl::StrCat(id_base, "/", i);
    absl::StatusOr<PublishAck> ack =
        log_->Publish(subject, id, chunks[i].SerializeAsString());
    if (!ack.ok()) return ack.status();
    ++result->parts;
    if (ack->duplicate) ++result->duplicates;
  }
  return absl::OkStatus();
}

}  // namespace goodput::cluster
