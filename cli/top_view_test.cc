#include "cli/top_view.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "report/query_proto.h"
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

// `goodputctl top --once` on the summary of the hand-built two-job report.
TEST(TopViewTest, TwoJobsGolden) {
  const v1::SummaryResponse summary =
      report::SummaryFromReport(report::testing::TwoJobReport(), 10);
  auto screen = RenderTop(summary, Context());
  ASSERT_TRUE(screen.ok()) << screen.status();
  report::testing::ExpectMatchesGolden("top_two_jobs.txt", *screen);
}

TEST(TopViewTest, NullRatiosPrintAsDashesAndCountersMayBeMissing) {
  const v1::SummaryResponse summary =
      report::SummaryFromReport(report::testing::OneEmptyJobReport(), 10);
  TopContext c = Context();
  c.counters.reset();
  auto screen = RenderTop(summary, c);
  ASSERT_TRUE(screen.ok());
  EXPECT_THAT(*screen, HasSubstr("MPG -   SG -   RG -   PG -   goodput -"));
  EXPECT_THAT(*screen, HasSubstr("(counters not available)"));
}

TEST(TopViewTest, TheWorstJobsAreCutToTheContextsLimit) {
  const v1::SummaryResponse summary =
      report::SummaryFromReport(report::testing::TwoJobReport(), 10);
  TopContext c = Context();
  c.worst_jobs = 1;
  auto screen = RenderTop(summary, c);
  ASSERT_TRUE(screen.ok());
  EXPECT_THAT(*screen, HasSubstr("llm-7 "));
  EXPECT_THAT(*screen, ::testing::Not(HasSubstr("serve-1 ")));
}

TEST(TopViewTest, AMalformedJobIsAnErrorNamingIt) {
  v1::SummaryResponse summary;
  summary.add_worst_jobs()->set_job_id("j1");
  EXPECT_THAT(std::string(RenderTop(summary, Context()).status().message()),
              HasSubstr("job 'j1'"));
}

TEST(TopViewTest, IngestCountersByName) {
  v1::IngestCounters in;
  in.set_agents(2);
  in.set_accepted_events(10);
  in.set_rejected_events(1);
  in.set_duplicate_batches(3);
  const auto counters = IngestCounters(in);
  EXPECT_EQ(counters.at("agents"), 2);
  EXPECT_EQ(counters.at("events accepted"), 10);
  EXPECT_EQ(counters.at("events rejected"), 1);
  EXPECT_EQ(counters.at("batches duplicate"), 3);
}

}  // namespace
}  // namespace goodput::cli
