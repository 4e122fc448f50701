// Semantic validation of a decoded goodput.v1.Event (SPEC section 5, "bad
// input"): required fields, known enum values, sane numbers and sizes.
//
// Works the same for events from JSON Lines and from the protobuf wire.
// ValidationLimits is a plain value; ValidateEvent is a pure function, safe
// from any thread.
#ifndef GOODPUT_CODEC_EVENT_VALIDATOR_H_
#define GOODPUT_CODEC_EVENT_VALIDATOR_H_

#include <cstddef>
#include <cstdint>
#include <optional>

#include "absl/status/status.h"
#include "proto/event.pb.h"

namespace goodput {
namespace codec {

struct ValidationLimits {
  // Longest job_id, host, attempt, accelerator, framework, activity name,
  // label key and label value, in bytes.
  size_t max_string_bytes = 256;
  // Most labels on one job_submitted.
  size_t max_labels = 32;
  // The receiver's clock (Unix ns). When set, events stamped more than
  // `max_future_ns` after it, or more than `max_age_ns` before it (0 = no
  // limit), are rejected; unset for offline replay.
  std::optional<int64_t> now_ns;
  int64_t max_future_ns = int64_t{300} * 1000 * 1000 * 1000;
  int64_t max_age_ns = int64_t{5} * 365 * 24 * 3600 * 1000 * 1000 * 1000;
  // Largest values accepted (goodputd --max_chips and so on; values above
  // them are rejected naming the field, like the limits above): chips of
  // job_submitted, allocation and heartbeat; FLOPs and bytes of a step (and
  // job_submitted's per-step defaults); step numbers of step, checkpoint
  // and activity.
  int64_t max_chips = int64_t{1} << 20;
  double max_flops = 1e24;
  double max_bytes = 1e22;
  int64_t max_step = int64_t{1000} * 1000 * 1000 * 1000;
  // Most hosts on one HOSTS-scoped exclusion.
  size_t max_exclusion_hosts = 4096;
};

// OK, or InvalidArgument with the first problem found, formatted as
// "<field path>: <problem>, got <value>", e.g.
// "job_submitted.chips: must be > 0, got 0".
absl::Status ValidateEvent(const v1::Event& e, const ValidationLimits& limits);

}  // namespace codec
}  // namespace goodput

#endif  // GOODPUT_CODEC_EVENT_VALIDATOR_H_
