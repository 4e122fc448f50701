#ifndef GOODPUT_REPORT_DRILLDOWN_TABLE_H_
#define GOODPUT_REPORT_DRILLDOWN_TABLE_H_

#include <string>

#include "core/drilldown.h"

namespace goodput::report {

// The text tables of `goodputctl jobs | job ID | fleet` for people: aligned
// columns, lifetimes as h:mm:ss, chip-time in chip-hours with the unit,
// ratios with 3 decimals, shares as percentages, "-" where undefined.
// Badput is listed largest first, and each table ends with the command to
// drill down further, so an on-call user goes from the fleet to the job
// and the category that lost the most. Not a stable interface (scripts use
// --json). Stateless, thread-safe functions.

std::string FormatJobsTable(const core::JobsView& view,
                            const core::JobFilter& filter);
std::string FormatJobViewTable(const core::JobView& view);
std::string FormatFleetViewTable(const core::FleetView& view);

}  // namespace goodput::report

#endif  // GOODPUT_REPORT_DRILLDOWN_TABLE_H_
