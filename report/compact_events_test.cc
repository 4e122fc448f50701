#include "report/compact_events.h"

#include <cstdint>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"

namespace goodput::report {
namespace {

using ::google::protobuf::util::MessageDifferencer;
using ::testing::ElementsAre;

constexpr int64_t kTen = 1795341600;  // 2026-11-22T10:00:00Z, in seconds

v1::Event At(const std::string& job, int64_t seconds, int32_t nanos = 0) {
  v1::Event e;
  e.mutable_time()->set_seconds(kTen + seconds);
  e.mutable_time()->set_nanos(nanos);
  e.set_job_id(job);
  return e;
}

v1::Event Step(const std::string& job, int64_t seconds, int64_t step) {
  v1::Event e = At(job, seconds);
  e.mutable_step()->set_step(step);
  return e;
}

v1::Event Beat(const std::string& host, int64_t seconds) {
  v1::Event e = At("", seconds);
  e.set_host(host);
  e.mutable_heartbeat()->set_chips(4);
  return e;
}

TEST(CompactEventsTest, GetGivesBackEveryFieldOfAStep) {
  v1::Event e = At("job", 5, 250);
  e.set_host("h7");
  e.set_attempt("2");
  v1::Step* s = e.mutable_step();
  s->set_step(-3);
  s->set_flops(1.5e17);
  s->set_bytes(2.25);
  s->set_input_wait_seconds(0.125);
  s->set_idle_seconds(7);
  CompactEvents events;
  ASSERT_TRUE(events.Add(Step("other", 1, 1), 0, 1).ok());
  ASSERT_TRUE(events.Add(e, 3, 9).ok());
  EXPECT_TRUE(MessageDifferencer::Equals(events.Get(1), e))
      << events.Get(1).DebugString();
  EXPECT_EQ(events.input(1), 3u);
  EXPECT_EQ(events.line(1), 9);
  EXPECT_EQ(events.time_ns(1), (kTen + 5) * 1'000'000'000 + 250);
  EXPECT_EQ(events.Get(0).job_id(), "other");
  EXPECT_EQ(events.Get(0).host(), "");
}

TEST(CompactEventsTest, GetGivesBackOtherKindsWhole) {
  v1::Event e = At("job", 0);
  e.set_attempt("1");
  v1::JobSubmitted* s = e.mutable_job_submitted();
  s->set_chips(16);
  s->set_accelerator("tpu-v5p");
  (*s->mutable_labels())["team"] = "ads";
  s->set_min_chips(8);
  CompactEvents events;
  ASSERT_TRUE(events.Add(e, 0, 1).ok());
  ASSERT_TRUE(events.Add(Beat("h1", 3), 0, 2).ok());
  EXPECT_TRUE(MessageDifferencer::Equals(events.Get(0), e));
  EXPECT_TRUE(MessageDifferencer::Equals(events.Get(1), Beat("h1", 3)));
}

TEST(CompactEventsTest, ManyEventsSpanChunks) {
  constexpr int kEvents = 150'000;  // more than two 4 MiB chunks
  CompactEvents events;
  for (int i = 0; i < kEvents; ++i) {
    ASSERT_TRUE(
        events.Add(Step("j" + std::to_string(i % 7), i, i), 1, i + 1).ok());
  }
  ASSERT_EQ(events.size(), static_cast<size_t>(kEvents));
  for (int i : {0, 58'253, 58'254, 116'508, kEvents - 1}) {
    EXPECT_EQ(events.Get(i).step().step(), i);
    EXPECT_EQ(events.Get(i).job_id(), "j" + std::to_string(i % 7));
    EXPECT_EQ(events.line(i), i + 1);
  }
}

TEST(CompactEventsTest, ApplyOrderGroupsJobsAndSortsEachByTimeKindInput) {
  CompactEvents events;
  v1::Event checkpoint = At("a", 10);
  checkpoint.mutable_checkpoint()->set_step(1);
  const std::vector<v1::Event> in = {
      checkpoint,         // 0: a at 10, rank 3
      Step("b", 5, 1),    // 1: b at 5
      Beat("h2", 7),      // 2
      Step("a", 10, 1),   // 3: a at 10, rank 2: before 0
      Step("a", 2, 0),    // 4: a at 2
      Beat("h1", 1),      // 5
      Step("b", 5, 1),    // 6: b at 5 again: after 1
      Step("a", 99, 2)};  // 7: after as-of
  for (size_t i = 0; i < in.size(); ++i) {
    ASSERT_TRUE(events.Add(in[i], 0, i + 1).ok());
  }
  int64_t after = -1;
  std::vector<uint32_t> order =
      events.ApplyOrder((kTen + 50) * 1'000'000'000, &after);
  // Heartbeats (group 0) first, then a, then b: ids in order of first use.
  EXPECT_THAT(order, ElementsAre(5, 2, 4, 3, 0, 1, 6));
  EXPECT_EQ(after, 1);
}

TEST(CompactEventsTest, RejectsPositionsARecordCannotHold) {
  CompactEvents events;
  EXPECT_TRUE(events.Add(Step("a", 1, 1), 65'535, 4'294'967'295).ok());
  EXPECT_EQ(events.Add(Step("a", 1, 1), 65'536, 1).code(),
            absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(events.Add(Step("a", 1, 1), 0, 4'294'967'296).code(),
            absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(events.size(), 1u);
}

}  // namespace
}  // namespace goodput::report
