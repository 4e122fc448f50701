#include "cluster/batch_publisher.h"

#include <iterator>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "cluster/partition_assigner.h"
#include "cluster/testing/fake_event_log.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace goodput::cluster {
namespace {

v1::Batch MakeBatch(const std::string& agent, uint64_t sequence,
                    const std::vector<std::string>& jobs) {
  v1::Batch b;
  b.set_agent_id(agent);
  b.set_sequence(sequence);
  for (const std::string& job : jobs) {
    v1::Event* e = b.add_events();
    e->set_job_id(job);
    if (job.empty()) {
      e->mutable_heartbeat();
    } else {
      e->mutable_step()->set_step(b.events_size());
    }
  }
  return b;
}

// Every published message decoded, by subject.
std::map<std::string, std::vector<v1::Batch>> BySubject(FakeEventLog& log) {
  std::map<std::string, std::vector<v1::Batch>> out;
  for (const FakeEventLog::Message& m : log.messages()) {
    v1::Batch b;
    EXPECT_TRUE(b.ParseFromString(m.data));
    out[m.subject].push_back(b);
  }
  return out;
}

TEST(BatchPublisherTest, EachEventGoesToItsJobsPartitionInOrder) {
  FakeEventLog log;
  BatchPublisher pub(&log, {.partitions = 8});
  std::vector<std::string> jobs;
  for (int i = 0; i < 40; ++i) jobs.push_back("job-" + std::to_string(i % 10));
  absl::StatusOr<PublishResult> r = pub.Publish(MakeBatch("a", 7, jobs));
  ASSERT_TRUE(r.ok()) << r.status();
  int events = 0;
  for (const auto& [subject, batches] : BySubject(log)) {
    ASSERT_EQ(batches.size(), 1u) << subject;
    const v1::Batch& b = batches[0];
    EXPECT_EQ(b.agent_id(), "a");
    EXPECT_EQ(b.sequence(), 7u);
    int64_t last = 0;
    for (const v1::Event& e : b.events()) {
      EXPECT_EQ(pub.PartitionSubject(PartitionOfJob(e.job_id(), 8)), subject);
      EXPECT_GT(e.step().step(), last);  // the batch's order is kept
      last = e.step().step();
      ++events;
    }
  }
  EXPECT_EQ(events, 40);
  EXPECT_EQ(r->parts, static_cast<int>(log.messages().size()));
}

TEST(BatchPublisherTest, HeartbeatsGoToTheirOwnSubject) {
  FakeEventLog log;
  BatchPublisher pub(&log, {.subject_prefix = "gp", .partitions = 4});
  ASSERT_TRUE(pub.Publish(MakeBatch("a", 1, {"", "", "llm-7"})).ok());
  auto subjects = BySubject(log);
  ASSERT_EQ(subjects.count("gp.hb"), 1u);
  EXPECT_EQ(subjects["gp.hb"][0].events_size(), 2);
  EXPECT_EQ(subjects.count(pub.PartitionSubject(PartitionOfJob("llm-7", 4))),
            1u);
}

TEST(BatchPublisherTest, AResentBatchIsStoredOnce) {
  FakeEventLog log;
  BatchPublisher pub(&log, {.partitions = 4});
  const v1::Batch b = MakeBatch("a", 3, {"x", "y", "z", "w", ""});
  absl::StatusOr<PublishResult> first = pub.Publish(b);
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(first->duplicates, 0);
  absl::StatusOr<PublishResult> again = pub.Publish(b);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->duplicates, again->parts);
  EXPECT_EQ(log.messages().size(), static_cast<size_t>(first->parts));
  // Another agent's batch with the same sequence is not a duplicate.
  ASSERT_TRUE(pub.Publish(MakeBatch("b", 3, {"x"})).ok());
  EXPECT_EQ(log.messages().size(), static_cast<size_t>(first->parts) + 1);
}

// Passes `left` publishes to `inner`, then fails every one.
class FailAfter : public EventLog {
 public:
  FailAfter(EventLog* inner, int left) : inner_(inner), left_(left) {}
  absl::StatusOr<PublishAck> Publish(absl::string_view subject,
                                     absl::string_view id,
                                     absl::string_view data) override {
    if (left_-- <= 0) return absl::UnavailableError("down");
    return inner_->Publish(subject, id, data);
  }
  absl::StatusOr<std::unique_ptr<LogReader>> Read(absl::string_view subject,
                                                  uint64_t from) override {
    return inner_->Read(subject, from);
  }

 private:
  EventLog* inner_;
  int left_;
};

TEST(BatchPublisherTest, AFailedPartFailsTheBatchAndTheResendCompletesIt) {
  std::vector<std::string> jobs;
  for (int i = 0; i < 50; ++i) jobs.push_back("job-" + std::to_string(i));
  const v1::Batch b = MakeBatch("a", 1, jobs);
  FakeEventLog log;
  FailAfter flaky(&log, 3);  // 3 parts go through, then the log is down
  EXPECT_TRUE(absl::IsUnavailable(
      BatchPublisher(&flaky, {.partitions = 16}).Publish(b).status()));
  EXPECT_EQ(log.messages().size(), 3u);
  absl::StatusOr<PublishResult> resend =
      BatchPublisher(&log, {.partitions = 16}).Publish(b);
  ASSERT_TRUE(resend.ok());
  EXPECT_GT(resend->parts, 3);
  EXPECT_EQ(resend->duplicates, 3);
  EXPECT_EQ(log.messages().size(), static_cast<size_t>(resend->parts));
}

TEST(BatchPublisherTest, APartAboveTheMessageLimitGoesInChunks) {
  FakeEventLog log;
  BatchPublisher pub(&log, {.partitions = 1, .max_message_bytes = 200});
  v1::Batch b = MakeBatch("a", 1, std::vector<std::string>(20, "one-job"));
  for (v1::Event& e : *b.mutable_events()) e.set_host(std::string(40, 'h'));
  absl::StatusOr<PublishResult> r = pub.Publish(b);
  ASSERT_TRUE(r.ok());
  EXPECT_GT(r->parts, 4);
  int events = 0;
  std::set<std::string> ids;
  for (const FakeEventLog::Message& m : log.messages()) {
    EXPECT_LE(m.data.size(), 200u);
    EXPECT_TRUE(ids.insert(m.id).second);
    v1::Batch c;
    ASSERT_TRUE(c.ParseFromString(m.data));
    events += c.events_size();
  }
  EXPECT_EQ(events, 20);
  EXPECT_EQ(*ids.begin(), "a/1/0/0");
  EXPECT_EQ(*std::next(ids.begin()), "a/1/0/1");
}

}  // namespace
}  // namespace goodput::cluster
