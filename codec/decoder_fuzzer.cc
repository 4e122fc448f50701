// libFuzzer harness: differential test of FastDecoder against the reference
// decoder. Any input must be accepted by both with the same Event (compared
// byte for byte after deterministic serialization, so -0.0 vs 0.0 and NaN
// payloads count), or rejected by both; otherwise the harness traps. An
// input PlainStepDecoder takes must be the reference's Event, valid under
// the default limits, and AppendPlainStepWire must write that Event's bytes
// (what goodput-agent spools for the line).
#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"
#include "codec/event_validator.h"
#include "codec/fast_decoder.h"
#include "codec/plain_step.h"
#include "codec/reference_decoder.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "proto/event.pb.h"

namespace {

std::string Deterministic(const goodput::v1::Event& event) {
  std::string bytes;
  google::protobuf::io::StringOutputStream stream(&bytes);
  google::protobuf::io::CodedOutputStream coded(&stream);
  coded.SetSerializationDeterministic(true);
  event.SerializeToCodedStream(&coded);
  coded.Trim();
  return bytes;
}

// Traps unless a line `plain` took decodes as `reference`, valid.
void CheckPlainStep(bool taken, const goodput::codec::PlainStep& step,
                    const absl::StatusOr<goodput::v1::Event>& reference) {
  if (!taken) return;
  if (!reference.ok() || !goodput::codec::ValidateEvent(*reference, {}).ok()) {
    __builtin_trap();
  }
  goodput::v1::Event event;
  goodput::codec::PlainStepToEvent(step, &event);
  if (Deterministic(event) != Deterministic(*reference)) __builtin_trap();
  std::string wire;
  goodput::codec::AppendPlainStepWire(step, &wire);
  if (wire != Deterministic(*reference)) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // One decoder for the whole run (as in production, one per thread), so
  // that state carried from line to line is exercised too.
  static auto* const fast = new goodput::codec::FastDecoder();
  static auto* const plain = new goodput::codec::PlainStepDecoder();
  const absl::string_view line(reinterpret_cast<const char*>(data), size);
  goodput::v1::Event fast_event;
  const absl::Status fast_status = fast->Decode(line, &fast_event);
  const auto reference = goodput::codec::DecodeEventReference(line);
  goodput::codec::PlainStep step;
  CheckPlainStep(plain->Decode(line, {}, &step), step, reference);
  if (fast_status.ok() != reference.ok()) __builtin_trap();
  if (!reference.ok()) return 0;
  if (Deterministic(fast_event) != Deterministic(*reference)) {
    __builtin_trap();
  }
  return 0;
}
