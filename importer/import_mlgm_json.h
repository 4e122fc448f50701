#ifndef GOODPUT_IMPORTER_IMPORT_MLGM_JSON_H_
#define GOODPUT_IMPORTER_IMPORT_MLGM_JSON_H_

#include <string>

#include "proto/event.pb.h"

namespace goodput::importer {

// `event` as one JSON Lines line (no newline) in the spelling of SPEC
// section 2: keys time, job_id, attempt, then the body; numbers as JSON
// numbers (protobuf's printer would quote int64). Covers the bodies the
// importer makes: job_submitted, started, activity, step, checkpoint,
// job_ended; other bodies (e.g. started) are written as an empty object.
// Stateless.
std::string EventJsonLine(const v1::Event& event);

}  // namespace goodput::importer

#endif  // GOODPUT_IMPORTER_IMPORT_MLGM_JSON_H_
