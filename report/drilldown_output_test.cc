// Golden tests of the jobs / job / fleet tables and JSON, on views cut out
// of a replayed two-job fleet (a preempted training job and a serving job),
// and the same goldens from the views after a trip through the Query API's
// messages (what goodputctl renders from goodputd's answers).
#include <string>
#include <vector>

#include "core/job_timeline.h"
#include "core/replay_events.h"
#include "core/testing/timeline.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "report/drilldown_json.h"
#include "report/drilldown_table.h"
#include "report/query_proto.h"
#include "report/report_json.h"
#include "report/test_util.h"

namespace goodput::report {
namespace {

using ::goodput::core::testing::ParseEvents;
using ::goodput::core::testing::T;
using ::goodput::core::testing::Timeline;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;
using Json = nlohmann::ordered_json;

constexpr char kFleet[] = R"(
10:00:00 {"job_id":"llm-7","job_submitted":{"chips":256,"workload":"TRAINING","accelerator":"tpu-v5p","framework":"jax","labels":{"team":"search"},"step_flops":1.2e15,"step_bytes":3.0e12}}
10:02:00 {"job_id":"llm-7","allocation":{"chips":256}}
10:02:01 {"job_id":"llm-7","attempt":"a1","started":{}}
10:02:01 {"job_id":"llm-7","activity":{"kind":"INIT"}}
10:02:30 {"job_id":"llm-7","activity":{"kind":"COMPILE"}}
10:03:00 {"job_id":"llm-7","activity":{"kind":"TRAINING"}}
10:03:02 {"job_id":"llm-7","step":{"step":1,"input_wait_seconds":0.1}}
10:10:00 {"job_id":"llm-7","step":{"step":200}}
10:15:00 {"job_id":"llm-7","step":{"step":350}}
10:20:00 {"job_id":"llm-7","step":{"step":500}}
10:25:00 {"job_id":"llm-7","step":{"step":650}}
10:20:00 {"job_id":"llm-7","checkpoint":{"step":500}}
10:30:00 {"job_id":"llm-7","step":{"step":800}}
10:31:00 {"job_id":"llm-7","interruption":{"reason":"PREEMPTED"}}
10:40:00 {"job_id":"llm-7","attempt":"a2","started":{}}
10:40:00 {"job_id":"llm-7","activity":{"kind":"RESTORE","step":500}}
10:42:00 {"job_id":"llm-7","activity":{"kind":"TRAINING"}}
10:50:00 {"job_id":"llm-7","step":{"step":700}}
10:58:00 {"job_id":"llm-7","step":{"step":900}}
10:00:00 {"job_id":"serve-1","job_submitted":{"chips":8,"workload":"SERVING","accelerator":"a100"}}
10:10:00 {"job_id":"serve-1","started":{}}
10:30:00 {"job_id":"serve-1","step":{"step":100,"idle_seconds":300}}
10:50:00 {"job_id":"serve-1","step":{"step":200,"idle_seconds":600}}
10:55:00 {"job_id":"serve-1","job_ended":{"outcome":"SUCCEEDED"}}
)";

class DrilldownOutputTest : public ::testing::Test {
 protected:
  DrilldownOutputTest()
      : events_(ParseEvents(Timeline(kFleet))),
        as_of_(T("2026-11-22T11:00:00Z")),
        report_(core::ReplayEvents(events_, config_, as_of_)) {}

  // The view goodputd builds (server/drilldown.cc), from the replay.
  core::JobView JobView(const std::string& id) {
    core::JobView view;
    view.as_of_ns = as_of_;
    view.job = Find(report_, id);
    for (const auto& [name, minutes] :
         std::vector<std::pair<std::string, int>>{{"5m", 5}, {"1h", 60}}) {
      core::Config config = config_;
      config.since_ns = as_of_ - minutes * 60 * core::kNanosPerSecond;
      view.windows.push_back(
          {name, config.since_ns,
           Find(core::ReplayEvents(events_, config, as_of_), id)});
    }
    view.windows.push_back({"all", std::nullopt, view.job});
    std::vector<v1::Event> mine;
    for (const auto& e : events_) {
      if (e.job_id() == id) mine.push_back(e);
    }
    view.timeline = core::BuildJobTimeline(mine, as_of_);
    return view;
  }

  static core::JobReport Find(const core::FleetReport& r,
                              const std::string& id) {
    for (const auto& j : r.jobs) {
      if (j.job_id == id) return j;
    }
    ADD_FAILURE() << "no job " << id;
    return {};
  }

  static std::string OrDie(const absl::StatusOr<std::string>& s) {
    EXPECT_TRUE(s.ok()) << s.status();
    return s.ok() ? *s : "";
  }

  core::Config config_;
  std::vector<v1::Event> events_;
  int64_t as_of_;
  core::FleetReport report_;
};

TEST_F(DrilldownOutputTest, JobsGolden) {
  core::JobFilter filter;
  core::JobsView view = core::RankJobs(config_, report_, filter);
  testing::ExpectMatchesGolden("jobs_table.txt", FormatJobsTable(view, filter));
  testing::ExpectMatchesGolden("jobs.json", OrDie(WriteJobsJson(view, filter)));
}

TEST_F(DrilldownOutputTest, JobsTableTitleNamesTheOrder) {
  core::JobFilter filter;
  filter.sort = core::JobSort::kMpg;
  core::JobsView view = core::RankJobs(config_, report_, filter);
  EXPECT_THAT(FormatJobsTable(view, filter),
              HasSubstr(", sorted by MPG, lowest first (undefined last)\n"));
  filter.sort = core::JobSort::kJobId;
  EXPECT_THAT(FormatJobsTable(view, filter), HasSubstr(", sorted by job id\n"));
}

TEST_F(DrilldownOutputTest, JobsFilteredAndEmpty) {
  core::JobFilter filter;
  filter.segments = {{"accelerator", "h100"}};
  filter.state = core::JobStateKind::kRunning;
  core::JobsView view = core::RankJobs(config_, report_, filter);
  std::string table = FormatJobsTable(view, filter);
  EXPECT_THAT(table, HasSubstr("filters: accelerator=h100, state=RUNNING"));
  EXPECT_THAT(table, HasSubstr("(no jobs)"));
  Json json = JobsToJson(view, filter);
  EXPECT_EQ(json["filter"]["segments"]["accelerator"], "h100");
  EXPECT_EQ(json["filter"]["state"], "RUNNING");
  EXPECT_TRUE(json["filter"]["limit"].is_null());
  EXPECT_EQ(json["matched"], 0);
}

TEST_F(DrilldownOutputTest, JobGolden) {
  core::JobView view = JobView("llm-7");
  testing::ExpectMatchesGolden("job_table.txt", FormatJobViewTable(view));
  testing::ExpectMatchesGolden("job.json", OrDie(WriteJobViewJson(view)));
}

TEST_F(DrilldownOutputTest, JobJsonIsTheReportsJobPlusViews) {
  core::JobView view = JobView("llm-7");
  Json json = JobViewToJson(view);
  Json job = JobReportToJson(view.job);
  for (const auto& item : job.items()) {
    EXPECT_EQ(json["job"][item.key()], item.value()) << item.key();
  }
  // Badput largest first: the preemption's lost steps lead.
  EXPECT_EQ(json["badput"][0]["category"], "lost");
  for (size_t i = 1; i < json["badput"].size(); ++i) {
    EXPECT_GE(json["badput"][i - 1]["seconds"], json["badput"][i]["seconds"]);
  }
  std::vector<std::string> windows;
  for (const auto& w : json["windows"]) windows.push_back(w["window"]);
  EXPECT_THAT(windows, ElementsAre("5m", "1h", "all"));
  EXPECT_EQ(json["windows"][0]["seconds"]["total"], 300.0);
  EXPECT_EQ(json["timeline"][0]["span"], "QUEUED");
  EXPECT_EQ(json["timeline"][2]["mark"], "STARTED");
  EXPECT_EQ(json["timeline"][2]["attempt"], "a1");
}

TEST_F(DrilldownOutputTest, JobTableLeadsWithTheLargestBadput) {
  std::string table = FormatJobViewTable(JobView("llm-7"));
  size_t where = table.find("WHERE THE TIME WENT");
  ASSERT_NE(where, std::string::npos);
  EXPECT_EQ(table.substr(table.find('\n', where) + 1).find("CATEGORY"), 0u);
  EXPECT_THAT(table, HasSubstr("a1         ! INTERRUPTED PREEMPTED"));
  EXPECT_THAT(table, HasSubstr("(ongoing)"));
}

// A job whose raw events --retention deleted: all time and the note only.
TEST_F(DrilldownOutputTest, JobWithANoteShowsItInsteadOfWindowsAndTimeline) {
  core::JobView view = JobView("llm-7");
  view.windows.erase(view.windows.begin(), view.windows.end() - 1);
  view.timeline.clear();
  view.note =
      "raw events deleted by --retention=30m; timeline and windows "
      "unavailable";
  const std::string table = FormatJobViewTable(view);
  EXPECT_THAT(table, HasSubstr("note: " + view.note + "\n"));
  EXPECT_THAT(table, HasSubstr("WHERE THE TIME WENT"));
  EXPECT_THAT(table, Not(HasSubstr("TIMELINE")));
  EXPECT_THAT(table, Not(HasSubstr("WINDOW ")));
  const Json json = Json::parse(*WriteJobViewJson(view));
  EXPECT_EQ(json["note"], view.note);
  EXPECT_EQ(json["windows"].size(), 1u);
}

TEST_F(DrilldownOutputTest, FleetGolden) {
  absl::StatusOr<core::FleetView> view =
      core::MakeFleetView(report_, "accelerator", 5);
  ASSERT_TRUE(view.ok());
  testing::ExpectMatchesGolden("fleet_table.txt", FormatFleetViewTable(*view));
  testing::ExpectMatchesGolden("fleet.json", OrDie(WriteFleetViewJson(*view)));
}

TEST_F(DrilldownOutputTest, FleetJsonTotalsAreTheReports) {
  absl::StatusOr<core::FleetView> view =
      core::MakeFleetView(report_, "workload", 5);
  ASSERT_TRUE(view.ok());
  Json json = FleetViewToJson(*view);
  Json report = ReportToJson(report_);
  EXPECT_EQ(json["fleet"], report["fleet"]);
  EXPECT_EQ(json["segments"], report["segments"]["workload"]);
  EXPECT_EQ(json["worst_jobs"][0]["job_id"], "llm-7");
}

// Issue 18 part 2: a segment whose TRAINING jobs have >= 3 interruptions
// and a save gets a row of checkpoint advice, also after the wire. The
// sums are docs/semantics.md's example: 88 h running, 4736 chip-hours, 13
// interruptions, 88 saves of 4800 s in all: M 6.77 h, C 54.5 s, advised
// 1630.5 s (27.2 min), actual 3600 s; expected 6.8% and 9.0%.
TEST_F(DrilldownOutputTest, FleetTableShowsSegmentAdvice) {
  absl::StatusOr<core::FleetView> view =
      core::MakeFleetView(report_, "accelerator", 5);
  ASSERT_TRUE(view.ok());
  EXPECT_THAT(FormatFleetViewTable(*view), Not(HasSubstr("CHECKPOINT")));
  core::CheckpointSums& s = view->segments["tpu-v5p"].checkpoint;
  s.run_seconds = 88 * 3600;
  s.run_chip_seconds = 4736.0 * 3600;
  s.interruptions = 13;
  s.checkpoints = 88;
  s.checkpoint_seconds = 4800;
  s.restart_seconds = 3600;
  absl::StatusOr<core::FleetView> wire =
      FleetViewFromProto(FleetViewToProto(*view));
  ASSERT_TRUE(wire.ok()) << wire.status();
  for (const core::FleetView* v : {&*view, &*wire}) {
    const std::string table = FormatFleetViewTable(*v);
    EXPECT_THAT(table, HasSubstr("\nCHECKPOINT ADVICE BY ACCELERATOR (TRAINING "
                                 "jobs; Young/Daly sqrt(2 C M))\n"
                                 "VALUE          M       C   ADVISED    ACTUAL "
                                 "LOSS@ADV LOSS@ACT\n"
                                 "tpu-v5p    6.77h     55s     27.2m     60.0m "
                                 "    6.8%     9.0%\n"))
        << table;
  }
}

// The views goodputctl gets back from goodputd's messages render to the
// same goldens as the views themselves.
TEST_F(DrilldownOutputTest, GoldensThroughTheWire) {
  core::JobFilter filter;
  absl::StatusOr<core::JobsView> jobs = JobsViewFromProto(
      JobsViewToProto(core::RankJobs(config_, report_, filter)));
  ASSERT_TRUE(jobs.ok()) << jobs.status();
  testing::ExpectMatchesGolden("jobs_table.txt",
                               FormatJobsTable(*jobs, filter));
  testing::ExpectMatchesGolden("jobs.json",
                               OrDie(WriteJobsJson(*jobs, filter)));
  absl::StatusOr<core::JobView> job =
      JobViewFromProto(JobViewToProto(JobView("llm-7")));
  ASSERT_TRUE(job.ok()) << job.status();
  testing::ExpectMatchesGolden("job_table.txt", FormatJobViewTable(*job));
  testing::ExpectMatchesGolden("job.json", OrDie(WriteJobViewJson(*job)));
  absl::StatusOr<core::FleetView> fleet =
      core::MakeFleetView(report_, "accelerator", 5);
  ASSERT_TRUE(fleet.ok());
  fleet = FleetViewFromProto(FleetViewToProto(*fleet));
  ASSERT_TRUE(fleet.ok()) << fleet.status();
  testing::ExpectMatchesGolden("fleet_table.txt", FormatFleetViewTable(*fleet));
  testing::ExpectMatchesGolden("fleet.json", OrDie(WriteFleetViewJson(*fleet)));
}

}  // namespace
}  // namespace goodput::report
