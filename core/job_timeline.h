#ifndef GOODPUT_CORE_JOB_TIMELINE_H_
#define GOODPUT_CORE_JOB_TIMELINE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "proto/event.pb.h"

namespace goodput::core {

// One line of a job's timeline (goodputctl job ID): either a span of time
// in which the job was in one state (QUEUED, ALLOCATED, RECOVERING, or an
// activity of an attempt such as INIT or TRAINING), or a mark at one
// instant (an attempt started, an interruption or a notice, the job
// ended). Plain data.
struct TimelineEntry {
  enum class Kind { kSpan, kMark };
  Kind kind = Kind::kSpan;
  int64_t start_ns = 0;
  int64_t end_ns = 0;   // == start_ns for marks
  std::string attempt;  // the attempt's id or "#N"; "" outside attempts
  // Spans: "QUEUED", "ALLOCATED", "RECOVERING", or the activity kind
  // ("TRAINING", "CUSTOM eval", "RESTORE step 500"; "IDLE" also for an
  // attempt that has reported nothing yet). Marks: "STARTED",
  // "INTERRUPTED PREEMPTED", "NOTICE MAINTENANCE", "ENDED SUCCEEDED".
  std::string what;
  std::optional<int64_t> first_step;  // spans: steps completed in the span
  std::optional<int64_t> last_step;
  int64_t checkpoints = 0;                 // checkpoint events in the span
  std::optional<int64_t> last_checkpoint;  // highest checkpoint step
  bool ongoing = false;                    // spans: still open at as-of
};

// Builds the timeline of one job from its events (any order; those after
// `as_of_ns` are ignored), applied in SPEC section 3 rule 1 order. It
// describes the events, not the attribution: a span starts where the
// job's state or activity changes (an attempt starts at `started` or at
// its first activity or step, and is IDLE until its first report; if that
// report is a step, its spans so far become TRAINING or SERVING: SPEC
// section 3 rule 2; an interruption that is not a notice ends
// it and starts RECOVERING; an allocation below the requested chips (an
// elastic job's min_chips, rule 14) starts RECOVERING, or QUEUED before
// the job first ran), and the last span ends
// at job_ended or, still ongoing, at `as_of_ns`. Zero-length spans without
// steps or checkpoints are left out. A pure function.
std::vector<TimelineEntry> BuildJobTimeline(
    const std::vector<v1::Event>& events, int64_t as_of_ns);

}  // namespace goodput::core

#endif  // GOODPUT_CORE_JOB_TIMELINE_H_
