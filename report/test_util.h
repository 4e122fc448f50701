#ifndef GOODPUT_REPORT_TEST_UTIL_H_
#define GOODPUT_REPORT_TEST_UTIL_H_

#include <string>

#include "core/report.h"

namespace goodput::report::testing {

// Helpers shared by the cli tests. Stateless functions.

// A trivial timeline computed by hand from SPEC section 3: job "a" (8
// tpu-v5e chips) submitted 10:00, all-allocated and started 10:10, a step
// every 10 min until 11:00, SUCCEEDED at 11:00. Queued 600 s; every step is
// 600 s, so no compile share (rule 4); productive 3000 s; lifetime 3600 s.
extern const char kSimpleTimeline[];

// The text of `path`; fails the current test if it cannot be read.
std::string ReadFileOrDie(const std::string& path);

// Writes `text` to `path`; fails the current test on error.
void WriteFileOrDie(const std::string& path, const std::string& text);

// Compares `actual` with testdata/golden/`name`. With GOODPUT_UPDATE_GOLDEN
// set in the environment, rewrites the golden file instead.
void ExpectMatchesGolden(const std::string& name, const std::string& actual);

// Adds `job` to `totals` the way SPEC section 3 rule 10 weights it: by its
// chips, or counted in jobs_without_chips when chips are unknown.
void AddJobToTotals(const core::JobReport& job, core::Totals* totals);

// The job's $ and kWh (issue 18) added to `totals` by hand, independently
// of core/badput_cost.cc: chip-seconds x $/3600 and x W/3.6e6 (held
// categories only), or to the unpriced and unpowered chip-seconds.
void AddJobCostToTotals(const core::JobReport& job, core::Totals* totals);

// A hand-built report: two jobs (one training with every category, custom
// time and an interruption; one serving without costed steps), fleet and
// segment totals, capacity known for the fleet and one accelerator.
core::FleetReport TwoJobReport();

// A report with one job that has no chips and no time: every ratio null.
core::FleetReport OneEmptyJobReport();

}  // namespace goodput::report::testing

#endif  // GOODPUT_REPORT_TEST_UTIL_H_
