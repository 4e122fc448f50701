#include "cluster/nats_event_log.h"

#include "absl/strings/str_cat.h"
#include "cluster/nats_status.h"

namespace goodput::cluster {

absl::StatusOr<std::unique_ptr<NatsEventLog>> NatsEventLog::Open(
    NatsConnection* nats, const EventStreamConfig& config) {
  std::vector<const char*> subjects;
  for (const std::string& s : config.subjects) subjects.push_back(s.c_str());
  jsStreamConfig cfg;
  jsStreamConfig_Init(&cfg);
  cfg.Name = config.name.c_str();
  cfg.Subjects = subjects.data();
  cfg.SubjectsLen = static_cast<int>(subjects.size());
  cfg.Storage = js_FileStorage;
  cfg.Replicas = config.replicas;
  cfg.Duplicates = config.duplicate_window_ms * 1000 * 1000;  // ns
  jsStreamInfo* info = nullptr;
  jsErrCode error = static_cast<jsErrCode>(0);
  natsStatus s = js_AddStream(&info, nats->js(), &cfg, nullptr, &error);
  jsStreamInfo_Destroy(info);
  if (s != NATS_OK) {
    return FromNats(s, error, absl::StrCat("create stream ", config.name));
  }
  return std::unique_ptr<NatsEventLog>(new NatsEventLog(nats));
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
