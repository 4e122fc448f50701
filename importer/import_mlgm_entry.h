#ifndef GOODPUT_IMPORTER_IMPORT_MLGM_ENTRY_H_
#define GOODPUT_IMPORTER_IMPORT_MLGM_ENTRY_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"

namespace goodput::importer {

// One instant in an ml-goodput-measurement log (Google's
// ml_goodput_measurement library, its GoodputRecorder entries and the Orbax
// checkpoint records it reads), decoded from one entry. A plain value.
struct MlgmMark {
  enum class Kind { kJobStart, kJobEnd, kStepStart, kBegin, kEnd, kSlices };
  // The span a kBegin/kEnd mark opens or closes.
  enum class Span {
    kTpuInit,       // tpu_init_{start,end}_time
    kTrainingPrep,  // training_prep_{start,end}_time
    kDataLoading,   // data_loading_{start,end}_time
    kCustom,        // custom_badput_event_{start,end}_time, `name`
    kSave,          // Orbax record event_type "save", `step`
    kRestore,       // Orbax record "restore"/"emergency_restore", `step`
    kElasticWait,   // elastic_wait_{start,end}_time, `name`: the event type
    kReinit,        // elastic_reinit_{start,end}_time
  };

  int64_t time_ns = 0;  // Unix time, rounded to the microsecond
  Kind kind = Kind::kJobStart;
  Span span = Span::kTpuInit;  // kBegin and kEnd only
  std::string name;      // kCustom: custom_badput_event_type; kElasticWait:
                         // elastic_wait_event_type ("unknown" when absent)
  int64_t step = 0;      // kStepStart: step_count; kSave/kRestore: step
  std::string job_name;  // empty when the entry has none
  // kSlices (ElasticGoodputRecorder's slice counts, dated by
  // elastic_slice_counts_timestamp): total_slices (at least 1, as the
  // library reads it) and available_slices; active_slices is not read.
  int64_t total_slices = 0;
  int64_t available_slices = 0;
};

// Decodes one entry: either the library's bare payload (what
// GoodputRecorder passes to Cloud Logging) or a Cloud Logging LogEntry
// whose `jsonPayload` is that payload (its `timestamp` then dates Orbax
// records that carry no start time). Returns one mark, or two (begin and
// end) for an Orbax checkpoint record. Errors name the field and value,
// e.g. "step_count: must be an integer >= 0, got -1". Stateless.
absl::StatusOr<std::vector<MlgmMark>> ParseMlgmEntry(
    const nlohmann::json& entry);

}  // namespace goodput::importer

#endif  // GOODPUT_IMPORTER_IMPORT_MLGM_ENTRY_H_
