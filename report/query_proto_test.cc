// The Query API's messages and core's views: every field survives the round
// trip (optional ones set and unset), malformed messages are named, and the
// summary of a report has its totals, states, badput and worst jobs.
#include "report/query_proto.h"

#include "core/job_report_proto.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "report/report_json.h"
#include "report/test_util.h"

namespace goodput::report {
namespace {

using ::testing::HasSubstr;

TEST(QueryProtoTest, TotalsRoundTripWithAndWithoutCapacity) {
  const core::FleetReport report = testing::TwoJobReport();
  ASSERT_TRUE(report.fleet.capacity_chip_seconds.has_value());
  std::vector<core::Totals> all = {report.fleet};
  for (const auto& [dimension, values] : report.segments) {
    for (const auto& [value, totals] : values) all.push_back(totals);
  }
  bool without_capacity = false;
  for (const core::Totals& totals : all) {
    without_capacity |= !totals.capacity_chip_seconds.has_value();
    absl::StatusOr<core::Totals> back = TotalsFromProto(TotalsToProto(totals));
    ASSERT_TRUE(back.ok()) << back.status();
    EXPECT_EQ(TotalsToJson(*back), TotalsToJson(totals));
    EXPECT_EQ(back->capacity_chip_seconds, totals.capacity_chip_seconds);
  }
  EXPECT_TRUE(without_capacity);
}

TEST(QueryProtoTest, TotalsWithTheWrongCategoryCountAreNamed) {
  v1::Totals totals;
  totals.add_category_chip_seconds(1);
  absl::StatusOr<core::Totals> back = TotalsFromProto(totals);
  ASSERT_FALSE(back.ok());
  EXPECT_THAT(std::string(back.status().message()),
              HasSubstr("category_chip_seconds: want "));
  v1::FleetResponse fleet;
  *fleet.mutable_fleet() = TotalsToProto(core::Totals());
  (*fleet.mutable_segments())["tpu"] = totals;
  absl::StatusOr<core::FleetView> view = FleetViewFromProto(fleet);
  ASSERT_FALSE(view.ok());
  EXPECT_THAT(std::string(view.status().message()),
              HasSubstr("segments['tpu']: totals: category_chip_seconds"));
}

TEST(QueryProtoTest, TimelineEntriesRoundTrip) {
  core::TimelineEntry span;
  span.start_ns = 1'000'000'123;
  span.end_ns = 9'000'000'000;
  span.attempt = "a1";
  span.what = "TRAINING";
  span.first_step = 1;
  span.last_step = 90;
  span.checkpoints = 2;
  span.last_checkpoint = 50;
  span.ongoing = true;
  core::TimelineEntry mark;
  mark.kind = core::TimelineEntry::Kind::kMark;
  mark.start_ns = mark.end_ns = 9'000'000'000;
  mark.what = "INTERRUPTED PREEMPTED";
  for (const core::TimelineEntry& e : {span, mark}) {
    core::TimelineEntry back = TimelineEntryFromProto(TimelineEntryToProto(e));
    EXPECT_EQ(back.kind, e.kind);
    EXPECT_EQ(back.start_ns, e.start_ns);
    EXPECT_EQ(back.end_ns, e.end_ns);
    EXPECT_EQ(back.attempt, e.attempt);
    EXPECT_EQ(back.what, e.what);
    EXPECT_EQ(back.first_step, e.first_step);
    EXPECT_EQ(back.last_step, e.last_step);
    EXPECT_EQ(back.checkpoints, e.checkpoints);
    EXPECT_EQ(back.last_checkpoint, e.last_checkpoint);
    EXPECT_EQ(back.ongoing, e.ongoing);
  }
}

TEST(QueryProtoTest, JobsViewKeepsSinceAndMatched) {
  core::JobsView view;
  view.as_of_ns = 5'000'000'000;
  view.since_ns = 1'000'000'000;
  view.jobs = testing::TwoJobReport().jobs;
  view.matched = 7;
  absl::StatusOr<core::JobsView> back =
      JobsViewFromProto(JobsViewToProto(view));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->as_of_ns, view.as_of_ns);
  EXPECT_EQ(back->since_ns, view.since_ns);
  EXPECT_EQ(back->matched, 7);
  ASSERT_EQ(back->jobs.size(), 2u);
  EXPECT_EQ(JobReportToJson(back->jobs[1]), JobReportToJson(view.jobs[1]));
  view.since_ns.reset();
  EXPECT_FALSE(JobsViewFromProto(JobsViewToProto(view))->since_ns.has_value());
}

TEST(QueryProtoTest, AMalformedJobInAViewIsNamed) {
  v1::JobsResponse response;
  response.add_jobs()->set_job_id("j1");
  absl::StatusOr<core::JobsView> back = JobsViewFromProto(response);
  ASSERT_FALSE(back.ok());
  EXPECT_THAT(std::string(back.status().message()),
              HasSubstr("job 'j1': category_ns"));
}

TEST(QueryProtoTest, SummaryOfAReport) {
  const core::FleetReport report = testing::TwoJobReport();
  v1::SummaryResponse summary = SummaryFromReport(report, 1);
  absl::StatusOr<core::Totals> fleet = TotalsFromProto(summary.fleet());
  ASSERT_TRUE(fleet.ok());
  EXPECT_EQ(TotalsToJson(*fleet), TotalsToJson(report.fleet));
  const core::TotalsRatios ratios = core::ComputeRatios(report.fleet);
  ASSERT_TRUE(ratios.ratios.mpg.has_value());
  EXPECT_EQ(summary.ratios().mpg(), *ratios.ratios.mpg);
  EXPECT_EQ(summary.ratios().has_sg_capacity(), ratios.sg_capacity.has_value());
  int64_t jobs = 0;
  for (const auto& [state, n] : summary.jobs_by_state()) jobs += n;
  EXPECT_EQ(jobs, 2);
  EXPECT_EQ(summary.jobs_by_state().size(), 4u);
  EXPECT_EQ(
      summary.jobs_by_state().at(core::JobStateName(report.jobs[0].state)) +
          summary.jobs_by_state().at(core::JobStateName(report.jobs[1].state)),
      report.jobs[0].state == report.jobs[1].state ? 4 : 2);
  ASSERT_GT(summary.badput_size(), 0);
  for (int i = 1; i < summary.badput_size(); ++i) {
    EXPECT_GE(summary.badput(i - 1).chip_seconds(),
              summary.badput(i).chip_seconds());
    EXPECT_NE(summary.badput(i).category(), "productive");
  }
  ASSERT_EQ(summary.worst_jobs_size(), 1);
  const double lost0 = core::LostChipSeconds(report.jobs[0]);
  const double lost1 = core::LostChipSeconds(report.jobs[1]);
  EXPECT_EQ(summary.worst_jobs(0).job_id(),
            lost0 >= lost1 ? report.jobs[0].job_id : report.jobs[1].job_id);
}

}  // namespace
}  // namespace goodput::report
