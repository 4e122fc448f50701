// core::JobReport -> goodput.v1.JobReport -> core::JobReport is the identity
// over random reports, and a record that does not fit core's types is
// refused by name.
#include "core/job_report_proto.h"

#include <random>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "google/protobuf/arena.h"
#include "gtest/gtest.h"

namespace goodput::core {
namespace {

using ::testing::HasSubstr;

// Every field set from `rng`; optional fields and maps sometimes empty.
JobReport RandomJob(std::mt19937_64& rng) {
  auto n = [&rng](int64_t max) {
    return std::uniform_int_distribution<int64_t>(0, max)(rng);
  };
  JobReport job;
  job.job_id = absl::StrCat("job-", n(1'000'000));
  job.chips = n(4096);
  job.accelerator = n(1) ? "tpu-v5p" : "";
  job.workload = static_cast<v1::JobSubmitted::Workload>(n(2));
  job.framework = n(1) ? "jax" : "pytorch";
  for (int i = n(3); i > 0; --i) job.labels[absl::StrCat("k", i)] = "v";
  job.state = static_cast<JobStateKind>(n(3));
  for (int64_t& ns : job.nanos) ns = n(int64_t{1} << 50);
  for (int i = n(2); i > 0; --i) job.custom_nanos[absl::StrCat("c", i)] = n(9);
  job.total_ns = n(int64_t{1} << 55);
  job.at_risk_ns = n(int64_t{1} << 40);
  job.ideal_seconds = std::uniform_real_distribution<double>(0, 1e6)(rng);
  job.costed_productive_ns = n(int64_t{1} << 45);
  if (n(1)) job.last_step = n(1'000'000);
  if (n(1)) job.last_checkpoint = n(1'000'000);
  job.lost_steps = n(1000);
  job.interruptions = n(10);
  job.duplicates = n(10);
  job.notices = n(10);
  return job;
}

void ExpectSameJob(const JobReport& a, const JobReport& b) {
  EXPECT_EQ(a.job_id, b.job_id);
  EXPECT_EQ(a.chips, b.chips);
  EXPECT_EQ(a.accelerator, b.accelerator);
  EXPECT_EQ(a.workload, b.workload);
  EXPECT_EQ(a.framework, b.framework);
  EXPECT_EQ(a.labels, b.labels);
  EXPECT_EQ(a.state, b.state);
  EXPECT_EQ(a.total_ns, b.total_ns);
  EXPECT_EQ(a.nanos, b.nanos);
  EXPECT_EQ(a.custom_nanos, b.custom_nanos);
  EXPECT_EQ(a.at_risk_ns, b.at_risk_ns);
  EXPECT_EQ(a.ideal_seconds, b.ideal_seconds);
  EXPECT_EQ(a.costed_productive_ns, b.costed_productive_ns);
  EXPECT_EQ(a.last_step, b.last_step);
  EXPECT_EQ(a.last_checkpoint, b.last_checkpoint);
  EXPECT_EQ(a.lost_steps, b.lost_steps);
  EXPECT_EQ(a.interruptions, b.interruptions);
  EXPECT_EQ(a.duplicates, b.duplicates);
  EXPECT_EQ(a.notices, b.notices);
}

// Query.Report converts each chunk's jobs in place on an arena.
TEST(JobReportProtoTest, InPlaceOnAnArenaRoundTripsOverRandomReports) {
  std::mt19937_64 rng(20261127);
  google::protobuf::Arena arena;
  for (int i = 0; i < 500; ++i) {
    const JobReport job = RandomJob(rng);
    auto* out = google::protobuf::Arena::CreateMessage<v1::JobReport>(&arena);
    JobReportToProto(job, out);
    v1::JobReport parsed;
    ASSERT_TRUE(parsed.ParseFromString(out->SerializeAsString()));
    absl::StatusOr<JobReport> back = JobReportFromProto(parsed);
    ASSERT_TRUE(back.ok()) << back.status();
    ExpectSameJob(job, *back);
    if (::testing::Test::HasFailure()) break;
  }
}

TEST(JobReportProtoTest, RoundTripIsTheIdentityOverRandomReports) {
  std::mt19937_64 rng(20261126);
  for (int i = 0; i < 2000; ++i) {
    const JobReport job = RandomJob(rng);
    // Through the wire bytes too, as storage and gRPC carry it.
    v1::JobReport parsed;
    ASSERT_TRUE(
        parsed.ParseFromString(JobReportToProto(job).SerializeAsString()));
    absl::StatusOr<JobReport> back = JobReportFromProto(parsed);
    ASSERT_TRUE(back.ok()) << back.status();
    ExpectSameJob(job, *back);
    if (::testing::Test::HasFailure()) break;
  }
}

TEST(JobReportProtoTest, UnsetStepsStayUnsetAndZeroStepsStaySet) {
  JobReport job;
  job.job_id = "a";
  absl::StatusOr<JobReport> back = JobReportFromProto(JobReportToProto(job));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_FALSE(back->last_step.has_value());
  EXPECT_FALSE(back->last_checkpoint.has_value());
  job.last_step = 0;
  job.last_checkpoint = 0;
  back = JobReportFromProto(JobReportToProto(job));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->last_step, 0);
  EXPECT_EQ(back->last_checkpoint, 0);
}

// Issue 18: step times round trip, the ratio recomputed; none stays none.
TEST(JobReportProtoTest, StepTimeRoundTrips) {
  JobReport job;
  job.job_id = "a";
  absl::StatusOr<JobReport> back = JobReportFromProto(JobReportToProto(job));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_FALSE(back->step_time);
  job.step_time = StepTimeSummary{500, 10.02, 0.5, 100, 25.0, std::nullopt};
  job.step_time->SetRatio();
  back = JobReportFromProto(JobReportToProto(job));
  ASSERT_TRUE(back.ok()) << back.status();
  ASSERT_TRUE(back->step_time);
  EXPECT_TRUE(*back->step_time == *job.step_time);
  EXPECT_DOUBLE_EQ(*back->step_time->ratio, 25.0 / 10.02);
}

TEST(JobReportProtoTest, StateKeepsCoreNumbers) {
  // Stored snapshots hold the state as core::JobStateKind's number.
  JobReport job;
  job.state = JobStateKind::kRecovering;
  EXPECT_EQ(JobReportToProto(job).state(), v1::JOB_STATE_RECOVERING);
  EXPECT_EQ(static_cast<int>(v1::JOB_STATE_RECOVERING),
            static_cast<int>(JobStateKind::kRecovering));
  EXPECT_EQ(static_cast<int>(v1::JOB_STATE_ENDED),
            static_cast<int>(JobStateKind::kEnded));
}

TEST(JobReportProtoTest, WrongCategoryCountIsRefusedByName) {
  JobReport llm;
  llm.job_id = "llm-7";
  v1::JobReport in = JobReportToProto(llm);
  in.add_category_ns(1);
  absl::StatusOr<JobReport> job = JobReportFromProto(in);
  ASSERT_FALSE(job.ok());
  EXPECT_EQ(job.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(
      job.status().message(),
      HasSubstr(absl::StrCat("job 'llm-7': category_ns: want ", kNumCategories,
                             " values, got ", kNumCategories + 1)));
}

// Rule 14: an elastic job's fields survive the round trip; a fixed-size
// job sends none of them.
TEST(JobReportProtoTest, ElasticFieldsRoundTrip) {
  JobReport elastic;
  elastic.job_id = "e";
  elastic.min_chips = 4;
  elastic.chip_seconds[Index(Category::kReshard)] = 2.5;
  elastic.costed_productive_chip_seconds = 7.25;
  absl::StatusOr<JobReport> back =
      JobReportFromProto(JobReportToProto(elastic));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->min_chips, 4);
  EXPECT_EQ(back->chip_seconds, elastic.chip_seconds);
  EXPECT_EQ(back->costed_productive_chip_seconds, 7.25);
  JobReport fixed;
  const v1::JobReport out = JobReportToProto(fixed);
  EXPECT_FALSE(out.has_min_chips());
  EXPECT_EQ(out.category_chip_seconds_size(), 0);
  v1::JobReport bad = JobReportToProto(elastic);
  bad.add_category_chip_seconds(1);
  EXPECT_FALSE(JobReportFromProto(bad).ok());
}

// A record written before rule 14 (12 categories, no reshard) still reads:
// reshard is 0 and every later category keeps its own value.
TEST(JobReportProtoTest, FormerLayoutWithoutReshardReads) {
  JobReport llm;
  llm.job_id = "llm-7";
  v1::JobReport in = JobReportToProto(llm);
  in.clear_category_ns();
  for (int c = 0; c < 12; ++c) in.add_category_ns(c + 1);
  absl::StatusOr<JobReport> job = JobReportFromProto(in);
  ASSERT_TRUE(job.ok()) << job.status();
  EXPECT_EQ(job->nanos[Index(Category::kCheckpoint)], 8);
  EXPECT_EQ(job->nanos[Index(Category::kReshard)], 0);
  EXPECT_EQ(job->nanos[Index(Category::kCustom)], 9);
  EXPECT_EQ(job->nanos[Index(Category::kLost)], 12);
  EXPECT_EQ(job->nanos[Index(Category::kExcluded)], 0);
}

// A record written before exclusions (13 categories, no excluded) reads
// with excluded 0; its elastic chip-seconds likewise.
TEST(JobReportProtoTest, FormerLayoutWithoutExcludedReads) {
  JobReport llm;
  llm.job_id = "llm-7";
  v1::JobReport in = JobReportToProto(llm);
  in.clear_category_ns();
  for (int c = 0; c < 13; ++c) in.add_category_ns(c + 1);
  for (int c = 0; c < 13; ++c) in.add_category_chip_seconds(c + 0.5);
  absl::StatusOr<JobReport> job = JobReportFromProto(in);
  ASSERT_TRUE(job.ok()) << job.status();
  EXPECT_EQ(job->nanos[Index(Category::kReshard)], 9);
  EXPECT_EQ(job->nanos[Index(Category::kLost)], 13);
  EXPECT_EQ(job->nanos[Index(Category::kExcluded)], 0);
  EXPECT_EQ(job->chip_seconds[Index(Category::kLost)], 12.5);
  EXPECT_EQ(job->chip_seconds[Index(Category::kExcluded)], 0);
}

TEST(JobReportProtoTest, UnknownStateIsRefusedByName) {
  JobReport llm;
  llm.job_id = "llm-7";
  v1::JobReport in = JobReportToProto(llm);
  in.set_state(static_cast<v1::JobState>(7));
  absl::StatusOr<JobReport> job = JobReportFromProto(in);
  ASSERT_FALSE(job.ok());
  EXPECT_THAT(job.status().message(),
              HasSubstr("job 'llm-7': state: 7 is not a job state"));
}

}  // namespace
}  // namespace goodput::core
