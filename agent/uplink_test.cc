#include "agent/uplink.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "agent/testing/test_ingest_server.h"
#include "agent/testing/test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace goodput::agent {
namespace {

using ::testing::ElementsAreArray;
using ::testing::IsEmpty;
using testing::RecordingSleeper;
using testing::TestIngestServer;
using testing::WaitFor;
using Stats = TestIngestServer::Stats;

constexpr absl::Duration kTimeout = absl::Seconds(30);

std::vector<v1::Event> Events(int n, const std::string& job, int first) {
  std::vector<v1::Event> events(n);
  for (int i = 0; i < n; ++i) {
    events[i].set_job_id(job);
    events[i].mutable_step()->set_step(first + i);
  }
  return events;
}

class UplinkTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(server_.Start().ok());
    auto spool = Spool::Open({tmp_.path(), uint64_t{1} << 30});
    ASSERT_TRUE(spool.ok()) << spool.status();
    spool_ = *std::move(spool);
  }
  void TearDown() override {
    if (uplink_) uplink_->Stop();
    server_.Stop();
  }

  void StartUplink(size_t max_in_flight = 8) {
    uplink_ = std::make_unique<Uplink>(
        Uplink::Options{server_.address(), max_in_flight,
                        absl::Milliseconds(100), absl::Seconds(10), 1},
        spool_.get(), &clock_, &sleeper_);
    spool_->SetAppendListener([u = uplink_.get()] { u->Notify(); });
    uplink_->Start();
  }

  // Appends `n` batches of 3 events (job "j", steps counting up).
  void AppendBatches(int n) {
    for (int i = 0; i < n; ++i) {
      ASSERT_TRUE(spool_->Append(Events(3, "j", next_step_), 0).ok());
      next_step_ += 3;
    }
  }

  bool AwaitStored(int64_t batches) {
    return server_.Await(
        [batches](const Stats& s) { return s.stored_batches >= batches; },
        kTimeout);
  }
  bool AwaitSpoolEmpty() {
    return WaitFor([this] { return spool_->Pending().empty(); }, kTimeout);
  }

  // Every step number stored by the server, which must be 1..n once each.
  void ExpectExactlyOnce(int events) {
    std::vector<int64_t> steps;
    for (const v1::Event& e : server_.stats().events) {
      steps.push_back(e.step().step());
    }
    std::vector<int64_t> want(events);
    for (int i = 0; i < events; ++i) want[i] = i + 1;
    EXPECT_THAT(steps, ElementsAreArray(want));
  }

  testing::TempDir tmp_;
  TestIngestServer server_;
  RealClock clock_;
  RecordingSleeper sleeper_;
  std::unique_ptr<Spool> spool_;
  std::unique_ptr<Uplink> uplink_;
  int next_step_ = 1;
};

TEST_F(UplinkTest, DeliversEverySpooledBatchExactlyOnceInOrder) {
  AppendBatches(50);  // spooled before the uplink starts (a restart)
  StartUplink();
  ASSERT_TRUE(AwaitStored(50));
  ASSERT_TRUE(AwaitSpoolEmpty());
  ExpectExactlyOnce(150);
  std::vector<uint64_t> want(50);
  for (int i = 0; i < 50; ++i) want[i] = i + 1;
  EXPECT_THAT(server_.stats().stored_sequences, ElementsAreArray(want));
  EXPECT_TRUE(uplink_->AwaitStats(
      [](const Uplink::Stats& s) { return s.acked_batches == 50; }, kTimeout));
  EXPECT_LE(uplink_->stats().max_in_flight_seen, 8u);
  EXPECT_EQ(uplink_->stats().acked_batches, 50);
  EXPECT_EQ(server_.stats().high_water.at(spool_->agent_id()), 50u);
}

TEST_F(UplinkTest, SendsBatchesAppendedWhileConnected) {
  StartUplink();
  ASSERT_TRUE(WaitFor([this] { return uplink_->connected(); }, kTimeout));
  AppendBatches(1);
  ASSERT_TRUE(AwaitStored(1));
  AppendBatches(2);
  ASSERT_TRUE(AwaitStored(3));
  ASSERT_TRUE(AwaitSpoolEmpty());
  ExpectExactlyOnce(9);
  EXPECT_EQ(uplink_->stats().stream_errors, 0);
}

TEST_F(UplinkTest, DroppedStreamIsResentAndDedupedByTheServer) {
  server_.DropStreamAfter(10);  // batch 10 is stored, its ack is lost
  AppendBatches(30);
  StartUplink();
  ASSERT_TRUE(AwaitStored(30));
  ASSERT_TRUE(AwaitSpoolEmpty());
  ExpectExactlyOnce(90);
  const Stats s = server_.stats();
  EXPECT_EQ(s.dropped_streams, 1);
  EXPECT_GE(s.duplicate_acks, 1);  // at least batch 10 came twice
  EXPECT_GE(s.streams, 2);
  EXPECT_GE(uplink_->stats().stream_errors, 1);
  ASSERT_FALSE(sleeper_.delays().empty());
  EXPECT_GE(sleeper_.delays()[0], absl::Milliseconds(50));
  EXPECT_LE(sleeper_.delays()[0], absl::Milliseconds(100));
}

TEST_F(UplinkTest, InFlightWindowIsBoundedWhileAcksAreHeld) {
  server_.HoldAcks(true);
  AppendBatches(20);
  StartUplink(/*max_in_flight=*/4);
  ASSERT_TRUE(server_.Await(
      [](const Stats& s) { return s.received_batches >= 4; }, kTimeout));
  EXPECT_EQ(uplink_->stats().sent_batches, 4);
  EXPECT_EQ(uplink_->stats().max_in_flight_seen, 4u);
  EXPECT_EQ(spool_->Pending().size(), 20u);  // nothing deleted unacked
  server_.HoldAcks(false);
  ASSERT_TRUE(AwaitStored(20));
  ASSERT_TRUE(AwaitSpoolEmpty());
  ExpectExactlyOnce(60);
  EXPECT_EQ(uplink_->stats().max_in_flight_seen, 4u);
}

TEST_F(UplinkTest, DuplicateAcksStillDeleteTheBatch) {
  server_.ForceDuplicate(true);
  AppendBatches(5);
  StartUplink();
  ASSERT_TRUE(AwaitSpoolEmpty());
  EXPECT_EQ(server_.stats().stored_batches, 0);
  EXPECT_TRUE(uplink_->AwaitStats(
      [](const Uplink::Stats& s) { return s.duplicate_acks == 5; }, kTimeout));
  EXPECT_EQ(uplink_->stats().duplicate_acks, 5);
}

TEST_F(UplinkTest, ServerRejectionsAreCountedAndNeverRetried) {
  server_.RejectJob("bad");
  std::vector<v1::Event> events = Events(1, "good", 1);
  events.push_back(Events(1, "bad", 1)[0]);
  events.push_back(Events(1, "good", 2)[0]);
  ASSERT_TRUE(spool_->Append(events, 0).ok());
  StartUplink();
  ASSERT_TRUE(AwaitSpoolEmpty());
  EXPECT_TRUE(uplink_->AwaitStats(
      [](const Uplink::Stats& s) { return s.acked_batches == 1; }, kTimeout));
  EXPECT_EQ(uplink_->stats().server_rejected_events, 1);
  EXPECT_EQ(uplink_->stats().server_rejected_events, 1);
  EXPECT_EQ(server_.stats().received_batches, 1);
  EXPECT_EQ(server_.stats().events.size(), 2u);
}

TEST_F(UplinkTest, ServerRestartOnTheSamePortDrainsTheSpool) {
  StartUplink();
  AppendBatches(5);
  ASSERT_TRUE(AwaitStored(5));
  ASSERT_TRUE(AwaitSpoolEmpty());
  const int port = server_.port();
  server_.Stop();
  ASSERT_TRUE(uplink_->AwaitStats(
      [](const Uplink::Stats& s) { return s.stream_errors >= 1; }, kTimeout));
  EXPECT_TRUE(WaitFor([this] { return !uplink_->connected(); }, kTimeout));
  AppendBatches(5);  // while the server is down
  EXPECT_EQ(spool_->Pending().size(), 5u);
  ASSERT_TRUE(server_.Start(port).ok());
  ASSERT_EQ(server_.port(), port);
  ASSERT_TRUE(AwaitStored(10));
  ASSERT_TRUE(AwaitSpoolEmpty());
  ExpectExactlyOnce(30);
  EXPECT_TRUE(WaitFor([this] { return uplink_->connected(); }, kTimeout));
  for (absl::Duration d : sleeper_.delays()) EXPECT_LE(d, absl::Seconds(10));
}

TEST_F(UplinkTest, ServerDownAtStartBacksOffExponentially) {
  const int port = server_.port();
  server_.Stop();
  AppendBatches(2);
  StartUplink();
  ASSERT_TRUE(
      WaitFor([this] { return sleeper_.delays().size() >= 6; }, kTimeout));
  std::vector<absl::Duration> d = sleeper_.delays();
  absl::Duration cap = absl::Milliseconds(100);
  for (size_t i = 0; i < 6; ++i) {
    EXPECT_GE(d[i], cap / 2) << i;
    EXPECT_LE(d[i], cap) << i;
    cap *= 2;
  }
  EXPECT_FALSE(uplink_->connected());
  EXPECT_EQ(uplink_->stats().acked_batches, 0);
  ASSERT_TRUE(server_.Start(port).ok());
  ASSERT_TRUE(AwaitStored(2));
  ASSERT_TRUE(AwaitSpoolEmpty());
  ExpectExactlyOnce(6);
}

TEST_F(UplinkTest, StopWithAcksOutstandingKeepsBatchesSpooled) {
  server_.HoldAcks(true);
  AppendBatches(3);
  StartUplink();
  ASSERT_TRUE(server_.Await(
      [](const Stats& s) { return s.received_batches >= 3; }, kTimeout));
  uplink_->Stop();
  EXPECT_EQ(spool_->Pending().size(), 3u);
  EXPECT_EQ(server_.stats().stored_batches, 0);
}

TEST_F(UplinkTest, CorruptBatchIsDeadLetteredAndTheRestDelivered) {
  AppendBatches(3);
  for (const auto& e : std::filesystem::directory_iterator(tmp_.path())) {
    if (absl::StartsWith(e.path().filename().string(),
                         "batch-00000000000000000002-")) {
      std::ofstream(e.path()) << "garbage \xff\xff";
    }
  }
  StartUplink();
  ASSERT_TRUE(AwaitStored(2));
  ASSERT_TRUE(AwaitSpoolEmpty());
  EXPECT_THAT(server_.stats().stored_sequences, ::testing::ElementsAre(1, 3));
  EXPECT_EQ(uplink_->stats().corrupt_batches, 1);
  EXPECT_EQ(uplink_->stats().dead_lettered, 1);
  EXPECT_EQ(uplink_->stats().dead_lettered, 1);
  EXPECT_TRUE(std::filesystem::exists(
      tmp_.File("dead-letter/batch-00000000000000000002-0000000000000000000"
                ".pb.reason")));
}

// Issue 15 item 1: goodputd refuses a batch over --max_batch_bytes with
// INVALID_ARGUMENT. The agent used to resend it forever, holding up every
// later batch; now it dead-letters it once and goes on.
TEST_F(UplinkTest, BatchRefusedAsInvalidIsDeadLetteredOnceAndTheRestFlows) {
  server_.SetMaxBatchBytes(4096);
  AppendBatches(1);
  ASSERT_TRUE(spool_->Append(Events(300, std::string(100, 'x'), 1000), 0).ok());
  AppendBatches(2);
  StartUplink(/*max_in_flight=*/1);
  ASSERT_TRUE(AwaitStored(3));
  ASSERT_TRUE(AwaitSpoolEmpty());
  EXPECT_THAT(server_.stats().stored_sequences,
              ::testing::ElementsAre(1, 3, 4));
  EXPECT_EQ(server_.stats().refused_batches, 1);  // sent once, never again
  ExpectExactlyOnce(9);
  EXPECT_EQ(uplink_->stats().refused_batches, 1);
  EXPECT_EQ(uplink_->stats().dead_lettered, 1);
  std::ifstream reason(tmp_.File(
      "dead-letter/batch-00000000000000000002-0000000000000000000.pb.reason"));
  std::string line;
  std::getline(reason, line);
  EXPECT_THAT(line, ::testing::HasSubstr("INVALID_ARGUMENT: batch: "));
  EXPECT_THAT(line, ::testing::HasSubstr("exceed --max_batch_bytes=4096"));
}

TEST_F(UplinkTest, RefusedBatchWithOthersInFlightDeadLettersOnlyItself) {
  server_.SetMaxBatchBytes(4096);
  AppendBatches(2);
  ASSERT_TRUE(spool_->Append(Events(300, std::string(100, 'x'), 1000), 0).ok());
  AppendBatches(3);
  StartUplink(/*max_in_flight=*/8);
  ASSERT_TRUE(AwaitStored(5));
  ASSERT_TRUE(AwaitSpoolEmpty());
  EXPECT_THAT(server_.stats().stored_sequences,
              ::testing::ElementsAre(1, 2, 4, 5, 6));
  EXPECT_EQ(server_.stats().refused_batches, 1);
  ExpectExactlyOnce(15);
}

}  // namespace
}  // namespace goodput::agent
