#include "codec/line_decoder.h"

#include "absl/strings/ascii.h"

namespace goodput {
namespace codec {

LineDecoder::LineDecoder(const ValidationLimits& limits) : limits_(limits) {}

absl::Status LineDecoder::DecodeLine(absl::string_view line, v1::Event* out) {
  if (absl::StripAsciiWhitespace(line).empty()) {
    out->Clear();
    return absl::NotFoundError("blank line");
  }
  absl::Status status = decoder_.Decode(line, out);
  if (!status.ok()) return status;
  return ValidateEvent(*out, limits_);
}

}  // namespace codec
}  // namespace goodput
