// Building one goodput.v1.Event from command-line style fields, for
// `goodputctl emit KIND --field=value ...` and the goodput-run launcher.
//
// Fields are the proto's names (proto/event.proto): the common ones
// (`job_id`, `time` as RFC 3339, default now; `host`, `attempt`) and those of
// KIND's body (e.g. `chips`, `reason`, `notice`); `label=KEY=VALUE`
// (repeatable) fills job_submitted's labels, whose workload defaults to
// TRAINING. The event is checked by the
// project's decoder and validator, so errors name the field and value the
// same way the agent and the server would. Pure functions; thread-safe.
#ifndef GOODPUT_CODEC_EMIT_EVENT_H_
#define GOODPUT_CODEC_EMIT_EVENT_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "proto/event.pb.h"

namespace goodput::codec {

using EmitFields = std::vector<std::pair<std::string, std::string>>;

// The event kinds (Event's body fields), e.g. "job_submitted", "allocation".
std::vector<std::string> EmitKinds();

// The valid event of `kind` with `fields`, stamped `now_ns` (Unix ns) unless
// a `time` field is given; InvalidArgument naming the field otherwise.
absl::StatusOr<v1::Event> BuildEvent(absl::string_view kind,
                                     const EmitFields& fields, int64_t now_ns);

}  // namespace goodput::codec

#endif  // GOODPUT_CODEC_EMIT_EVENT_H_
