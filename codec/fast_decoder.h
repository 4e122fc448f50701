// FastDecoder: the hot-path JSON Lines decoder for goodput.v1.Event.
//
// It parses with simdjson and builds the Event directly for the common line
// shapes of SPEC section 2. Whenever a line is outside the shapes it fully
// understands (escapes, nulls, duplicate keys, numbers as strings, unknown
// keys, lenient JSON, invalid input, ...), it hands the line to
// DecodeEventReference, so its result is by construction the reference's:
// the same Event for every accepted line, a rejection for every rejected one.
// Owns its parser and buffers; not thread-safe: use one instance per thread.
#ifndef GOODPUT_CODEC_FAST_DECODER_H_
#define GOODPUT_CODEC_FAST_DECODER_H_

#include <cstdint>
#include <memory>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "proto/event.pb.h"

namespace goodput {
namespace codec {

class FastDecoder {
 public:
  FastDecoder();
  ~FastDecoder();
  FastDecoder(const FastDecoder&) = delete;
  FastDecoder& operator=(const FastDecoder&) = delete;

  // Decodes one line (the proto3 JSON mapping of Event) into `*out`, which is
  // cleared first. On error `*out` is cleared and the status is
  // InvalidArgument with a message naming the field where there is one.
  absl::Status Decode(absl::string_view line, v1::Event* out);

  // Lines decoded entirely on the fast path / handed to the reference.
  int64_t fast_lines() const { return fast_lines_; }
  int64_t fallback_lines() const { return fallback_lines_; }

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
  int64_t fast_lines_ = 0;
  int64_t fallback_lines_ = 0;
};

}  // namespace codec
}  // namespace goodput

#endif  // GOODPUT_CODEC_FAST_DECODER_H_
