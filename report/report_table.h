#ifndef GOODPUT_REPORT_REPORT_TABLE_H_
#define GOODPUT_REPORT_REPORT_TABLE_H_

#include <string>

#include "core/report.h"

namespace goodput::report {

// Renders a core::FleetReport as a fixed-width text table for people: a
// title line with as-of (and since), one row per job (job_id, chips, state,
// lifetime h:mm:ss, goodput %, SG, RG, PG, MPG, the largest badput category
// and its share of the job's lifetime), then a FLEET line (chip-weighted)
// and, when host capacity is known, a CAPACITY line. Undefined values print
// as "-". The output is not a stable interface; scripts use --json.
// Stateless, thread-safe.
std::string FormatReportTable(const core::FleetReport& report);

// The FLEET line (jobs, chip-hours, ratios, top badput) of `fleet` and,
// when capacity is known, the CAPACITY line.
std::string FormatFleetLines(const core::Totals& fleet);

}  // namespace goodput::report

#endif  // GOODPUT_REPORT_REPORT_TABLE_H_
