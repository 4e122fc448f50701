// Strict RFC 3339 timestamp parsing for the fast decoding path.
//
// Accepts only the common shape "YYYY-MM-DDTHH:MM:SS[.F{1,9}](Z|+HH:MM|-HH:MM)"
// with a valid calendar date, years 0002..9998 and offsets below 24h, where
// the result provably equals protobuf's own Timestamp JSON parsing. Anything
// else returns false, and the caller defers to the reference parser. Pure
// functions, safe from any thread.
#ifndef GOODPUT_CODEC_RFC3339_H_
#define GOODPUT_CODEC_RFC3339_H_

#include <cstdint>

#include "absl/strings/string_view.h"

namespace goodput {
namespace codec {

// Parses `text` into Unix `*seconds` and `*nanos` (0..999999999). Returns
// false, leaving the outputs unspecified, when `text` is not in the strict
// shape above.
bool ParseRfc3339Strict(absl::string_view text, int64_t* seconds,
                        int32_t* nanos);

}  // namespace codec
}  // namespace goodput

#endif  // GOODPUT_CODEC_RFC3339_H_
