#include "sim/event_sink.h"

#include "google/protobuf/util/json_util.h"

namespace goodput::sim {

void JsonLinesSink::Emit(const v1::Event& event) {
  google::protobuf::util::JsonPrintOptions options;
  options.preserve_proto_field_names = true;
  line_.clear();
  (void)google::protobuf::util::MessageToJsonString(event, &line_, options);
  line_ += '\n';
  out_->write(line_.data(), static_cast<std::streamsize>(line_.size()));
  ++events_;
}

absl::Status JsonLinesSink::Finish() {
  out_->flush();
  if (!*out_) return absl::DataLossError("writing the events failed");
  return absl::OkStatus();
}

void CountingSink::Emit(const v1::Event& event) {
  ++total_;
  ++by_kind_[event.body_case() % 32];
}

}  // namespace goodput::sim
