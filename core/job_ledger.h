#ifndef GOODPUT_CORE_JOB_LEDGER_H_
#define GOODPUT_CORE_JOB_LEDGER_H_

#include <cstddef>
#include <cstdint>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "core/category.h"
#include "core/recognition.h"
#include "proto/metrics_state.pb.h"

namespace goodput::core {

// What a job's counters gained since the previous JobLedger::Update.
struct CounterIncrease {
  CategoryNanos nanos{};  // never negative
  int64_t costed_productive_ns = 0;
  double ideal_seconds = 0;
  ReasonCounts interruptions{}, notices{};
  int64_t pg_above_one_steps = 0, duplicates = 0, steps = 0;
  // Settled time a rebuild took back, per category, that the counters had
  // already counted and keep (counters never decrease).
  CategoryNanos clamped{};
  // Rule 14, elastic jobs: the same in allocation-weighted chip-seconds.
  CategoryChipSeconds chip_seconds{}, clamped_chip_seconds{};
  double costed_productive_chip_seconds = 0;
};

// Turns one job's Recognized totals into monotone counter increases. The
// totals only grow as events apply, but a late-event rebuild of the job
// from the store may lower them: the ledger keeps the high-water mark of
// every field, so counters never decrease, and reports the fall as
// `clamped`. It also remembers how many observations were consumed. A
// plain value; not thread-safe.
class JobLedger {
 public:
  CounterIncrease Update(const Recognized& now);

  // Observations consumed so far; `Consume` returns the first index not
  // yet consumed of a list now `size` long and marks all consumed (a
  // rebuilt, shorter list consumes nothing new).
  size_t Consume(size_t size);

  // Takes over what `other` counted (a job's ledger folded into the ledger
  // of a group that now holds the job's totals): adds its high-water marks
  // and previous totals, so the group's next Update counts only what the
  // job's totals gained since.
  void Absorb(const JobLedger& other);

  const Recognized& counted() const { return high_; }

  // Everything it holds, and back; a state that does not load is DataLoss
  // naming `field` and the field inside it, and leaves the ledger as it was.
  void SaveState(internal::v1::JobLedgerState* state) const;
  absl::Status LoadState(const internal::v1::JobLedgerState& state,
                         absl::string_view field);

 private:
  Recognized high_;             // high-water marks
  CategoryNanos last_nanos_{};  // the previous totals, for `clamped`
  CategoryChipSeconds last_chip_seconds_{};  // ... elastic, in chip-seconds
  size_t observations_ = 0;
};

}  // namespace goodput::core

#endif  // GOODPUT_CORE_JOB_LEDGER_H_
