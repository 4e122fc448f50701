#ifndef GOODPUT_REPORT_REPORT_JSON_H_
#define GOODPUT_REPORT_REPORT_JSON_H_

#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "core/checkpoint_advice.h"
#include "core/report.h"
#include "nlohmann/json.hpp"

namespace goodput::report {

// The one JSON writer of a core::FleetReport (SPEC section 4). Key order is
// the SPEC's; times are RFC 3339 UTC strings (FormatRfc3339), durations are
// seconds as JSON numbers (zero printed), undefined ratios, unknown chips
// (0) and unset steps are null. Beyond the SPEC, "fleet" and every segment
// value also carry "jobs" (jobs in the set) and "jobs_without_chips" (of
// those, jobs with unknown chips, left out of the chip-seconds sums).
// Issue 18: every job, "fleet" and segment value carries "cost_usd" and
// "energy_kwh" keyed by category (a job's null when its accelerator has no
// price or power), sets also "unpriced_chip_seconds" and
// "unpowered_chip_seconds" (left out of those sums). Issue 18, checkpoint
// advice: every job carries "checkpoints" (saves) and, in a report,
// "checkpoint_advice" (its own M, else its accelerator segment's rate
// scaled to its chips); "fleet" and every segment value carry
// "training_interruptions_per_chip_hour" and "checkpoint_advice" (the set's
// TRAINING jobs: core::AdviseSet). Advice is null when there is none.
// Stateless, thread-safe functions.

// The report as a JSON value (insertion-ordered keys).
nlohmann::ordered_json ReportToJson(const core::FleetReport& report);

// One entry of the report's "jobs" (SPEC key order).
nlohmann::ordered_json JobReportToJson(const core::JobReport& job);

// The "fleet" object, also the shape of every segment value.
nlohmann::ordered_json TotalsToJson(const core::Totals& totals);

// Issue 18: a checkpoint advice object, or null.
nlohmann::ordered_json CheckpointAdviceToJson(
    const std::optional<core::CheckpointAdvice>& advice);

// Pretty-prints `json` with 2-space indent and a final newline, replacing
// invalid UTF-8 with U+FFFD; an error of the JSON library comes back as a
// status (never throws). The one dump of every goodputctl JSON output.
absl::StatusOr<std::string> DumpJson(const nlohmann::ordered_json& json);

// The report pretty-printed with 2-space indent and a final newline.
// Invalid UTF-8 in strings is replaced with U+FFFD. Never throws; an
// error from the JSON library comes back as a status.
absl::StatusOr<std::string> WriteReportJson(const core::FleetReport& report);

}  // namespace goodput::report

#endif  // GOODPUT_REPORT_REPORT_JSON_H_
