// PlainStep: a step event decoded straight from the plainest JSON Lines
// shape, the one agents write for nearly every line, without simdjson, a
// v1::Event or ValidateEvent (goodputctl replay's hot path).
//
// DecodePlainStep either gives exactly what LineDecoder::DecodeLine would
// (time, job_id, host, attempt, step.step; the four amounts +0.0), already
// valid under the limits, or declines; a declined line means nothing and
// goes to LineDecoder. A PlainStep is a plain value whose strings point into
// the decoded line; AppendPlainStepWire serializes its event without
// building one (goodput-agent's intake). PlainStepDecoder remembers the last
// time it parsed (one per thread); the free functions are pure and safe from
// any thread.
#ifndef GOODPUT_CODEC_PLAIN_STEP_H_
#define GOODPUT_CODEC_PLAIN_STEP_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"
#include "codec/event_validator.h"
#include "proto/event.pb.h"

namespace goodput {
namespace codec {

struct PlainStep {
  int64_t seconds = 0;  // time, as protobuf's Timestamp
  int32_t nanos = 0;
  absl::string_view job_id;  // into the line; never empty
  absl::string_view host;    // "" when absent
  absl::string_view attempt;
  int64_t step = 0;  // step.step
};

// True when `line` is one JSON object without whitespace whose keys are
// "time", "job_id" (or "jobId"), "step" and optionally "host" and
// "attempt", each once and in any order; whose strings are printable ASCII
// without '"' or '\\'; whose "step" is {"step":N} with N 1 to 18 digits,
// quoted or a JSON integer; and which ValidateEvent accepts under `limits`
// (with limits.now_ns set, the time must be inside its window, as
// ValidateEvent checks it). Then `*out` is the event. False otherwise,
// `*out` unspecified.
bool DecodePlainStep(absl::string_view line, const ValidationLimits& limits,
                     PlainStep* out);

// DecodePlainStep that keeps the text and value of the last time it
// parsed: most lines of a log have the time of the line before. Owns that
// copy; not thread-safe.
class PlainStepDecoder {
 public:
  bool Decode(absl::string_view line, const ValidationLimits& limits,
              PlainStep* out);

 private:
  // ParseRfc3339Strict(text) into `*out`, or the last result for the same
  // text.
  bool ParseTime(absl::string_view text, PlainStep* out);

  static constexpr size_t kMaxKeptTime = 40;
  bool has_last_ = false;
  char last_text_[kMaxKeptTime];
  size_t last_size_ = 0;
  int64_t last_seconds_ = 0;
  int32_t last_nanos_ = 0;
};

// `step` as the v1::Event LineDecoder gives for its line (`*out` cleared
// first).
void PlainStepToEvent(const PlainStep& step, v1::Event* out);

// The size of PlainStepToEvent's event serialized (ByteSizeLong).
size_t PlainStepWireSize(const PlainStep& step);
// Writes that event serialized at `p` (PlainStepWireSize bytes), byte for
// byte what SerializeAsString writes for it, without building it; returns
// the end.
uint8_t* WritePlainStepWire(const PlainStep& step, uint8_t* p);
// The same appended to `*out`.
void AppendPlainStepWire(const PlainStep& step, std::string* out);

}  // namespace codec
}  // namespace goodput

#endif  // GOODPUT_CODEC_PLAIN_STEP_H_
