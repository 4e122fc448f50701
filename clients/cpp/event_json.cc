#include "clients/cpp/event_json.h"

#include "google/protobuf/util/json_util.h"

namespace goodput::client {

std::string EventToJsonLine(const v1::Event& event) {
  google::protobuf::util::JsonPrintOptions options;
  options.preserve_proto_field_names = true;
  std::string json;
  // Cannot fail for a well-formed message (no Any fields in Event).
  (void)google::protobuf::util::MessageToJsonString(event, &json, options);
  json += '\n';
  return json;
}

std::string SpoolRecordLine(const std::string& id, const v1::Event& event) {
  std::string line = "{\"id\":\"" + id + "\",\"event\":";
  line += EventToJsonLine(event);
  line.insert(line.size() - 1, "}");
  return line;
}

void SetTimeMillis(int64_t unix_nanos, v1::Event* event) {
  int64_t ms = unix_nanos / 1000000;
  if (unix_nanos < 0 && unix_nanos % 1000000 != 0) --ms;
  int64_t seconds = ms / 1000, rem = ms % 1000;
  if (rem < 0) {
    rem += 1000;
    --seconds;
  }
  event->mutable_time()->set_seconds(seconds);
  event->mutable_time()->set_nanos(static_cast<int32_t>(rem * 1000000));
}

}  // namespace goodput::client
