// libFuzzer harness for ValidateEvent and LineDecoder. Decodes the input with
// the reference decoder and validates it: this must never crash; LineDecoder
// must agree with reference-decode-then-validate; and every valid event must
// survive a round trip through protobuf's JSON printer (both field-name
// styles, read back by both decoders) and through the binary wire format.
#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/string_view.h"
#include "codec/event_validator.h"
#include "codec/fast_decoder.h"
#include "codec/line_decoder.h"
#include "codec/reference_decoder.h"
#include "google/protobuf/util/json_util.h"
#include "google/protobuf/util/message_differencer.h"
#include "proto/event.pb.h"

namespace {

using goodput::v1::Event;

// Limits with a fixed clock so "too far in the future" is exercised.
goodput::codec::ValidationLimits Limits() {
  goodput::codec::ValidationLimits limits;
  limits.now_ns = int64_t{1795341600} * 1000 * 1000 * 1000;  // 2026-11-22
  return limits;
}

void CheckJsonRoundTrip(const Event& event, bool proto_names,
                        goodput::codec::FastDecoder* fast) {
  google::protobuf::util::JsonPrintOptions options;
  options.preserve_proto_field_names = proto_names;
  std::string json;
  if (!google::protobuf::util::MessageToJsonString(event, &json, options)
           .ok()) {
    __builtin_trap();
  }
  const auto reference = goodput::codec::DecodeEventReference(json);
  Event fast_event;
  if (!reference.ok() || !fast->Decode(json, &fast_event).ok()) {
    __builtin_trap();
  }
  // EQUIVALENT: a -0.0 amount is printed as "-0", which protobuf's parser
  // reads back as the integer 0, i.e. an unset field.
  google::protobuf::util::MessageDifferencer differ;
  differ.set_message_field_comparison(
      google::protobuf::util::MessageDifferencer::EQUIVALENT);
  if (!differ.Compare(event, *reference) ||
      !differ.Compare(event, fast_event)) {
    __builtin_trap();
  }
}

void CheckWireRoundTrip(const Event& event) {
  Event copy;
  if (!copy.ParseFromString(event.SerializeAsString()) ||
      !google::protobuf::util::MessageDifferencer::Equals(event, copy)) {
    __builtin_trap();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static auto* const line_decoder = new goodput::codec::LineDecoder(Limits());
  static auto* const fast = new goodput::codec::FastDecoder();
  const absl::string_view line(reinterpret_cast<const char*>(data), size);
  const auto decoded = goodput::codec::DecodeEventReference(line);
  const bool valid =
      decoded.ok() && goodput::codec::ValidateEvent(*decoded, Limits()).ok();
  Event event;
  const absl::Status status = line_decoder->DecodeLine(line, &event);
  const bool blank = absl::StripAsciiWhitespace(line).empty();
  if (status.ok() != valid && !(blank && absl::IsNotFound(status))) {
    __builtin_trap();
  }
  if (!valid) return 0;
  CheckJsonRoundTrip(*decoded, /*proto_names=*/true, fast);
  CheckJsonRoundTrip(*decoded, /*proto_names=*/false, fast);
  CheckWireRoundTrip(*decoded);
  return 0;
}
