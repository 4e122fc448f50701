// LogMatcher: turns the lines of one job's log into SPEC events through a
// LogProfile (docs/adapters.md, "From logs").
//
// Keeps the little state a log needs to become events: the attempt (a new
// one at each `start` line unless the caller fixes it), the last step (for
// lines that count k steps, and checkpoints without a step), whether a
// checkpoint save or a restore is open, whether the job ended, and the
// time of the previous timed line. Borrows the profile, which must outlive
// it. Not thread-safe: one matcher per log stream.
#ifndef GOODPUT_LOGS_LOG_MATCHER_H_
#define GOODPUT_LOGS_LOG_MATCHER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "logs/log_profile.h"
#include "proto/event.pb.h"

namespace goodput::logs {

// What a matcher remembers between lines that outlives a process (the
// agent keeps it with its read offsets, so a restart goes on numbering
// attempts and counting steps where it stopped).
struct MatcherState {
  int attempts = 0;  // start lines seen
  int64_t last_step = 0;
  bool ended = false;
  int64_t last_time_ns = -1;
};

struct MatcherOptions {
  std::string job_id;
  // A fixed attempt id (goodput-run's); empty: "1", "2", ... numbered by
  // the profile's `start` lines (none before the first).
  std::string attempt;
  // The attempt of events before the first `start` line when attempts are
  // numbered (e.g. "0" for the agent, so that every event has one).
  std::string attempt_before_start;
  // Whether `start` and `end` lines send `started` and `job_ended`; off
  // under goodput-run, whose own started/exit events say the same.
  bool lifecycle = true;
  // The year of a timestamp whose time_format has none (absl logging's).
  int default_year = 1970;
  // The time of lines without a timestamp before any line had one
  // (goodputctl logs --start_time); kNoReadTime: such lines are errors.
  int64_t initial_time_ns = -1;
};

class LogMatcher {
 public:
  // No time known yet, for Match's read_time_ns: use the previous line's.
  static constexpr int64_t kNoReadTime = -1;

  LogMatcher(const LogProfile& profile, MatcherOptions options);

  // Appends the events `line` (without its newline) means to `*out`. The
  // events' time is the line's own timestamp when the rule captures one,
  // else `read_time_ns`, else (kNoReadTime) the previous timed line's.
  // InvalidArgument names the profile, rule, capture and value of a bad
  // capture; FailedPrecondition if no time is known at all. A line no rule
  // takes is OK with nothing appended.
  absl::Status Match(absl::string_view line, int64_t read_time_ns,
                     std::vector<v1::Event>* out);

  // The index of the rule that took the last line, or -1.
  int last_rule() const { return last_rule_; }
  // Lines taken by a rule but dropped: after the job's `end`, before the
  // next `start`.
  int64_t dropped() const { return dropped_; }
  const LogProfile& profile() const { return profile_; }

  MatcherState state() const;
  void set_state(const MatcherState& state);

 private:
  struct Captures {
    int64_t time_ns = 0;
    int64_t step = -1;         // -1: not captured
    int64_t steps = -1;        // -1: not captured
    double flops = -1;         // < 0: not captured
    double tokens = -1;        // < 0: not captured
    double step_seconds = -1;  // step_time in seconds; < 0: not captured
  };

  absl::Status Capture(const LogRule& rule, absl::string_view line,
                       int64_t read_time_ns, Captures* c);
  absl::Status CaptureTime(const LogRule& rule, absl::string_view text,
                           int64_t* ns);
  absl::Status CaptureInt(const LogRule& rule, const char* name,
                          absl::string_view text, int64_t* value);
  absl::Status CaptureNumber(const LogRule& rule, const char* name,
                             absl::string_view text, double* value);
  absl::Status CaptureNumbers(const LogRule& rule,
                              const re2::StringPiece* groups, int n,
                              Captures* c);
  // The time of a line with no timestamp and no read time: the previous
  // line's, plus step_time for each step a step line completes.
  int64_t UntimedLineTime(const LogRule& rule, const Captures& c);
  void Apply(const LogRule& rule, const Captures& c,
             std::vector<v1::Event>* out);
  void ApplyStart(const LogRule& rule, const Captures& c,
                  std::vector<v1::Event>* out);
  void ApplyStep(const LogRule& rule, const Captures& c,
                 std::vector<v1::Event>* out);
  void ApplyCheckpointDone(const Captures& c, std::vector<v1::Event>* out);
  void ApplyRestore(const LogRule& rule, const Captures& c,
                    std::vector<v1::Event>* out);
  void ApplyEnd(const Captures& c, std::vector<v1::Event>* out);
  v1::Event* NewEvent(const Captures& c, std::vector<v1::Event>* out);
  void AddActivity(v1::Activity::Kind kind, const Captures& c,
                   std::vector<v1::Event>* out);

  const LogProfile& profile_;
  MatcherOptions options_;
  std::vector<int> hits_;  // reused by every Match
  std::string attempt_;
  int attempts_ = 0;
  int last_rule_ = -1;
  int64_t last_time_ns_ = -1;
  int64_t last_step_ = 0;
  bool saving_ = false;        // a checkpoint_start without its done
  int64_t save_step_ = -1;     // the step that start named, if any
  bool restore_step_ = false;  // this attempt's RESTORE step was sent
  bool ended_ = false;
  int64_t dropped_ = 0;
};

}  // namespace goodput::logs

#endif  // GOODPUT_LOGS_LOG_MATCHER_H_
