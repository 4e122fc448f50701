// The drill-down commands through the real binaries: goodputctl send ->
// goodputd -> goodputctl jobs / job ID / fleet, whose numbers must equal
// goodputctl replay --json of the same file (examples/fleet.jsonl).
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/subprocess.h"

namespace goodput {
namespace {

using ::goodput::testing::RunCapture;
using ::goodput::testing::Subprocess;
using ::goodput::testing::WaitForPort;
using Json = nlohmann::json;

constexpr char kAsOf[] = "--as_of=2026-11-22T16:00:00Z";
constexpr char kSince1h[] = "--since=2026-11-22T15:00:00Z";

class DrilldownCliTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    std::string tmpl = ::testing::TempDir() + "drilldown_XXXXXX";
    dir_ = new std::string(mkdtemp(tmpl.data()));
    server_ = new Subprocess(
        {GOODPUTD_PATH, "--data_dir=" + *dir_ + "/data",
         "--grpc_address=127.0.0.1:0", "--metrics_address=127.0.0.1:0"},
        *dir_ + "/server.log");
    port_ = WaitForPort(*dir_ + "/server.log", 30);
    ASSERT_GT(port_, 0) << "goodputd did not start; see " << *dir_;
    std::string out;
    ASSERT_EQ(RunCapture({GOODPUTCTL_PATH, Server(), "send", File()},
                         *dir_ + "/send.log", &out),
              0)
        << out;
  }

  static void TearDownTestSuite() {
    delete server_;
    std::filesystem::remove_all(*dir_);
    delete dir_;
  }

  static std::string Server() {
    return "--server=127.0.0.1:" + std::to_string(port_);
  }
  static std::string File() {
    return std::string(GOODPUT_EXAMPLES) + "/fleet.jsonl";
  }

  // goodputctl ARGS...; returns stdout and expects exit code `want`; its
  // stderr goes to `*err` if given.
  std::string Ctl(std::vector<std::string> args, int want = 0,
                  std::string* err = nullptr) {
    args.insert(args.begin(), GOODPUTCTL_PATH);
    const std::string log = *dir_ + "/ctl.log";
    std::filesystem::remove(log);
    std::string out;
    EXPECT_EQ(RunCapture(args, log, &out), want) << args[1] << " " << args[2];
    if (err != nullptr) {
      std::ifstream in(log);
      std::stringstream text;
      text << in.rdbuf();
      *err = text.str();
    }
    return out;
  }

  Json CtlJson(std::vector<std::string> args) {
    args.push_back("--json");
    return Json::parse(Ctl(args));
  }

  // replay --json of the file as of kAsOf, keyed by job_id.
  std::map<std::string, Json> ReplayJobs(const std::string& since = "") {
    std::vector<std::string> args = {"replay", File(), kAsOf};
    if (!since.empty()) args.push_back(since);
    const Json report = CtlJson(args);
    std::map<std::string, Json> jobs;
    for (Json j : report["jobs"]) {
      j.erase("checkpoint_advice");  // a report's key (segment-aware)
      jobs[j["job_id"]] = j;
    }
    return jobs;
  }

  static std::string* dir_;
  static Subprocess* server_;
  static int port_;
};

std::string* DrilldownCliTest::dir_ = nullptr;
Subprocess* DrilldownCliTest::server_ = nullptr;
int DrilldownCliTest::port_ = 0;

// A job object without the drill-down's own key.
Json Report(Json job) {
  job.erase("lost_chip_hours");
  return job;
}

double LostChipHours(const Json& job) {
  if (job["chips"].is_null()) return 0;
  const Json& s = job["seconds"];
  return job["chips"].get<double>() *
         (s["total"].get<double>() - s["productive"].get<double>()) / 3600;
}

TEST_F(DrilldownCliTest, JobsEqualReplayRankedByLostChipHours) {
  std::map<std::string, Json> replay = ReplayJobs();
  Json jobs = CtlJson({Server(), "jobs", "--limit=0", kAsOf});
  ASSERT_EQ(jobs["jobs"].size(), replay.size());
  EXPECT_EQ(jobs["matched"], replay.size());
  double previous = 1e300;
  for (const Json& job : jobs["jobs"]) {
    EXPECT_EQ(Report(job), replay[job["job_id"]]) << job["job_id"];
    EXPECT_DOUBLE_EQ(job["lost_chip_hours"].get<double>(), LostChipHours(job));
    EXPECT_LE(job["lost_chip_hours"].get<double>(), previous);
    previous = job["lost_chip_hours"];
  }
  Json h100 = CtlJson({Server(), "jobs", "--accelerator=h100", kAsOf});
  for (const Json& job : h100["jobs"]) EXPECT_EQ(job["accelerator"], "h100");
  EXPECT_GT(h100["jobs"].size(), 0u);
  EXPECT_LT(h100["jobs"].size(), replay.size());
  Json one = CtlJson({Server(), "jobs", "--limit=1", kAsOf});
  ASSERT_EQ(one["jobs"].size(), 1u);
  EXPECT_EQ(one["jobs"][0], jobs["jobs"][0]);
}

TEST_F(DrilldownCliTest, JobEqualsReplayAllTimeAndSince) {
  std::map<std::string, Json> replay = ReplayJobs();
  std::map<std::string, Json> last_hour = ReplayJobs(kSince1h);
  for (const auto& [id, expected] : replay) {
    Json job = CtlJson({Server(), "job", id, kAsOf});
    EXPECT_EQ(Report(job["job"]), expected) << id;
    ASSERT_EQ(job["windows"].size(), 4u) << id;
    const Json& hour = job["windows"][1];
    EXPECT_EQ(hour["window"], "1h");
    const Json want = last_hour.count(id) ? last_hour[id] : Json();
    if (want.is_null()) {
      EXPECT_EQ(hour["seconds"]["total"], 0.0) << id;
      continue;
    }
    for (const char* key : {"seconds", "goodput", "sg", "rg", "pg", "mpg"}) {
      EXPECT_EQ(hour[key], want[key]) << id << " " << key;
    }
    EXPECT_EQ(job["windows"][3]["seconds"], expected["seconds"]) << id;
    EXPECT_GT(job["timeline"].size(), 0u) << id;
  }
}

TEST_F(DrilldownCliTest, FleetEqualsReplay) {
  Json replay = CtlJson({"replay", File(), kAsOf});
  for (const char* by : {"accelerator", "workload", "framework", "size"}) {
    Json fleet = CtlJson({Server(), "fleet", std::string("--by=") + by, kAsOf});
    EXPECT_EQ(fleet["fleet"], replay["fleet"]) << by;
    EXPECT_EQ(fleet["segments"], replay["segments"][by]) << by;
  }
}

TEST_F(DrilldownCliTest, TablesLeadFromFleetToTheJobAndCategory) {
  Json jobs = CtlJson({Server(), "jobs", kAsOf});
  const std::string worst = jobs["jobs"][0]["job_id"];
  std::string fleet = Ctl({Server(), "fleet", kAsOf});
  EXPECT_NE(fleet.find("next: goodputctl job " + worst), std::string::npos)
      << fleet;
  std::string job = Ctl({Server(), "job", worst, kAsOf});
  Json detail = CtlJson({Server(), "job", worst, kAsOf});
  const std::string top = detail["badput"][0]["category"];
  const size_t where = job.find("WHERE THE TIME WENT");
  ASSERT_NE(where, std::string::npos) << job;
  // The first category row after the header is the largest badput.
  const size_t header = job.find("CATEGORY", where);
  const size_t row = job.find('\n', header) + 1;
  EXPECT_EQ(job.substr(row, top.size()), top) << job;
  EXPECT_NE(job.find("TIMELINE"), std::string::npos);
}

TEST_F(DrilldownCliTest, ErrorsNameTheJobAndTheDimension) {
  std::string err;
  Ctl({Server(), "job", "no-such-job"}, 2, &err);
  EXPECT_NE(err.find("job 'no-such-job' not found"), std::string::npos) << err;
  Ctl({Server(), "fleet", "--by=colour"}, 2, &err);
  EXPECT_NE(err.find("unknown segment dimension 'colour'"), std::string::npos)
      << err;
  Ctl({Server(), "jobs", "--limit=many"}, 2, &err);
  EXPECT_NE(err.find("--limit"), std::string::npos) << err;
  std::string help = Ctl({"job", "--help"});
  EXPECT_NE(help.find("Usage: goodputctl --server=HOST:PORT job ID"),
            std::string::npos);
}

}  // namespace
}  // namespace goodput
