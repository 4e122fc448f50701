#include "server/ingest_limits.h"

#include <thread>
#include <vector>

#include "codec/event_validator.h"
#include "core/testing/timeline.h"
#include "gtest/gtest.h"

namespace goodput::server {
namespace {

constexpr int64_t kSecond = 1000 * 1000 * 1000;

v1::Event JobEvent(const std::string& job_id) {
  v1::Event e;
  e.set_job_id(job_id);
  e.mutable_started();
  return e;
}

TEST(IngestLimitsTest, BatchOverMaxBatchEventsIsRejectedAndCounted) {
  FakeClock clock(kSecond);
  IngestLimits limits({.max_batch_events = 10}, &clock);
  absl::Duration retry;
  EXPECT_TRUE(limits.AdmitBatch("a", 10, &retry).ok());
  absl::Status s = limits.AdmitBatch("a", 11, &retry);
  EXPECT_TRUE(absl::IsInvalidArgument(s));
  EXPECT_EQ(s.message(), "batch: 11 events exceed --max_batch_events=10");
  EXPECT_EQ(limits.stats().batches_too_large, 1);
}

TEST(IngestLimitsTest, BatchOverMaxBatchBytesIsRejectedAndCounted) {
  FakeClock clock(kSecond);
  IngestLimits limits({.max_batch_bytes = 2048}, &clock);
  EXPECT_TRUE(limits.AdmitBatchBytes(2048).ok());
  absl::Status s = limits.AdmitBatchBytes(2049);
  EXPECT_TRUE(absl::IsInvalidArgument(s));
  EXPECT_EQ(s.message(), "batch: 2049 bytes exceed --max_batch_bytes=2048");
  EXPECT_EQ(limits.stats().bytes_limited_batches, 1);
  EXPECT_EQ(limits.stats().batches_too_large, 0);
  EXPECT_EQ(limits.TransportLimit(), 4096);
}

TEST(IngestLimitsTest, TransportLimitStaysAnInt) {
  FakeClock clock(kSecond);
  IngestLimits limits({.max_batch_bytes = size_t{1} << 31}, &clock);
  EXPECT_EQ(limits.TransportLimit(), std::numeric_limits<int>::max());
}

TEST(IngestLimitsTest, AgentRateIsATokenBucketPerAgentWithARetryHint) {
  FakeClock clock(kSecond);
  IngestLimits limits({.max_batch_events = 1000,
                       .agent_events_per_second = 100,
                       .agent_burst_events = 200},
                      &clock);
  absl::Duration retry;
  ASSERT_TRUE(limits.AdmitBatch("a", 150, &retry).ok());
  ASSERT_TRUE(limits.AdmitBatch("a", 100, &retry).ok());  // 200 - 250 < 0
  absl::Status s = limits.AdmitBatch("a", 1, &retry);
  EXPECT_TRUE(absl::IsResourceExhausted(s));
  EXPECT_EQ(s.message(),
            "agent a: over --max_agent_rate=100 events/s; retry after 510ms");
  EXPECT_EQ(retry, absl::Milliseconds(510));  // from -50 back to 1 token
  EXPECT_TRUE(limits.AdmitBatch("b", 100, &retry).ok());  // own bucket
  clock.Advance(kSecond / 2);  // -50 + 50 = 0: still empty
  EXPECT_FALSE(limits.AdmitBatch("a", 1, &retry).ok());
  clock.Advance(kSecond / 10);
  EXPECT_TRUE(limits.AdmitBatch("a", 1, &retry).ok());
  EXPECT_EQ(limits.stats().rate_limited_batches, 2);
}

TEST(IngestLimitsTest, ZeroRateMeansUnlimited) {
  FakeClock clock(kSecond);
  IngestLimits limits({.max_batch_events = 1000}, &clock);
  absl::Duration retry;
  for (int i = 0; i < 100; ++i) {
    ASSERT_TRUE(limits.AdmitBatch("a", 1000, &retry).ok());
  }
}

TEST(IngestLimitsTest, MaxJobsRejectsEventsOfNewJobsOnly) {
  FakeClock clock(kSecond);
  IngestLimits limits({.max_jobs = 3}, &clock);
  std::unordered_set<std::string> new_jobs;
  // Two jobs are live; one more fits.
  EXPECT_TRUE(limits.AdmitJob(JobEvent("old"), true, 2, &new_jobs).ok());
  EXPECT_TRUE(limits.AdmitJob(JobEvent("j3"), false, 2, &new_jobs).ok());
  EXPECT_TRUE(limits.AdmitJob(JobEvent("j3"), false, 2, &new_jobs).ok());
  absl::Status s = limits.AdmitJob(JobEvent("j4"), false, 2, &new_jobs);
  EXPECT_TRUE(absl::IsResourceExhausted(s));
  EXPECT_EQ(s.message(),
            "job_id: job \"j4\" would exceed --max_jobs=3 jobs held by the "
            "server");
  v1::Event heartbeat;
  heartbeat.mutable_heartbeat()->set_chips(4);
  EXPECT_TRUE(limits.AdmitJob(heartbeat, false, 2, &new_jobs).ok());
  EXPECT_EQ(limits.stats().jobs_limited_events, 1);
}

// The validator's own messages, so a change of its wording fails here.
TEST(IngestLimitsTest, CountsTheValidatorsSizeLimitsOnly) {
  FakeClock clock(kSecond);
  IngestLimits limits({}, &clock);
  codec::ValidationLimits sizes{.max_string_bytes = 8, .max_labels = 1};
  v1::Event e = core::testing::ParseEvents(core::testing::Timeline(
      R"(10:00:00 {"job_submitted":{"chips":1,"workload":"TRAINING"}})"))[0];
  auto count = [&] {
    absl::Status s = codec::ValidateEvent(e, sizes);
    EXPECT_FALSE(s.ok());
    limits.CountInvalidEvent(s);
  };
  (*e.mutable_job_submitted()->mutable_labels())["a"] = "1";
  (*e.mutable_job_submitted()->mutable_labels())["b"] = "2";
  count();
  e.mutable_job_submitted()->mutable_labels()->erase("b");
  e.set_job_id("a-job-id-too-long");
  count();
  e.set_job_id("j");
  e.mutable_job_submitted()->set_chips(0);
  count();  // neither limit
  EXPECT_EQ(limits.stats().labels_limited_events, 1);
  EXPECT_EQ(limits.stats().strings_limited_events, 1);
  limits.CountRefusedStream();
  EXPECT_EQ(limits.stats().refused_streams, 1);
  limits.CountRefusedQuery();
  EXPECT_EQ(limits.stats().refused_queries, 1);
}

TEST(IngestLimitsTest, ConcurrentAgentsEachGetTheirOwnBucket) {
  FakeClock clock(kSecond);
  IngestLimits limits({.max_batch_events = 10,
                       .agent_events_per_second = 1000,
                       .agent_burst_events = 50},
                      &clock);
  std::vector<std::thread> agents;
  std::vector<int> admitted(8, 0);
  for (int a = 0; a < 8; ++a) {
    agents.emplace_back([&, a] {
      absl::Duration retry;
      for (int i = 0; i < 100; ++i) {
        if (limits.AdmitBatch(std::to_string(a), 1, &retry).ok()) {
          ++admitted[a];
        }
      }
    });
  }
  for (std::thread& t : agents) t.join();
  for (int a = 0; a < 8; ++a) EXPECT_EQ(admitted[a], 50) << a;
  EXPECT_EQ(limits.stats().rate_limited_batches, 8 * 50);
}

}  // namespace
}  // namespace goodput::server
