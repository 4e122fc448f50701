#ifndef GOODPUT_CORE_TESTING_EXPECT_H_
#define GOODPUT_CORE_TESTING_EXPECT_H_

#include <map>
#include <string>

#include "core/report.h"

namespace goodput::core::testing {

// Expects `job`'s lifetime to be `total` seconds, each category named in
// `seconds` (e.g. {"queued", 60}) to have that many seconds and every other
// category zero, and the categories to sum to the lifetime exactly.
void ExpectSeconds(const JobReport& job, double total,
                   const std::map<std::string, double>& seconds);

// Expects two fleet reports to hold the same jobs (by id, in order) with
// the same attribution, steps and labels, and the same fleet sums.
void ExpectEqualReports(const FleetReport& a, const FleetReport& b);

}  // namespace goodput::core::testing

#endif  // GOODPUT_CORE_TESTING_EXPECT_H_
