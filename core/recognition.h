#ifndef GOODPUT_CORE_RECOGNITION_H_
#define GOODPUT_CORE_RECOGNITION_H_

#include <array>
#include <cstdint>
#include <optional>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "core/category.h"
#include "core/checkpoint_advice.h"
#include "core/report.h"
#include "proto/event.pb.h"
#include "proto/metrics_state.pb.h"

namespace goodput::core {

// Interruption reasons in metric order: PREEMPTED, FAILED, HOST_FAILURE,
// MAINTENANCE, OTHER (unspecified counts as OTHER).
inline constexpr int kNumReasons = 5;
int ReasonIndex(v1::Interruption::Reason reason);
const char* ReasonName(int index);
using ReasonCounts = std::array<int64_t, kNumReasons>;

// A duration a job observed, for the histograms of docs/metrics.md.
enum class ObservationKind {
  kStartup,                   // attempt start to its first completed step
  kTimeToRecover,             // attempt end to the next first completed step
  kTimeBetweenInterruptions,  // attempt start to its end
};
struct Observation {
  ObservationKind kind;
  int64_t nanos;
};

// One job's totals in recognition time (SPEC section 3 rule 11): time
// counts once its fate is known, so every field but the gauges at the end
// never decreases as the job's events are applied (a rebuild from the store
// may lower them; see JobLedger). Plain data, from JobTracker::Recognize().
struct Recognized {
  CategoryNanos nanos{};  // settled time per category
  int64_t costed_productive_ns = 0;
  // Rule 14, elastic jobs only (min_chips set): the settled time in
  // chip-seconds weighted by the chips each instant counted with.
  CategoryChipSeconds chip_seconds{};
  double costed_productive_chip_seconds = 0;
  double ideal_seconds = 0;
  ReasonCounts interruptions{};  // attempts ended (a restart: OTHER)
  ReasonCounts notices{};
  int64_t pg_above_one_steps = 0;
  int64_t duplicates = 0;
  int64_t steps = 0;  // highest completed step not lost; 0 if none

  // Gauges (not monotone).
  int64_t at_risk_ns = 0;  // as in the report, with the open step
  std::optional<int64_t> last_step_ns, last_checkpoint_ns;  // event times
  JobStateKind state = JobStateKind::kQueued;
  int64_t chips = 0;
  std::optional<int64_t> min_chips;  // rule 14: set for an elastic job
  int64_t last_event_ns = 0;
  std::optional<StepTimeSummary> step_time;  // issue 18, slow steps
  // Issue 18, checkpoint advice (the job's own interruptions only): the
  // advised and the actual interval between saves; unset when none.
  std::optional<double> checkpoint_advised_s, checkpoint_actual_s;
  // What advice is computed from (a TRAINING job), so that a scrape can
  // advise with its segment's interruption rate when the job has fewer
  // than kMinOwnInterruptions of its own; unset for other workloads.
  std::optional<CheckpointObservation> checkpoint;
};

// Adds the counters of `from` (every field above the gauges) to `*to`:
// the totals of several jobs counted as one (JobLedger::Absorb, the groups
// of evicted jobs in FleetMetrics). The gauges of `*to` stay as they are.
void AddCounters(const Recognized& from, Recognized* to);

// `r` as a RecognizedState (proto/metrics_state.proto), and back: a state
// with arrays of another length or an unknown job state is DataLoss naming
// `field` and the field inside it.
void SaveRecognized(const Recognized& r, internal::v1::RecognizedState* out);
absl::Status LoadRecognized(const internal::v1::RecognizedState& in,
                            absl::string_view field, Recognized* out);

}  // namespace goodput::core

#endif  // GOODPUT_CORE_RECOGNITION_H_
