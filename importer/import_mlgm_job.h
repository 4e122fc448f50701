#ifndef GOODPUT_IMPORTER_IMPORT_MLGM_JOB_H_
#define GOODPUT_IMPORTER_IMPORT_MLGM_JOB_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "importer/import_mlgm_entry.h"
#include "proto/event.pb.h"

namespace goodput::importer {

// How ml-goodput-measurement logs become goodput events (goodputctl
// import-mlgm flags). A plain value.
struct MlgmOptions {
  std::optional<std::string> job_id;  // replaces every entry's job_name
  int64_t chips = 0;  // > 0: a job_submitted with these chips first
  // > 0 (needs chips): that job_submitted's min_chips (SPEC rule 14); 0:
  // one slice (chips / total_slices of the job's first slice-count record)
  // for a job with slice counts, else none.
  int64_t min_chips = 0;
  std::string accelerator;  // for that job_submitted
  // Data loading after the attempt's first step start is folded into step
  // time (as the library does: JAX overlaps it with the device's work)
  // unless this is set; then it is DATA_WAIT.
  bool blocking_data_loading = false;
  // --exclude: [start, end) intervals (Unix ns) that become one JOB
  // exclusion event per job (docs/migrating.md, "Exclusions").
  std::vector<std::pair<int64_t, int64_t>> exclusions;
};

// Turns one job's marks (in time order) into goodput events (SPEC section
// 2), keeping the state the translation needs: the attempt, the step in
// flight and the open spans. The mapping, in short (docs/migrating.md has
// the whole of it):
//   job_start_time            -> started (a new attempt "mlgm-N")
//   step_start_time n         -> step n-1 completed (the first of an
//                                attempt: activity TRAINING); a step number
//                                that does not follow on is a restart
//   tpu_init / training_prep  -> activity INIT / PREP for the span
//   data_loading              -> DATA_WAIT before the first step start
//   custom_badput_event X     -> activity CUSTOM named X for the span
//   Orbax save of step s      -> step s completed, CHECKPOINT for the
//                                blocking span, then checkpoint s
//   Orbax restore of step s   -> activity RESTORE step s for the span
//   last job_end_time         -> the step in flight completes, job_ended
//                                SUCCEEDED
//   elastic slice counts      -> allocation of chips x available_slices /
//                                total_slices (needs chips; SPEC rule 14);
//                                the step start after a resize begins a
//                                step (not a restart), whatever its number
//   elastic wait of type T    -> activity CUSTOM named ELASTIC_SCALE_UP (T
//                                has "scale_up") or ELASTIC_SLICE_DOWN
//   elastic reinitialization  -> activity RESHARD (also over the accelerator
//                                init and preparation inside it)
// When a span ends, the activity goes back to what it was; marks at one
// instant give at most one activity. Owns the events
// it made until TakeEvents(). Not thread-safe.
class MlgmJobConverter {
 public:
  // `options` must outlive the converter. `min_chips` > 0 makes the job's
  // job_submitted elastic (SPEC rule 14).
  MlgmJobConverter(std::string job_id, const MlgmOptions* options,
                   int64_t min_chips = 0);

  // Applies `mark`, appending the events it implies. `last_end` says
  // whether a kJobEnd mark is the job's last one, the only one that ends
  // the job. A kEnd mark that closes no open span of this attempt, and a
  // mark later than the job's end, are errors naming the field, and change
  // nothing.
  absl::Status Apply(const MlgmMark& mark, bool last_end);

  // The events so far (the last activity included), in time order.
  std::vector<v1::Event> TakeEvents();

  // Slice-count records that became allocations, and those dropped by
  // reason (no chips, chips not a multiple of total_slices, total_slices
  // changed).
  int64_t slice_allocations() const { return slice_allocations_; }
  const std::map<std::string, int64_t>& dropped() const { return dropped_; }

 private:
  struct OpenSpan {
    MlgmMark::Span span;
    std::string key;  // upper-cased custom event type, else empty
    v1::Activity activity;
    bool hidden;  // folded into step time, or superseded by a step start
  };

  void Submit(int64_t t);
  void EnsureAttempt(int64_t t);
  void StartAttempt(int64_t t);
  void OnJobStart(int64_t t);
  void OnStepStart(const MlgmMark& mark);
  void OnBegin(const MlgmMark& mark);
  absl::Status OnEnd(const MlgmMark& mark);
  void OnJobEnd(int64_t t, bool last_end);
  void OnSlices(const MlgmMark& mark);
  void CompleteStep(int64_t t);
  v1::Activity Wanted() const;
  void SyncActivity(int64_t t);
  void FlushActivity();
  v1::Event& Emit(int64_t t, bool with_attempt);

  std::string job_id_;
  const MlgmOptions* options_;
  int64_t min_chips_;
  std::vector<v1::Event> events_;
  int64_t total_slices_ = 0;  // of the first slice-count record
  int64_t held_ = -1;         // chips of the last allocation (-1: none)
  // The held chips changed while a step was in flight (SPEC rule 14: that
  // step is lost); the next step start begins a step, not a restart.
  bool resized_ = false;
  int64_t slice_allocations_ = 0;
  std::map<std::string, int64_t> dropped_;
  bool submitted_ = false;
  bool ended_ = false;
  int64_t ended_ns_ = 0;
  int attempt_ = 0;                // 0: none yet
  bool implicit_attempt_ = false;  // started by an entry, not job_start_time
  bool stepping_ = false;          // a step started in this attempt
  int64_t step_ = 0;               // the step in flight (started last)
  bool step_done_ = false;         // ... already reported completed
  std::vector<OpenSpan> open_;
  std::optional<v1::Activity> shown_;  // last activity sent this attempt
  // The activity wanted after the marks at `pending_ns_`, sent once a later
  // mark comes: spans that end and begin at one instant give one activity.
  std::optional<v1::Activity> pending_;
  int64_t pending_ns_ = 0;
};

}  // namespace goodput::importer

#endif  // GOODPUT_IMPORTER_IMPORT_MLGM_JOB_H_
