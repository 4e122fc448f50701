// LineDecoder: one JSON Lines line to a valid goodput.v1.Event, i.e.
// FastDecoder (syntax and mapping) followed by ValidateEvent (meaning).
//
// This is the API the CLI, agent and server use for JSON Lines input. Owns
// its FastDecoder and a copy of the limits; not thread-safe: use one
// instance per thread.
#ifndef GOODPUT_CODEC_LINE_DECODER_H_
#define GOODPUT_CODEC_LINE_DECODER_H_

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "codec/event_validator.h"
#include "codec/fast_decoder.h"
#include "proto/event.pb.h"

namespace goodput {
namespace codec {

class LineDecoder {
 public:
  explicit LineDecoder(const ValidationLimits& limits = ValidationLimits());

  // Decodes and validates `line` into `*out`. Returns:
  //  - OK for a valid event;
  //  - NotFound("blank line") when the line holds only whitespace, so that
  //    callers can skip it without counting it as bad;
  //  - InvalidArgument naming the field for a bad line (`*out` is then
  //    unspecified).
  absl::Status DecodeLine(absl::string_view line, v1::Event* out);

  // The limits in force; e.g. a server updates now_ns before each batch.
  ValidationLimits& limits() { return limits_; }
  const ValidationLimits& limits() const { return limits_; }

  const FastDecoder& decoder() const { return decoder_; }

 private:
  FastDecoder decoder_;
  ValidationLimits limits_;
};

}  // namespace codec
}  // namespace goodput

#endif  // GOODPUT_CODEC_LINE_DECODER_H_
