// Merging shard reports gives the report of one server with every event:
// examples/fleet.jsonl split by job over three "shards" (three replays)
// and merged equals its replay, byte for byte.
#include "report/shard_report.h"

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "report/replay.h"
#include "report/report_json.h"
#include "util/shard_map.h"

namespace goodput::report {
namespace {

// examples/fleet.jsonl four times, its jobs renamed c0-..c3- (25 jobs
// over the three shards), its heartbeats once.
std::vector<std::string> FleetLines() {
  std::vector<std::string> lines;
  for (int copy = 0; copy < 4; ++copy) {
    std::ifstream in(GOODPUT_EXAMPLES "/fleet.jsonl");
    const std::string renamed = absl::StrCat("\"job_id\":\"c", copy, "-");
    for (std::string line; std::getline(in, line);) {
      const size_t at = line.find("\"job_id\":\"");
      if (at == std::string::npos) {
        if (copy == 0) lines.push_back(line);
        continue;
      }
      lines.push_back(line.replace(at, 10, renamed));
    }
  }
  return lines;
}

core::FleetReport Replay(const std::string& text,
                         std::optional<int64_t> as_of_ns,
                         std::optional<int64_t> since_ns) {
  ReplayOptions options;
  options.as_of_ns = as_of_ns;
  if (since_ns) options.config.since_ns = *since_ns;
  Replayer replayer(options);
  std::istringstream in(text);
  EXPECT_TRUE(replayer.AddInput(in, "fleet").ok());
  absl::StatusOr<ReplayResult> result = replayer.Finish();
  EXPECT_TRUE(result.ok()) << result.status();
  EXPECT_TRUE(result->errors.empty());
  return result->report;
}

// The lines of `lines` each shard of `map` gets (heartbeats to all).
std::vector<std::string> Split(const std::vector<std::string>& lines,
                               const ShardMap& map) {
  std::vector<std::string> out(map.size());
  for (const std::string& line : lines) {
    const std::string job = nlohmann::json::parse(line).value("job_id", "");
    for (size_t s = 0; s < map.size(); ++s) {
      if (job.empty() || map.ShardOf(job) == s) out[s] += line + "\n";
    }
  }
  return out;
}

class ShardReportTest : public ::testing::TestWithParam<bool> {};

TEST_P(ShardReportTest, MergedShardsEqualOneServer) {
  const std::vector<std::string> lines = FleetLines();
  ASSERT_GT(lines.size(), 100u);
  std::string all;
  for (const std::string& line : lines) all += line + "\n";
  // As of before the last event: mid-run, some jobs still running.
  const int64_t t =
      Replay(all, std::nullopt, std::nullopt).as_of_ns - 600'000'000'000;
  const std::optional<int64_t> since =
      GetParam() ? std::optional<int64_t>(t - 3600LL * 1'000'000'000)
                 : std::nullopt;
  const core::FleetReport whole = Replay(all, t, since);
  const ShardMap map({"a:1", "b:2", "c:3"});
  std::vector<ShardAnswer> answers;
  size_t jobs = 0;
  for (size_t s = 0; s < map.size(); ++s) {
    const core::FleetReport part = Replay(Split(lines, map)[s], t, since);
    ASSERT_FALSE(part.jobs.empty()) << "shard " << s << " has no job";
    jobs += part.jobs.size();
    answers.push_back({map.address(s), ToShardReport(part)});
  }
  EXPECT_EQ(jobs, whole.jobs.size());
  absl::StatusOr<core::FleetReport> merged =
      MergeShardReports(answers, t, since);
  ASSERT_TRUE(merged.ok()) << merged.status();
  EXPECT_EQ(*WriteReportJson(*merged), *WriteReportJson(whole));
  ASSERT_TRUE(whole.fleet.capacity_chip_seconds.has_value());
}

INSTANTIATE_TEST_SUITE_P(AllTimeAndWindow, ShardReportTest, ::testing::Bool());

TEST(MergeShardReportsTest, AJobOnTwoShardsIsAnError) {
  v1::ShardReport a;
  v1::JobReport* job = a.add_jobs();
  job->set_job_id("j1");
  job->set_state(v1::JOB_STATE_RUNNING);
  for (int c = 0; c < core::kNumCategories; ++c) job->add_category_ns(0);
  absl::StatusOr<core::FleetReport> merged =
      MergeShardReports({{"h1:1", a}, {"h2:2", a}}, 0, std::nullopt);
  ASSERT_FALSE(merged.ok());
  EXPECT_EQ(merged.status().message(),
            "job 'j1' is on two shards, h1:1 and h2:2: do all agents have the "
            "same --server list?");
}

TEST(MergeShardReportsTest, AMalformedJobIsNamed) {
  v1::ShardReport a;
  a.add_jobs()->set_job_id("j1");
  a.mutable_jobs(0)->set_state(v1::JOB_STATE_RUNNING);
  absl::StatusOr<core::FleetReport> merged =
      MergeShardReports({{"h1:1", a}}, 0, std::nullopt);
  ASSERT_FALSE(merged.ok());
  EXPECT_EQ(merged.status().message(),
            "h1:1: job 'j1': category_ns: want 13 values, got 0");
}

}  // namespace
}  // namespace goodput::report
