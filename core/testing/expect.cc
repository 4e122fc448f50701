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

}  // namespace goodput::core::testing
