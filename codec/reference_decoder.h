// Reference JSON Lines decoder: one line (the proto3 JSON mapping of
// goodput.v1.Event) to an Event, through protobuf's own JSON parser.
//
// This is the definition of what a valid line means; FastDecoder must agree
// with it on every input. Stateless free function, safe to call from any
// thread.
#ifndef GOODPUT_CODEC_REFERENCE_DECODER_H_
#define GOODPUT_CODEC_REFERENCE_DECODER_H_

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "proto/event.pb.h"

namespace goodput {
namespace codec {

// Decodes `line` with google::protobuf::util::JsonStringToMessage. Unknown
// fields are rejected. Errors are InvalidArgument.
absl::StatusOr<v1::Event> DecodeEventReference(absl::string_view line);

// Same, into `*out` (cleared first), for callers that reuse a message.
absl::Status DecodeEventReferenceInto(absl::string_view line, v1::Event* out);

}  // namespace codec
}  // namespace goodput

#endif  // GOODPUT_CODEC_REFERENCE_DECODER_H_
