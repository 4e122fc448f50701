// ClusterFront: stateless checks answered in the ack, accepted events in
// the (fake) replicated log by partition, the ack only after the log
// stored them, resends stored once.
#include "server/cluster_front.h"

#include <map>
#include <string>
#include <vector>

#include "cluster/partition_assigner.h"
#include "cluster/testing/fake_event_log.h"
#include "core/testing/timeline.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "util/clock.h"

namespace goodput::server {
namespace {

using ::goodput::core::testing::ParseEvents;
using ::goodput::core::testing::T;
using ::goodput::core::testing::Timeline;
using ::testing::HasSubstr;

constexpr int32_t kPartitions = 4;

class ClusterFrontTest : public ::testing::Test {
 protected:
  ClusterFrontTest()
      : clock_(T("2026-11-22T10:05:00Z")),
        publisher_(&log_, {.partitions = kPartitions}),
        front_(&publisher_, &clock_, codec::ValidationLimits()) {}

  v1::Batch Batch(uint64_t sequence, const std::string& timeline) {
    v1::Batch batch;
    batch.set_agent_id("agent-1");
    batch.set_sequence(sequence);
    for (const v1::Event& e : ParseEvents(Timeline(timeline))) {
      *batch.add_events() = e;
    }
    return batch;
  }
  // The events stored in the log, per job, in log order.
  std::map<std::string, int> EventsInLog() {
    std::map<std::string, int> per_job;
    for (const cluster::FakeEventLog::Message& m : log_.messages()) {
      v1::Batch part;
      EXPECT_TRUE(part.ParseFromString(m.data));
      for (const v1::Event& e : part.events()) {
        const std::string key = e.job_id().empty() ? "(hb)" : e.job_id();
        ++per_job[key];
        if (!e.job_id().empty()) {
          EXPECT_EQ(m.subject,
                    publisher_.PartitionSubject(
                        cluster::PartitionOfJob(e.job_id(), kPartitions)));
        }
      }
    }
    return per_job;
  }

  FakeClock clock_;
  cluster::FakeEventLog log_;
  cluster::BatchPublisher publisher_;
  ClusterFront front_;
};

constexpr char kMixed[] = R"(
10:00:00 {"job_id":"a","job_submitted":{"chips":8,"accelerator":"h100","workload":"TRAINING"}}
10:00:01 {"job_id":"b","job_submitted":{"chips":0,"accelerator":"h100","workload":"TRAINING"}}
10:00:02 {"job_id":"c","started":{}}
10:20:00 {"job_id":"a","started":{}}
10:00:03 {"host":"h1","heartbeat":{"chips":8,"accelerator":"h100"}}
)";

TEST_F(ClusterFrontTest, RefusedEventsAreAnsweredAndTheRestPublished) {
  v1::Batch batch = Batch(1, kMixed);
  absl::StatusOr<v1::Ack> ack = front_.IngestTaking(&batch);
  ASSERT_TRUE(ack.ok()) << ack.status();
  EXPECT_EQ(ack->sequence(), 1u);
  EXPECT_EQ(ack->accepted(), 3u);
  ASSERT_EQ(ack->rejections_size(), 2);
  EXPECT_EQ(ack->rejections(0).index(), 1);
  EXPECT_THAT(ack->rejections(0).reason(), HasSubstr("job_submitted.chips"));
  EXPECT_EQ(ack->rejections(1).index(), 3);  // 15 min in the future
  EXPECT_THAT(ack->rejections(1).reason(), HasSubstr("future"));
  EXPECT_EQ(EventsInLog(),
            (std::map<std::string, int>{{"a", 1}, {"c", 1}, {"(hb)", 1}}));
  EXPECT_EQ(front_.stats().rejected_events, 2);
  EXPECT_EQ(front_.stats().accepted_events, 3);
}

TEST_F(ClusterFrontTest, AResentBatchIsStoredOnce) {
  v1::Batch first = Batch(1, kMixed);
  ASSERT_TRUE(front_.IngestTaking(&first).ok());
  const size_t messages = log_.messages().size();
  v1::Batch again = Batch(1, kMixed);
  absl::StatusOr<v1::Ack> ack = front_.IngestTaking(&again);
  ASSERT_TRUE(ack.ok()) << ack.status();
  EXPECT_EQ(ack->accepted(), 3u);
  EXPECT_EQ(log_.messages().size(), messages);
  EXPECT_EQ(front_.stats().duplicate_parts, static_cast<int64_t>(messages));
}

TEST_F(ClusterFrontTest, NoAckUntilTheLogStoredEveryPart) {
  log_.FailNext(1);
  v1::Batch batch = Batch(1, kMixed);
  absl::StatusOr<v1::Ack> ack = front_.IngestTaking(&batch);
  EXPECT_TRUE(absl::IsUnavailable(ack.status())) << ack.status();
  EXPECT_THAT(ack.status().message(), HasSubstr("agent-1"));
  EXPECT_EQ(front_.stats().failed_batches, 1);
  EXPECT_EQ(front_.stats().batches, 0);
  // The agent resends it: every event is in the log once.
  v1::Batch resent = Batch(1, kMixed);
  ASSERT_TRUE(front_.IngestTaking(&resent).ok());
  EXPECT_EQ(EventsInLog(),
            (std::map<std::string, int>{{"a", 1}, {"c", 1}, {"(hb)", 1}}));
}

TEST_F(ClusterFrontTest, ABatchWithoutIdentityIsRefused) {
  v1::Batch batch = Batch(0, kMixed);
  absl::StatusOr<v1::Ack> ack = front_.IngestTaking(&batch);
  EXPECT_TRUE(absl::IsInvalidArgument(ack.status())) << ack.status();
  EXPECT_THAT(ack.status().message(), HasSubstr("sequence 0"));
  EXPECT_TRUE(log_.messages().empty());
}

}  // namespace
}  // namespace goodput::server
