#include "server/ended_job_totals.h"

#include <vector>

#include "gtest/gtest.h"

namespace goodput::server {
namespace {

core::JobReport Job(const std::string& id, int64_t chips,
                    const std::string& team, int64_t productive_ns) {
  core::JobReport r;
  r.job_id = id;
  r.chips = chips;
  r.accelerator = "tpu-v5p";
  r.labels = {{"team", team}};
  r.state = core::JobStateKind::kEnded;
  r.nanos[static_cast<int>(core::Category::kProductive)] = productive_ns;
  r.total_ns = productive_ns;
  r.last_step = 3;
  return r;
}

std::vector<EndedJobTotals::Group> Groups(const EndedJobTotals& t) {
  std::vector<EndedJobTotals::Group> out;
  t.ForEach([&](const EndedJobTotals::Group& g) { out.push_back(g); });
  return out;
}

TEST(EndedJobTotalsTest, OneGroupPerLabelSetNotPerJob) {
  EndedJobTotals totals;
  for (int i = 0; i < 100; ++i) {
    totals.Add(Job("a" + std::to_string(i), 8, "search", 10), 1000 + i);
  }
  totals.Add(Job("b", 8, "ads", 5), 50);
  totals.Add(Job("c", 4, "ads", 7), 60);
  EXPECT_EQ(totals.jobs(), 102);
  ASSERT_EQ(totals.groups(), 3u);
  int64_t productive = 0;
  for (const EndedJobTotals::Group& g : Groups(totals)) {
    productive += g.totals.nanos[static_cast<int>(core::Category::kProductive)];
    EXPECT_EQ(g.totals.state, core::JobStateKind::kEnded);
    if (g.totals.labels.at("team") == "search") {
      EXPECT_EQ(g.jobs, 100);
      EXPECT_EQ(g.totals.chips, 8);
      EXPECT_EQ(g.totals.total_ns, 1000);
      EXPECT_EQ(g.totals.last_step, 300);
      EXPECT_EQ(g.newest_ended_ns, 1099);
    }
  }
  EXPECT_EQ(productive, 1000 + 5 + 7);
}

TEST(EndedJobTotalsTest, ReviseReplacesAJobsReportInItsGroup) {
  EndedJobTotals totals;
  totals.Add(Job("a", 8, "search", 10), 100);
  totals.Add(Job("b", 8, "search", 20), 100);
  totals.Revise(Job("a", 8, "search", 10), Job("a", 8, "search", 15), 100);
  std::vector<EndedJobTotals::Group> groups = Groups(totals);
  ASSERT_EQ(groups.size(), 1u);
  EXPECT_EQ(groups[0].jobs, 2);
  EXPECT_EQ(
      groups[0].totals.nanos[static_cast<int>(core::Category::kProductive)],
      35);
  EXPECT_EQ(totals.jobs(), 2);
}

// Rule 14: elastic jobs group apart from fixed-size ones of the same label
// set and chips, and their groups sum allocation-weighted chip-seconds.
TEST(EndedJobTotalsTest, ElasticJobsGroupApartAndSumChipSeconds) {
  EndedJobTotals totals;
  core::JobReport e1 = Job("e1", 8, "search", 10);
  e1.min_chips = 4;
  e1.chip_seconds[static_cast<int>(core::Category::kProductive)] = 40.0;
  core::JobReport e2 = e1;
  e2.job_id = "e2";
  totals.Add(e1, 100);
  totals.Add(e2, 100);
  totals.Add(Job("f", 8, "search", 10), 100);
  ASSERT_EQ(totals.groups(), 2u);
  for (const EndedJobTotals::Group& g : Groups(totals)) {
    const double cs =
        g.totals.chip_seconds[static_cast<int>(core::Category::kProductive)];
    if (g.totals.min_chips) {
      EXPECT_EQ(g.jobs, 2);
      EXPECT_EQ(*g.totals.min_chips, 4);
      EXPECT_EQ(cs, 80.0);
    } else {
      EXPECT_EQ(g.jobs, 1);
      EXPECT_EQ(cs, 0.0);
    }
  }
}

TEST(EndedJobTotalsTest, LabelValuesCannotAliasAcrossFields) {
  EndedJobTotals totals;
  core::JobReport a = Job("a", 8, "x", 1), b = Job("b", 8, "x", 1);
  a.labels = {{"k", "v:1"}};
  b.labels = {{"k:v", "1"}};
  totals.Add(a, 1);
  totals.Add(b, 1);
  EXPECT_EQ(totals.groups(), 2u);
}

}  // namespace
}  // namespace goodput::server
