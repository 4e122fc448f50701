// AppendJobReportField writes the bytes protobuf's deterministic
// serialization of core::JobReportToProto gives, for the jobs of a real
// replay and for hand-made jobs with every field at its edges.
#include "report/job_report_wire.h"

#include <cstdint>
#include <fstream>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "core/job_report_proto.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "gtest/gtest.h"
#include "proto/service.pb.h"
#include "report/replay.h"

namespace goodput::report {
namespace {

std::string Deterministic(const google::protobuf::Message& m) {
  std::string out;
  {
    google::protobuf::io::StringOutputStream stream(&out);
    google::protobuf::io::CodedOutputStream coded(&stream);
    coded.SetSerializationDeterministic(true);
    EXPECT_TRUE(m.SerializeToCodedStream(&coded));
  }
  return out;
}

// The jobs as v1::ShardReport's, the way protobuf writes them.
std::string Want(const std::vector<core::JobReport>& jobs) {
  v1::ShardReport shard;
  for (const core::JobReport& job : jobs) {
    core::JobReportToProto(job, shard.add_jobs());
  }
  return Deterministic(shard);
}

// The same by AppendJobReportField, into a buffer that has to grow.
std::string Got(const std::vector<core::JobReport>& jobs) {
  std::string out(3, 'x');
  size_t used = 0;
  for (const core::JobReport& job : jobs) {
    AppendJobReportField(v1::ShardReport::kJobsFieldNumber, job, &out, &used);
  }
  out.resize(used);
  return out;
}

core::JobReport Full() {
  core::JobReport job;
  job.job_id = "job-full";
  job.chips = 256;
  job.accelerator = "tpu-v5p";
  job.workload = v1::JobSubmitted::SERVING;
  job.framework = "jax";
  job.labels = {{"team", "search"}, {"", ""}, {"zone", std::string(300, 'z')}};
  job.state = core::JobStateKind::kEnded;
  job.total_ns = std::numeric_limits<int64_t>::max();
  for (int c = 0; c < core::kNumCategories; ++c) job.nanos[c] = c * 1000 - 1;
  job.custom_nanos = {{"eval", 5}, {"", 0}, {"warmup", -7}};
  job.at_risk_ns = 3;
  job.ideal_seconds = 12.5;
  job.costed_productive_ns = 99;
  job.last_step = 0;  // set to 0 is written
  job.last_checkpoint = -1;
  job.lost_steps = 2;
  job.interruptions = 1;
  job.duplicates = std::numeric_limits<int64_t>::min();
  job.notices = 4;
  job.checkpoints = 6;
  job.min_chips = 0;
  for (int c = 0; c < core::kNumCategories; ++c) job.chip_seconds[c] = c / 3.0;
  job.costed_productive_chip_seconds = -0.0;  // protobuf writes -0.0
  job.usd_per_chip_hour = 0.0;                // set to 0 is written
  job.watts_per_chip = 350;
  job.step_time = core::StepTimeSummary{10, 1.5, 0.25, 3, 1.75, {}};
  return job;
}

TEST(JobReportWireTest, AnEmptyJobIsProtobufs) {
  const std::vector<core::JobReport> jobs(1);
  EXPECT_EQ(Got(jobs), Want(jobs));
}

TEST(JobReportWireTest, EveryFieldAtItsEdgesIsProtobufs) {
  std::vector<core::JobReport> jobs = {Full(), Full()};
  jobs[1].ideal_seconds = -0.0;
  jobs[1].step_time = core::StepTimeSummary{};  // present, all zero
  jobs[1].labels = {{"one", "label"}};
  jobs[1].workload = static_cast<v1::JobSubmitted::Workload>(-2);
  jobs[1].job_id = std::string(200, 'j');  // a 2-byte length
  EXPECT_EQ(Got(jobs), Want(jobs));
  // Each field alone, the others at their defaults.
  for (int i = 0; i < 3; ++i) {
    core::JobReport one;
    one.nanos[i] = 1;
    one.last_step = i == 0 ? std::optional<int64_t>(5) : std::nullopt;
    one.min_chips = i == 1 ? std::optional<int64_t>(8) : std::nullopt;
    EXPECT_EQ(Got({one}), Want({one})) << i;
  }
}

TEST(JobReportWireTest, TheJobsOfAReplayAreProtobufs) {
  ReplayOptions options;
  Replayer replayer(options);
  std::ifstream in(GOODPUT_EXAMPLES "/fleet.jsonl");
  ASSERT_TRUE(replayer.AddInput(in, "fleet").ok());
  absl::StatusOr<ReplayResult> result = replayer.Finish();
  ASSERT_TRUE(result.ok()) << result.status();
  ASSERT_GE(result->report.jobs.size(), 5u);
  EXPECT_EQ(Got(result->report.jobs), Want(result->report.jobs));
}

// Fails when a field is added to v1::JobReport or v1::StepTime: the
// encoder (and this list) must learn it.
TEST(JobReportWireTest, KnowsEveryFieldOfTheMessages) {
  auto numbers = [](const google::protobuf::Descriptor* d) {
    std::set<int> out;
    for (int i = 0; i < d->field_count(); ++i)
      out.insert(d->field(i)->number());
    return out;
  };
  std::set<int> job;
  for (int n = 1; n <= 26; ++n) job.insert(n);
  EXPECT_EQ(numbers(v1::JobReport::descriptor()), job);
  EXPECT_EQ(numbers(v1::StepTime::descriptor()),
            (std::set<int>{1, 2, 3, 4, 5}));
}

}  // namespace
}  // namespace goodput::report
