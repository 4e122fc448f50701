// libFuzzer harness: differential test of FastDecoder against the reference
// decoder. Any input must be accepted by both with the same Event (compared
// byte for byte after deterministic serialization, so -0.0 vs 0.0 and NaN
// payloads count), or rejected by both; otherwise the harness traps.
#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"
#include "codec/fast_decoder.h"
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

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // One decoder for the whole run (as in production, one per thread), so
  // that state carried from line to line is exercised too.
  static auto* const fast = new goodput::codec::FastDecoder();
  const absl::string_view line(reinterpret_cast<const char*>(data), size);
  goodput::v1::Event fast_event;
  const absl::Status fast_status = fast->Decode(line, &fast_event);
  const auto reference = goodput::codec::DecodeEventReference(line);
  if (fast_status.ok() != reference.ok()) __builtin_trap();
  if (!reference.ok()) return 0;
  if (Deterministic(fast_event) != Deterministic(*reference)) {
    __builtin_trap();
  }
  return 0;
}
