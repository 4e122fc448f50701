#include "cluster/nats_event_log.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "cluster/nats_status.h"

namespace goodput::cluster {
namespace {

// Owns an ephemeral pull consumer's subscription (the server removes the
// consumer when the subscription goes). Knows how many messages the
// consumer had pending after the last one it delivered (its metadata's
// NumPending; at first the consumer's info): while that is above zero the
// reader is behind (a new owner catching up), and a fetch asks for no more
// than that, so JetStream fills it at once from what it stores. Once caught
// up, a fetch waits at most `timeout_ms` for new messages.
class NatsLogReader : public LogReader {
 public:
  // Bounds a catch-up fetch the server does not fill (a pending count
  // that was too high, messages deleted meanwhile); a fillable one returns
  // as soon as it is filled. Well below the leases' renewal margin (a
  // sixth of the TTL, at least 1 s / 6).
  static constexpr int64_t kCatchUpExpiryMs = 100;

  NatsLogReader(natsSubscription* sub, uint64_t pending)
      : sub_(sub), pending_(pending) {}
  ~NatsLogReader() override {
    natsSubscription_Unsubscribe(sub_);
    natsSubscription_Destroy(sub_);
  }

  absl::StatusOr<std::vector<LogMessage>> Next(int max,
                                               int64_t timeout_ms) override {
    const bool behind = pending_ > 0;
    const int batch =
        behind ? static_cast<int>(std::min<uint64_t>(max, pending_)) : max;
    natsMsgList list;
    natsStatus s = behind ? FetchBehind(&list, batch)
                          : natsSubscription_Fetch(
                                &list, sub_, batch,
                                std::max<int64_t>(timeout_ms, 1), nullptr);
    if (s == NATS_TIMEOUT || s == NATS_NOT_FOUND) {
      pending_ = 0;  // the next message's metadata says again
      return std::vector<LogMessage>();
    }
    if (s != NATS_OK) return FromNats(s, "fetch");
    std::vector<LogMessage> out;
    out.reserve(list.Count);
    for (int i = 0; i < list.Count && s == NATS_OK; ++i) {
      s = Take(list.Msgs[i], &out);
    }
    natsMsgList_Destroy(&list);
    if (s != NATS_OK) return FromNats(s, "read message metadata");
    return out;
  }

 private:
  // A plain pull request (not "no wait": nats-server 2.9.10 held such a
  // request of 2 messages it had for its whole expiry), which the server
  // fills at once from what it stores.
  natsStatus FetchBehind(natsMsgList* list, int batch) {
    jsFetchRequest request;
    jsFetchRequest_Init(&request);
    request.Batch = batch;
    request.Expires = kCatchUpExpiryMs * 1000 * 1000;  // ns
    return natsSubscription_FetchRequest(list, sub_, &request);
  }

  natsStatus Take(natsMsg* msg, std::vector<LogMessage>* out) {
    jsMsgMetaData* meta = nullptr;
    natsStatus s = natsMsg_GetMetaData(&meta, msg);
    if (s != NATS_OK) return s;
    out->push_back(LogMessage{
        meta->Sequence.Stream,
        std::string(natsMsg_GetData(msg), natsMsg_GetDataLength(msg))});
    pending_ = meta->NumPending;
    jsMsgMetaData_Destroy(meta);
    return natsMsg_Ack(msg, nullptr);
  }

  natsSubscription* sub_;
  uint64_t pending_;
};

// The messages `sub`'s consumer has pending (0 if it cannot say: the
// reader then learns it from the first message it fetches).
uint64_t PendingOf(natsSubscription* sub) {
  jsConsumerInfo* info = nullptr;
  jsErrCode error = static_cast<jsErrCode>(0);
  if (natsSubscription_GetConsumerInfo(&info, sub, nullptr, &error) !=
      NATS_OK) {
    return 0;
  }
  const uint64_t pending = info->NumPending;
  jsConsumerInfo_Destroy(info);
  return pending;
}

constexpr absl::string_view kPartitionsKey = "partitions=";

// The description of a stream created with `partitions`.
std::string Describe(int32_t partitions) {
  return absl::StrCat("goodput events; ", kPartitionsKey, partitions);
}

// P from a description Describe wrote; 0 if it holds none.
int32_t PartitionsOf(absl::string_view description) {
  const size_t at = description.rfind(kPartitionsKey);
  int32_t p = 0;
  if (at == absl::string_view::npos ||
      !absl::SimpleAtoi(description.substr(at + kPartitionsKey.size()), &p)) {
    return 0;
  }
  return p;
}

// The existing stream's description (empty if it has none), or NotFound.
absl::StatusOr<std::string> ExistingDescription(NatsConnection* nats,
                                                const std::string& name) {
  jsStreamInfo* info = nullptr;
  jsErrCode error = static_cast<jsErrCode>(0);
  natsStatus s =
      js_GetStreamInfo(&info, nats->js(), name.c_str(), nullptr, &error);
  if (s == NATS_NOT_FOUND || error == JSStreamNotFoundErr) {
    return absl::NotFoundError(name);
  }
  if (s != NATS_OK) return FromNats(s, error, absl::StrCat("stream ", name));
  std::string out;
  if (info->Config != nullptr && info->Config->Description != nullptr) {
    out = info->Config->Description;
  }
  jsStreamInfo_Destroy(info);
  return out;
}

}  // namespace

EventStreamConfig SnapshotStreamConfig(int replicas, int32_t partitions,
                                       int64_t max_msgs_per_subject) {
  EventStreamConfig c;
  c.name = "GOODPUT_SNAPSHOTS";
  c.subjects = {"goodput.snap.*"};
  c.replicas = replicas;
  c.partitions = partitions;
  c.max_msgs_per_subject = max_msgs_per_subject;
  return c;
}

absl::StatusOr<std::unique_ptr<NatsEventLog>> NatsEventLog::Open(
    NatsConnection* nats, const EventStreamConfig& config) {
  absl::StatusOr<std::string> description =
      ExistingDescription(nats, config.name);
  if (absl::IsNotFound(description.status())) {
    description = Describe(config.partitions);
  }
  if (!description.ok()) return description.status();
  std::vector<const char*> subjects;
  for (const std::string& s : config.subjects) subjects.push_back(s.c_str());
  jsStreamConfig cfg;
  jsStreamConfig_Init(&cfg);
  cfg.Name = config.name.c_str();
  if (!description->empty()) cfg.Description = description->c_str();
  cfg.Subjects = subjects.data();
  cfg.SubjectsLen = static_cast<int>(subjects.size());
  cfg.Storage = js_FileStorage;
  cfg.Replicas = config.replicas;
  cfg.Duplicates = config.duplicate_window_ms * 1000 * 1000;  // ns
  if (config.max_msgs_per_subject > 0) {
    cfg.MaxMsgsPerSubject = config.max_msgs_per_subject;
  }
  jsStreamInfo* info = nullptr;
  jsErrCode error = static_cast<jsErrCode>(0);
  natsStatus s = js_AddStream(&info, nats->js(), &cfg, nullptr, &error);
  jsStreamInfo_Destroy(info);
  if (s != NATS_OK) {
    return FromNats(s, error, absl::StrCat("create stream ", config.name));
  }
  return std::unique_ptr<NatsEventLog>(
      new NatsEventLog(nats, config.name, PartitionsOf(*description)));
}

absl::StatusOr<PublishAck> NatsEventLog::Publish(absl::string_view subject,
                                                 absl::string_view message_id,
                                                 absl::string_view data) {
  const std::string subj(subject), id(message_id);
  jsPubOptions opts;
  jsPubOptions_Init(&opts);
  opts.MsgId = id.c_str();
  jsPubAck* ack = nullptr;
  jsErrCode error = static_cast<jsErrCode>(0);
  natsStatus s = js_Publish(&ack, nats_->js(), subj.c_str(), data.data(),
                            static_cast<int>(data.size()), &opts, &error);
  if (s != NATS_OK) {
    return FromNats(s, error, absl::StrCat("publish ", id, " to ", subject));
  }
  PublishAck out{ack->Sequence, ack->Duplicate};
  jsPubAck_Destroy(ack);
  return out;
}

}  // namespace goodput::cluster

namespace goodput::cluster {

absl::StatusOr<std::unique_ptr<LogReader>> NatsEventLog::Read(
    absl::string_view subject, uint64_t from_sequence) {
  const std::string subj(subject);
  jsSubOptions so;
  jsSubOptions_Init(&so);
  so.Stream = stream_.c_str();
  so.Config.FilterSubject = subj.c_str();
  so.Config.DeliverPolicy = js_DeliverByStartSequence;
  so.Config.OptStartSeq = std::max<uint64_t>(from_sequence, 1);
  so.Config.AckPolicy = js_AckExplicit;
  so.Config.InactiveThreshold = int64_t{60} * 1000 * 1000 * 1000;  // ns
  natsSubscription* sub = nullptr;
  jsErrCode error = static_cast<jsErrCode>(0);
  natsStatus s = js_PullSubscribe(&sub, nats_->js(), subj.c_str(), nullptr,
                                  nullptr, &so, &error);
  if (s != NATS_OK) {
    return FromNats(s, error,
                    absl::StrCat("read ", subject, " from ", from_sequence));
  }
  return std::unique_ptr<LogReader>(new NatsLogReader(sub, PendingOf(sub)));
}

}  // namespace goodput::cluster
