#include "core/testing/expect.h"

#include "core/config.h"
#include "core/testing/timeline.h"
#include "gtest/gtest.h"

namespace goodput::core::testing {

void ExpectSeconds(const JobReport& job, double total,
                   const std::map<std::string, double>& seconds) {
  constexpr double kNs = kNanosPerSecond;
  EXPECT_NEAR(job.total_ns / kNs, total, 1e-9) << "total";
  for (const auto& [name, unused] : seconds) {
    bool known = false;
    for (int c = 0; c < kNumCategories; ++c) {
      known |= name == CategoryName(static_cast<Category>(c));
    }
    EXPECT_TRUE(known) << "no category " << name;
  }
  for (int c = 0; c < kNumCategories; ++c) {
    const char* name = CategoryName(static_cast<Category>(c));
    auto it = seconds.find(name);
    double want = it == seconds.end() ? 0 : it->second;
    EXPECT_NEAR(job.nanos[c] / kNs, want, 1e-9) << name;
  }
  EXPECT_EQ(SumNanos(job), job.total_ns) << "categories must sum to total";
}

void ExpectEqualReports(const FleetReport& a, const FleetReport& b) {
  ASSERT_EQ(a.jobs.size(), b.jobs.size());
  for (size_t i = 0; i < a.jobs.size(); ++i) {
    const JobReport &x = a.jobs[i], &y = b.jobs[i];
    EXPECT_EQ(x.job_id, y.job_id);
    EXPECT_EQ(x.nanos, y.nanos) << x.job_id;
    EXPECT_EQ(x.at_risk_ns, y.at_risk_ns) << x.job_id;
    EXPECT_EQ(x.lost_steps, y.lost_steps) << x.job_id;
    EXPECT_EQ(x.duplicates, y.duplicates) << x.job_id;
    EXPECT_EQ(x.state, y.state) << x.job_id;
    EXPECT_EQ(x.total_ns, y.total_ns) << x.job_id;
    EXPECT_EQ(x.custom_nanos, y.custom_nanos) << x.job_id;
    EXPECT_EQ(x.ideal_seconds, y.ideal_seconds) << x.job_id;
    EXPECT_EQ(x.last_step, y.last_step) << x.job_id;
    EXPECT_EQ(x.last_checkpoint, y.last_checkpoint) << x.job_id;
    EXPECT_EQ(x.labels, y.labels) << x.job_id;
    // Rule 14: an elastic job's allocation-weighted sums.
    EXPECT_EQ(x.min_chips, y.min_chips) << x.job_id;
    EXPECT_TRUE(x.step_time == y.step_time) << x.job_id;  // issue 18
    EXPECT_EQ(x.chip_seconds, y.chip_seconds) << x.job_id;
    EXPECT_EQ(x.costed_productive_chip_seconds,
              y.costed_productive_chip_seconds)
        << x.job_id;
  }
  EXPECT_EQ(a.fleet.chip_seconds, b.fleet.chip_seconds);
  EXPECT_EQ(a.fleet.held_chip_seconds, b.fleet.held_chip_seconds);
  EXPECT_EQ(a.fleet.requested_chip_seconds, b.fleet.requested_chip_seconds);
  EXPECT_EQ(a.fleet.capacity_chip_seconds, b.fleet.capacity_chip_seconds);
}

}  // namespace goodput::core::testing
