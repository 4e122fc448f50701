#include "server/batch_parser.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/wire_format_lite.h"

namespace goodput::server {
namespace {

using google::protobuf::internal::WireFormatLite;

constexpr int kEventsField = 3;  // Batch.events

absl::Status BadEvent(int index, int64_t offset) {
  return absl::InvalidArgumentError(absl::StrCat(
      "batch.events[", index, "]: does not parse as goodput.v1.Event (at byte ",
      offset,
      " of the batch): a string field (job_id, host, attempt, a name or a "
      "label) is not valid UTF-8, or the bytes are not an Event; nothing of "
      "the batch is stored"));
}

}  // namespace

absl::Status ParseBatch(absl::string_view bytes, v1::Batch* batch) {
  if (batch->ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    return absl::OkStatus();
  }
  return ExplainUnparsedBatch(bytes);
}

absl::Status ExplainUnparsedBatch(absl::string_view bytes) {
  google::protobuf::io::CodedInputStream in(
      reinterpret_cast<const uint8_t*>(bytes.data()),
      static_cast<int>(bytes.size()));
  int index = 0;
  while (uint32_t tag = in.ReadTag()) {
    const int64_t offset = in.CurrentPosition();
    if (WireFormatLite::GetTagFieldNumber(tag) != kEventsField ||
        WireFormatLite::GetTagWireType(tag) !=
            WireFormatLite::WIRETYPE_LENGTH_DELIMITED) {
      if (!WireFormatLite::SkipField(&in, tag)) break;
      continue;
    }
    std::string event_bytes;
    uint32_t size = 0;
    v1::Event event;
    if (!in.ReadVarint32(&size) || !in.ReadString(&event_bytes, size) ||
        !event.ParseFromString(event_bytes)) {
      return BadEvent(index, offset);
    }
    ++index;
  }
  return absl::InvalidArgumentError(
      "batch: does not parse as goodput.v1.Batch (is agent_id valid UTF-8?); "
      "nothing of the batch is stored");
}

}  // namespace goodput::server
