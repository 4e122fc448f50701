// A job snapshot record and back; records written before the report became
// goodput.v1.JobReport (as internal StoredJobReport) still read.
#include "storage/job_snapshot.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace goodput::storage {
namespace {

using ::testing::HasSubstr;

// A JobSnapshot record as main's storage.proto (report: StoredJobReport,
// state int32 3, `nanos` 1..12, last_step 0, no last_checkpoint) encoded it:
// `protoc --encode=goodput.internal.v1.JobSnapshot` of a text record.
const char kFormerRecord[] =
    "\x08\x07\x10\xe8\x07\x18\x88\x27\x2a\x62\x0a\x05\x6c\x6c\x6d\x2d\x37\x10"
    "\x80\x02\x1a\x07\x74\x70\x75\x2d\x76\x35\x70\x20\x02\x2a\x03\x6a\x61\x78"
    "\x32\x0e\x0a\x04\x74\x65\x61\x6d\x12\x06\x73\x65\x61\x72\x63\x68\x38\x03"
    "\x40\x4e\x4a\x0c\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x52\x08"
    "\x0a\x04\x65\x76\x61\x6c\x10\x05\x58\x3c\x61\x00\x00\x00\x00\x00\x42\x9f"
    "\x40\x68\x28\x70\x00\x80\x01\xdc\x01\x88\x01\x01\x90\x01\x02\x98\x01\x03";

TEST(JobSnapshotTest, ReadsARecordOfTheFormerLayout) {
  internal::v1::JobSnapshot record;
  ASSERT_TRUE(record.ParseFromString(
      std::string(kFormerRecord, sizeof(kFormerRecord) - 1)));
  JobSnapshot snapshot;
  ASSERT_TRUE(FromRecord(record, &snapshot).ok());
  EXPECT_EQ(snapshot.through_batch, 7u);
  EXPECT_EQ(snapshot.ended_ns, 5000);
  const core::JobReport& r = snapshot.report;
  EXPECT_EQ(r.job_id, "llm-7");
  EXPECT_EQ(r.chips, 256);
  EXPECT_EQ(r.workload, v1::JobSubmitted::SERVING);
  EXPECT_EQ(r.labels.at("team"), "search");
  EXPECT_EQ(r.state, core::JobStateKind::kEnded);
  // The record's 12 categories predate rule 14's reshard: it reads as 0
  // and the categories after it keep their values; so does excluded
  // (exclusions), the last.
  const int reshard = core::Index(core::Category::kReshard);
  const int excluded = core::Index(core::Category::kExcluded);
  for (int c = 0; c < core::kNumCategories; ++c) {
    const int64_t want = c < reshard                     ? c + 1
                         : c == reshard || c == excluded ? 0
                                                         : c;
    EXPECT_EQ(r.nanos[c], want) << core::CategoryName(core::Category(c));
  }
  EXPECT_EQ(r.custom_nanos.at("eval"), 5);
  EXPECT_EQ(r.ideal_seconds, 2000.5);
  EXPECT_EQ(r.last_step, 0);
  EXPECT_FALSE(r.last_checkpoint.has_value());
  EXPECT_EQ(r.lost_steps, 220);
  EXPECT_EQ(r.notices, 3);
}

TEST(JobSnapshotTest, RoundTrip) {
  JobSnapshot snapshot;
  snapshot.through_batch = 9;
  snapshot.first_event_ns = 1;
  snapshot.ended_ns = 2;
  snapshot.events_deleted = true;
  snapshot.report.job_id = "a";
  snapshot.report.state = core::JobStateKind::kEnded;
  snapshot.report.nanos[3] = 42;
  JobSnapshot back;
  ASSERT_TRUE(FromRecord(ToRecord(snapshot), &back).ok());
  EXPECT_EQ(back.through_batch, 9u);
  EXPECT_EQ(back.first_event_ns, 1);
  EXPECT_EQ(back.ended_ns, 2);
  EXPECT_TRUE(back.events_deleted);
  EXPECT_EQ(back.report.job_id, "a");
  EXPECT_EQ(back.report.state, core::JobStateKind::kEnded);
  EXPECT_EQ(back.report.nanos[3], 42);
}

TEST(JobSnapshotTest, ARecordThatDoesNotFitIsDataLossNamingTheJob) {
  JobSnapshot snapshot;
  snapshot.report.job_id = "a";
  internal::v1::JobSnapshot record = ToRecord(snapshot);
  // Three fewer: 13 values would be the layout before exclusions and 12
  // the one before rule 14, which both read.
  record.mutable_report()->mutable_category_ns()->RemoveLast();
  record.mutable_report()->mutable_category_ns()->RemoveLast();
  record.mutable_report()->mutable_category_ns()->RemoveLast();
  JobSnapshot back;
  absl::Status s = FromRecord(record, &back);
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(s.message(), HasSubstr("snapshots: job 'a': category_ns: want"));
}

}  // namespace
}  // namespace goodput::storage
