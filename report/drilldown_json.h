#ifndef GOODPUT_REPORT_DRILLDOWN_JSON_H_
#define GOODPUT_REPORT_DRILLDOWN_JSON_H_

#include <string>

#include "absl/status/statusor.h"
#include "core/drilldown.h"
#include "nlohmann/json.hpp"

namespace goodput::report {

// The JSON writers of `goodputctl jobs | job ID | fleet --json` (shapes in
// docs/cli.md). Job objects and totals are exactly those of the report
// (cli/report_json.h); times are RFC 3339, durations seconds, chip-time
// chip-hours where a key says so; undefined values are null. Badput lists
// are largest first. Stateless, thread-safe functions.

nlohmann::ordered_json JobsToJson(const core::JobsView& view,
                                  const core::JobFilter& filter);
nlohmann::ordered_json JobViewToJson(const core::JobView& view);
nlohmann::ordered_json FleetViewToJson(const core::FleetView& view);

// The same, pretty-printed by DumpJson.
absl::StatusOr<std::string> WriteJobsJson(const core::JobsView& view,
                                          const core::JobFilter& filter);
absl::StatusOr<std::string> WriteJobViewJson(const core::JobView& view);
absl::StatusOr<std::string> WriteFleetViewJson(const core::FleetView& view);

}  // namespace goodput::report

#endif  // GOODPUT_REPORT_DRILLDOWN_JSON_H_
