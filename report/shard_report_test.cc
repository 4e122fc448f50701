// Merging shard reports gives the report of one server with every event:
// examples/fleet.jsonl split by job, and its heartbeats by host, over three
// "shards" (three replays) and merged equals its replay, byte for byte
// (capacity too: the shards' capacities add up to the fleet's exactly).
#include "report/shard_report.h"

#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/fleet_report.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "report/query_proto.h"
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

// The lines of `lines` each shard of `map` gets: a job's events its job's
// shard, a heartbeat its host's capacity shard, others (HOSTS or FLEET
// exclusions) every shard.
std::vector<std::string> Split(const std::vector<std::string>& lines,
                               const ShardMap& map) {
  std::vector<std::string> out(map.size());
  for (const std::string& line : lines) {
    const nlohmann::json e = nlohmann::json::parse(line);
    const std::string job = e.value("job_id", "");
    const std::vector<size_t> to = e.contains("heartbeat")
                                       ? map.ShardsFor(job, e.value("host", ""))
                                       : map.ShardsFor(job);
    for (size_t s : to) out[s] += line + "\n";
  }
  return out;
}

// Replays of the shards of `lines` as of `t`, over [since, t].
std::vector<core::FleetReport> ReplayShards(
    const std::vector<std::string>& lines, const ShardMap& map, int64_t t,
    std::optional<int64_t> since) {
  std::vector<core::FleetReport> parts;
  for (const std::string& part : Split(lines, map)) {
    parts.push_back(Replay(part, t, since));
    EXPECT_TRUE(parts.back().fleet.capacity_chip_seconds.value_or(0) > 0)
        << "shard " << parts.size() - 1 << " has no host";
  }
  return parts;
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
  const std::vector<core::FleetReport> parts =
      ReplayShards(lines, map, t, since);
  for (size_t s = 0; s < map.size(); ++s) {
    ASSERT_FALSE(parts[s].jobs.empty()) << "shard " << s << " has no job";
    jobs += parts[s].jobs.size();
    answers.push_back({map.address(s), ToShardReport(parts[s])});
    answers.back().report.set_capacity_hosts(absl::StrCat(s, "/3"));
  }
  EXPECT_EQ(jobs, whole.jobs.size());
  absl::StatusOr<core::FleetReport> merged =
      MergeShardReports(answers, t, since);
  ASSERT_TRUE(merged.ok()) << merged.status();
  EXPECT_EQ(*WriteReportJson(*merged), *WriteReportJson(whole));
  ASSERT_TRUE(whole.fleet.capacity_chip_seconds.has_value());
}

std::vector<std::string> Ids(const std::vector<core::JobReport>& jobs) {
  std::vector<std::string> ids;
  for (const core::JobReport& j : jobs) ids.push_back(j.job_id);
  return ids;
}

void ExpectTotalsNear(const core::Totals& got, const core::Totals& want) {
  for (int i = 0; i < core::kNumCategories; ++i) {
    EXPECT_NEAR(got.chip_seconds[i], want.chip_seconds[i],
                1e-9 * (1 + want.total_chip_seconds));
  }
  EXPECT_NEAR(got.total_chip_seconds, want.total_chip_seconds,
              1e-9 * (1 + want.total_chip_seconds));
  EXPECT_NEAR(got.ideal_chip_seconds, want.ideal_chip_seconds,
              1e-9 * (1 + want.ideal_chip_seconds));
  EXPECT_EQ(got.capacity_chip_seconds, want.capacity_chip_seconds);
  EXPECT_EQ(got.jobs, want.jobs);
  EXPECT_EQ(got.jobs_without_chips, want.jobs_without_chips);
}

// The drill-down views of three shards, merged, are those of one server:
// the same jobs in each order and limit, and the same totals.
TEST_P(ShardReportTest, MergedViewsEqualOneServers) {
  const std::vector<std::string> lines = FleetLines();
  std::string all;
  for (const std::string& line : lines) all += line + "\n";
  const int64_t t =
      Replay(all, std::nullopt, std::nullopt).as_of_ns - 600'000'000'000;
  const std::optional<int64_t> since =
      GetParam() ? std::optional<int64_t>(t - 3600LL * 1'000'000'000)
                 : std::nullopt;
  const core::FleetReport whole = Replay(all, t, since);
  const ShardMap map({"a:1", "b:2", "c:3"});
  const std::vector<core::FleetReport> parts =
      ReplayShards(lines, map, t, since);
  core::Config config;
  for (core::JobSort sort : {core::JobSort::kLost, core::JobSort::kJobId,
                             core::JobSort::kChips, core::JobSort::kMpg}) {
    for (size_t limit : {0, 1, 7}) {
      core::JobFilter filter;
      filter.sort = sort;
      filter.limit = limit;
      std::vector<core::JobsView> views;
      for (const auto& part : parts) {
        views.push_back(core::RankJobs(config, part, filter));
      }
      const core::JobsView want = core::RankJobs(config, whole, filter);
      const core::JobsView got = MergeJobsViews(views, filter);
      EXPECT_EQ(Ids(got.jobs), Ids(want.jobs));
      EXPECT_EQ(got.matched, want.matched);
    }
  }
  std::vector<core::FleetView> fleets;
  for (const auto& part : parts) {
    fleets.push_back(*core::MakeFleetView(part, "accelerator", 5));
  }
  const core::FleetView want = *core::MakeFleetView(whole, "accelerator", 5);
  const core::FleetView got = MergeFleetViews(fleets, 5, CapacityMerge::kSum);
  ExpectTotalsNear(got.fleet, want.fleet);
  ASSERT_EQ(got.segments.size(), want.segments.size());
  for (const auto& [value, totals] : want.segments) {
    ExpectTotalsNear(got.segments.at(value), totals);
  }
  EXPECT_EQ(Ids(got.worst_jobs), Ids(want.worst_jobs));
}

TEST(MergeSummariesTest, MergedSummariesEqualOneServers) {
  const std::vector<std::string> lines = FleetLines();
  std::string all;
  for (const std::string& line : lines) all += line + "\n";
  const int64_t t =
      Replay(all, std::nullopt, std::nullopt).as_of_ns - 600'000'000'000;
  const core::FleetReport whole = Replay(all, t, std::nullopt);
  const ShardMap map({"a:1", "b:2", "c:3"});
  std::vector<v1::SummaryResponse> parts;
  for (const core::FleetReport& part :
       ReplayShards(lines, map, t, std::nullopt)) {
    const size_t s = parts.size();
    parts.push_back(SummaryFromReport(part, 3));
    parts.back().mutable_ingest()->set_accepted_events(10);
    parts.back().mutable_ingest()->set_agents(static_cast<int64_t>(s + 1));
  }
  const v1::SummaryResponse want = SummaryFromReport(whole, 3);
  absl::StatusOr<v1::SummaryResponse> got =
      MergeSummaries(parts, 3, CapacityMerge::kSum);
  ASSERT_TRUE(got.ok()) << got.status();
  ExpectTotalsNear(*TotalsFromProto(got->fleet()),
                   *TotalsFromProto(want.fleet()));
  EXPECT_NEAR(got->ratios().mpg(), want.ratios().mpg(), 1e-12);
  using States = std::map<std::string, int64_t>;
  EXPECT_EQ(States(got->jobs_by_state().begin(), got->jobs_by_state().end()),
            States(want.jobs_by_state().begin(), want.jobs_by_state().end()));
  ASSERT_EQ(got->badput_size(), want.badput_size());
  for (int i = 0; i < want.badput_size(); ++i) {
    EXPECT_EQ(got->badput(i).category(), want.badput(i).category());
  }
  ASSERT_EQ(got->worst_jobs_size(), 3);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(got->worst_jobs(i).job_id(), want.worst_jobs(i).job_id());
  }
  EXPECT_EQ(got->ingest().accepted_events(), 30);
  EXPECT_EQ(got->ingest().agents(), 3);
}

INSTANTIATE_TEST_SUITE_P(AllTimeAndWindow, ShardReportTest, ::testing::Bool());

// Capacity adds up over shards that each keep their own hosts' heartbeats
// and is taken once from cluster instances, which each keep every one.
TEST(CapacityMergeTest, SumsOwnHostsTakesEveryHostOnce) {
  const std::vector<std::string> list = {"a:1", "b:2", "c:3"};
  EXPECT_EQ(*CapacityMergeOf(list, {"0/3", "1/3", "2/3"}), CapacityMerge::kSum);
  EXPECT_EQ(*CapacityMergeOf(list, {"all", "all", "all"}),
            CapacityMerge::kOnce);
  EXPECT_EQ(*CapacityMergeOf({"a:1"}, {""}), CapacityMerge::kSum);
  EXPECT_EQ(*CapacityMergeOf({"a:1"}, {"all"}), CapacityMerge::kSum);
}

// A shard without --shard (or older: it may hold every host's heartbeats),
// or one whose --shard is not its entry in the list, fails the merge by
// name: a sum would count hosts twice or miss some.
TEST(CapacityMergeTest, AShardThatDoesNotFitIsNamed) {
  const std::vector<std::string> list = {"a:1", "b:2", "c:3"};
  EXPECT_EQ(CapacityMergeOf(list, {"0/3", "", "2/3"}).status().message(),
            "b:2 (entry 2 of the 3-shard list) keeps the heartbeats of hosts "
            "\"\", not of shard 1/3: start each shard with --shard=I/N, I its "
            "entry (from 0) and N the list's length (docs/scaling.md)");
  EXPECT_EQ(CapacityMergeOf(list, {"0/3", "2/3", "1/3"}).status().code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(CapacityMergeOf(list, {"0/2", "1/2", "2/3"}).status().code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(CapacityMergeOf(list, {"all", "1/3", "2/3"}).status().code(),
            absl::StatusCode::kFailedPrecondition);
  std::vector<ShardAnswer> answers(3);
  for (size_t s = 0; s < 3; ++s) answers[s].address = list[s];
  answers[0].report.set_capacity_hosts("0/3");
  EXPECT_EQ(MergeShardReports(answers, 0, std::nullopt).status().code(),
            absl::StatusCode::kFailedPrecondition);
}

// Fleet views and summaries of cluster instances (each every host's
// capacity) take it once; of shards (each its own hosts') add it up.
TEST(CapacityMergeTest, ViewsAndSummariesMergeCapacityAsTold) {
  core::FleetView view;
  view.fleet.capacity_chip_seconds = 100;
  view.segments["tpu"].capacity_chip_seconds = 100;
  EXPECT_EQ(MergeFleetViews({view, view}, 0, CapacityMerge::kOnce)
                .fleet.capacity_chip_seconds,
            100);
  const core::FleetView sum =
      MergeFleetViews({view, view, core::FleetView()}, 0, CapacityMerge::kSum);
  EXPECT_EQ(sum.fleet.capacity_chip_seconds, 200);
  EXPECT_EQ(sum.segments.at("tpu").capacity_chip_seconds, 200);
  v1::SummaryResponse part;
  *part.mutable_fleet() = TotalsToProto(view.fleet);
  EXPECT_EQ(MergeSummaries({part, part}, 0, CapacityMerge::kSum)
                ->fleet()
                .capacity_chip_seconds(),
            200);
  EXPECT_EQ(MergeSummaries({part, part}, 0, CapacityMerge::kOnce)
                ->fleet()
                .capacity_chip_seconds(),
            100);
}

// Jobs of 8 chips, each one productive minute, by (id, accelerator).
std::vector<core::JobReport> ProductiveMinutes(
    const std::vector<std::pair<std::string, std::string>>& ids) {
  std::vector<core::JobReport> jobs(ids.size());
  for (size_t i = 0; i < ids.size(); ++i) {
    jobs[i].job_id = ids[i].first;
    jobs[i].accelerator = ids[i].second;
    jobs[i].chips = 8;
    jobs[i].total_ns = 60 * core::kNanosPerSecond;
    jobs[i].nanos[core::Index(core::Category::kProductive)] = jobs[i].total_ns;
  }
  return jobs;
}

// Query.Report and Query.Summary build the live report without segment
// totals: the shard report (jobs and every accelerator's capacity, 0 for
// one without heartbeats) and the fleet totals are the same.
TEST(ShardReportTest, AReportWithoutSegmentTotalsShardsTheSame) {
  // b: no heartbeats for gpu-b.
  const std::vector<core::JobReport> jobs =
      ProductiveMinutes({{"a", "tpu-a"}, {"b", "gpu-b"}});
  const std::map<std::string, double> capacity = {{"tpu-a", 960.0}};
  const core::FleetReport all =
      core::BuildFleetReport(core::Config(), 0, jobs, capacity);
  const core::FleetReport lean = core::BuildFleetReport(
      core::Config(), 0, jobs, capacity, core::FleetSegments::kCapacityOnly);
  EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(
      ToShardReport(lean), ToShardReport(all)));
  EXPECT_EQ(ToShardReport(lean).capacity_chip_seconds().count("gpu-b"), 1u);
  EXPECT_EQ(lean.fleet.total_chip_seconds, all.fleet.total_chip_seconds);
  EXPECT_EQ(lean.fleet.capacity_chip_seconds, all.fleet.capacity_chip_seconds);
  EXPECT_EQ(lean.segments.size(), 1u);  // the accelerator's capacity only
}

// Query.Report builds it without fleet totals either: the shard report
// (every accelerator's capacity, "unknown" for a job without one) is the
// same, the totals are left out.
TEST(ShardReportTest, AReportWithoutTotalsShardsTheSame) {
  // b: no heartbeats for gpu-b; c: no accelerator.
  const std::vector<core::JobReport> jobs =
      ProductiveMinutes({{"a", "tpu-a"}, {"b", "gpu-b"}, {"c", ""}});
  const std::map<std::string, double> capacity = {{"tpu-a", 960.0}};
  const core::FleetReport all =
      core::BuildFleetReport(core::Config(), 0, jobs, capacity);
  const core::FleetReport lean = core::BuildFleetReport(
      core::Config(), 0, jobs, capacity, core::FleetSegments::kJobsOnly);
  EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(
      ToShardReport(lean), ToShardReport(all)));
  EXPECT_EQ(ToShardReport(lean).capacity_chip_seconds().size(), 3);
  EXPECT_EQ(ToShardReport(lean).capacity_chip_seconds().at("unknown"), 0.0);
  EXPECT_EQ(lean.fleet.jobs, 0);
  EXPECT_EQ(lean.fleet.total_chip_seconds, 0.0);
  EXPECT_EQ(lean.fleet.capacity_chip_seconds, all.fleet.capacity_chip_seconds);
  EXPECT_EQ(lean.segments.size(), 1u);
  // Without capacity, no segment at all (as kCapacityOnly).
  EXPECT_TRUE(core::BuildFleetReport(core::Config(), 0, jobs, {},
                                     core::FleetSegments::kJobsOnly)
                  .segments.empty());
}

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
            "h1:1: job 'j1': category_ns: want 14 values, got 0");
}

}  // namespace
}  // namespace goodput::report
