#include "cli/top_view.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "report/report_json.h"
#include "report/test_util.h"

namespace goodput::cli {
namespace {

using ::testing::HasSubstr;

TopContext Context() {
  TopContext c;
  c.server = "127.0.0.1:7700";
  c.metrics_url = "http://127.0.0.1:7701/metrics";
  c.counters =
      std::map<std::string, double>{{"agents", 3}, {"events accepted", 12345}};
  return c;
}

// `goodputctl top --once` on the hand-built two-job report.
TEST(TopViewTest, TwoJobsGolden) {
  auto json = report::WriteReportJson(report::testing::TwoJobReport());
  ASSERT_TRUE(json.ok());
  auto screen = RenderTop(*json, Context());
  ASSERT_TRUE(screen.ok()) << screen.status();
  report::testing::ExpectMatchesGolden("top_two_jobs.txt", *screen);
}

TEST(TopViewTest, NullRatiosPrintAsDashesAndMetricsMayBeMissing) {
  auto json = report::WriteReportJson(report::testing::OneEmptyJobReport());
  ASSERT_TRUE(json.ok());
  TopContext c = Context();
  c.counters.reset();
  auto screen = RenderTop(*json, c);
  ASSERT_TRUE(screen.ok());
  EXPECT_THAT(*screen, HasSubstr("MPG -   SG -   RG -   PG -   goodput -"));
  EXPECT_THAT(*screen, HasSubstr("(metrics not reachable)"));
}

TEST(TopViewTest, NotAReportIsAnErrorNamingWhatIsMissing) {
  EXPECT_THAT(RenderTop("{\"jobs\":[]}", Context()).status().message(),
              HasSubstr("\"fleet\""));
  EXPECT_FALSE(RenderTop("not json", Context()).ok());
  // Wrong types inside a report never throw.
  EXPECT_TRUE(
      RenderTop("{\"fleet\":1,\"jobs\":[{\"seconds\":\"x\"}]}", Context())
          .ok());
}

}  // namespace
}  // namespace goodput::cli
