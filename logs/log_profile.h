// LogProfile: a parsed, checked log profile (docs/adapters.md, "From
// logs"): which lines of a training framework's log mean which goodput
// events, as RE2 patterns with named captures, compiled once at load.
//
// A profile owns its compiled patterns (RE2 objects); it is move-only and
// immutable after ParseLogProfile, so one profile may be shared by several
// LogMatchers on any threads (RE2 matching is thread-safe).
#ifndef GOODPUT_LOGS_LOG_PROFILE_H_
#define GOODPUT_LOGS_LOG_PROFILE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "proto/event.pb.h"
#include "re2/re2.h"
#include "re2/set.h"

namespace goodput::logs {

// What a line that a rule takes means; spelled in profiles as the
// lower-case names of LogRuleKindName.
enum class LogRuleKind {
  kStart,            // the program started: `started` (a new attempt)
  kInit,             // activity INIT
  kPrep,             // activity PREP
  kCompile,          // activity COMPILE
  kDataWait,         // activity DATA_WAIT
  kCustom,           // activity CUSTOM with the rule's `name` (e.g. eval)
  kTraining,         // activity TRAINING
  kStep,             // `step` (absolute, or k more steps per line)
  kCheckpointStart,  // activity CHECKPOINT
  kCheckpointDone,   // `checkpoint`, and TRAINING again after a start
  kRestoreStart,     // activity RESTORE (with its step when captured)
  kRestoreDone,      // RESTORE's step if not known yet, then TRAINING
  kInterruption,     // `interruption` with the rule's `reason`
  kEnd,              // `job_ended` SUCCEEDED (a clean end)
};

// "start", "init", ..., "end".
absl::string_view LogRuleKindName(LogRuleKind kind);

// One rule: a pattern and what a line it matches means. Capture indices
// are RE2 group numbers (1-based), 0 when the pattern lacks that capture.
struct LogRule {
  LogRuleKind kind = LogRuleKind::kStep;
  std::string pattern;         // as written; compiled after the line_prefix
  std::string name;            // kCustom: the activity's name
  int64_t steps_per_line = 0;  // kStep without a `step` capture
  v1::Interruption::Reason reason = v1::Interruption::OTHER;
  // kStart, kRestoreDone: the activity that follows (`then: INIT`);
  // KIND_UNSPECIFIED for none. restore_done's default is TRAINING.
  v1::Activity::Kind then = v1::Activity::KIND_UNSPECIFIED;
  std::unique_ptr<RE2> re;
  int step_group = 0;       // (?P<step>...): step or iteration number
  int steps_group = 0;      // (?P<steps>...): steps completed since the last
  int time_group = 0;       // (?P<time>...): the line's timestamp
  int flops_group = 0;      // (?P<flops>...): FLOPs of the step(s), all chips
  int tokens_group = 0;     // (?P<tokens>...): tokens of the step(s), all chips
  int step_time_group = 0;  // (?P<step_time>...): time per step
  int groups = 0;           // the pattern's number of capturing groups
  // Added to a captured `step` (e.g. 1 for a 0-based step index).
  int64_t step_offset = 0;
  // Seconds per unit of (?P<step_time>...): 1 (`step_time_unit: s`) or
  // 0.001 (`ms`).
  double step_time_scale = 1;
};

struct LogProfile {
  std::string name;
  std::string source;       // "builtin:NAME" or the file it came from
  std::string description;  // free text, e.g. the framework's source file
  std::string framework;    // for job_submitted, e.g. "pytorch"
  // Put before every rule's pattern (e.g. the logger's "[time] [LEVEL] ").
  std::string line_prefix;
  std::string time_format;  // absl::ParseTime format of (?P<time>...)
  bool time_format_has_year = true;
  absl::TimeZone time_zone = absl::UTCTimeZone();
  // FLOPs per token (all chips), for rules that capture `tokens`; 0: none.
  double flops_per_token = 0;
  std::vector<LogRule> rules;  // first match wins, in file order
  // All rules' patterns (with the prefix), unanchored, for one pass over a line
  // that most often matches none (rule i is pattern i).
  std::unique_ptr<RE2::Set> any;
};

// Parses and checks a profile in YAML (format: docs/adapters.md). `source`
// names it in errors, e.g. "profile megatron.yaml: rule 2 (step): pattern
// '...': unknown capture 'iter'". Every pattern is compiled here.
absl::StatusOr<LogProfile> ParseLogProfile(absl::string_view yaml,
                                           absl::string_view source);

}  // namespace goodput::logs

#endif  // GOODPUT_LOGS_LOG_PROFILE_H_
