#include "report/report_table.h"

#include <cmath>
#include <limits>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "report/report_json.h"
#include "report/table_cells.h"
#include "report/test_util.h"

namespace goodput::report {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(ReportTableTest, TwoJobsGolden) {
  testing::ExpectMatchesGolden("two_jobs_table.txt",
                               FormatReportTable(testing::TwoJobReport()));
}

TEST(ReportTableTest, NullRatiosPrintAsDash) {
  std::string table = FormatReportTable(testing::OneEmptyJobReport());
  EXPECT_THAT(table, HasSubstr("pending"));
  EXPECT_THAT(table, HasSubstr("goodput -  SG -  RG -  PG -  MPG -"));
  EXPECT_THAT(table, Not(HasSubstr("nan")));
  EXPECT_THAT(table, Not(HasSubstr("CAPACITY")));
}

// A non-finite ratio (an absurd `flops` before the value bounds) printed
// "inf" in the table and null in JSON; both now say "no value".
TEST(ReportTableTest, NonFiniteRatiosPrintAsDashAsJsonPrintsNull) {
  core::FleetReport report = testing::TwoJobReport();
  for (core::JobReport& job : report.jobs) {
    job.ideal_seconds = std::numeric_limits<double>::infinity();
  }
  report.fleet.ideal_chip_seconds = std::numeric_limits<double>::infinity();
  const std::string table = FormatReportTable(report);
  EXPECT_THAT(table, Not(HasSubstr("inf")));
  const std::string json = JobReportToJson(report.jobs[0]).dump();
  EXPECT_THAT(json, HasSubstr("\"pg\":null"));
  EXPECT_EQ(FormatRatio(std::nan("")), "-");
  EXPECT_EQ(FormatPercent(-std::numeric_limits<double>::infinity()), "-");
  EXPECT_EQ(FormatRatio(0.5), "0.500");
}

TEST(ReportTableTest, TopBadputIsTheLargestNonProductiveCategory) {
  std::string table = FormatReportTable(testing::TwoJobReport());
  // llm-7: lost 660 s of 7231.25 s; serve-1: idle 600 s of 3690 s.
  EXPECT_THAT(table, HasSubstr("lost 9.1%"));
  EXPECT_THAT(table, HasSubstr("idle 16.3%"));
}

TEST(ReportTableTest, EmptyFleetSaysNoJobs) {
  core::FleetReport report;
  std::string table = FormatReportTable(report);
  EXPECT_THAT(table, HasSubstr("(no jobs)"));
  EXPECT_THAT(table, HasSubstr("FLEET  0 jobs"));
}

}  // namespace
}  // namespace goodput::report
