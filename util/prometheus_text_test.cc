#include "util/prometheus_text.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace goodput {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(PrometheusTextTest, RendersCountersGaugesAndLabels) {
  core::MetricFamilyData c = core::NewFamily(
      "x_lines_total", "Lines, by reason.", core::MetricKind::kCounter);
  core::AddSample(&c, {{"reason", "invalid"}}, 3);
  core::AddSample(&c, {{"reason", "partial"}}, 0);
  core::MetricFamilyData g =
      core::NewFamily("x_connected", "1 while up.", core::MetricKind::kGauge);
  core::AddSample(&g, {}, 1);
  absl::StatusOr<std::string> text = PrometheusText({c, g});
  ASSERT_TRUE(text.ok()) << text.status();
  EXPECT_THAT(*text, HasSubstr("# HELP x_lines_total Lines, by reason.\n"
                               "# TYPE x_lines_total counter\n"
                               "x_lines_total{reason=\"invalid\"} 3\n"
                               "x_lines_total{reason=\"partial\"} 0\n"));
  EXPECT_THAT(*text, HasSubstr("# TYPE x_connected gauge\nx_connected 1\n"));
}

TEST(PrometheusTextTest, HistogramGetsItsInfBucketAndEmptyFamiliesAreLeftOut) {
  core::MetricFamilyData h =
      core::NewFamily("x_seconds", "Latency.", core::MetricKind::kHistogram);
  h.bounds = {0.1, 1};
  core::MetricSample s;
  s.cumulative = {2, 5};
  s.count = 6;
  s.sum = 4.5;
  h.samples.push_back(s);
  const core::MetricFamilyData empty =
      core::NewFamily("x_empty", "Nothing.", core::MetricKind::kGauge);
  absl::StatusOr<std::string> text = PrometheusText({h, empty});
  ASSERT_TRUE(text.ok()) << text.status();
  EXPECT_THAT(*text, HasSubstr("x_seconds_bucket{le=\"0.1\"} 2\n"
                               "x_seconds_bucket{le=\"1\"} 5\n"
                               "x_seconds_bucket{le=\"+Inf\"} 6\n"));
  EXPECT_THAT(*text, HasSubstr("x_seconds_count 6\nx_seconds_sum 4.5\n"));
  EXPECT_THAT(*text, Not(HasSubstr("x_empty")));
}

}  // namespace
}  // namespace goodput
