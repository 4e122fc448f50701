#include "report/compact_events.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
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

struct Applied {
  v1::Event event;
  uint32_t input;
  int64_t line;
};

// Every event at or before `as_of_ns`, in apply order; `*after` counts the
// others.
std::vector<Applied> InApplyOrder(
    CompactEvents& events,
    int64_t as_of_ns = std::numeric_limits<int64_t>::max(),
    int64_t* after = nullptr) {
  std::vector<Applied> out;
  const int64_t left_out = events.ForEachInApplyOrder(
      as_of_ns, [&](const v1::Event& e, uint32_t input, int64_t line) {
        out.push_back({e, input, line});
      });
  if (after != nullptr) *after = left_out;
  return out;
}

std::vector<int64_t> Lines(const std::vector<Applied>& applied) {
  std::vector<int64_t> lines;
  for (const Applied& a : applied) lines.push_back(a.line);
  return lines;
}

TEST(CompactEventsTest, GivesBackEveryFieldOfAStep) {
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
  const std::vector<Applied> applied = InApplyOrder(events);
  ASSERT_EQ(applied.size(), 2u);
  EXPECT_EQ(applied[0].event.job_id(), "other");
  EXPECT_EQ(applied[0].event.host(), "");
  EXPECT_TRUE(MessageDifferencer::Equals(applied[1].event, e))
      << applied[1].event.DebugString();
  EXPECT_EQ(applied[1].input, 3u);
  EXPECT_EQ(applied[1].line, 9);
  EXPECT_EQ(events.LatestTimeNanos(), (kTen + 5) * 1'000'000'000 + 250);
}

TEST(CompactEventsTest, AStepWithoutAmountsAfterOneWithThemHasNone) {
  v1::Event first = Step("job", 1, 1);
  first.mutable_step()->set_idle_seconds(-0.0);  // kept bit for bit
  CompactEvents events;
  ASSERT_TRUE(events.Add(first, 0, 1).ok());
  ASSERT_TRUE(events.Add(Step("job", 2, 2), 0, 2).ok());
  const std::vector<Applied> applied = InApplyOrder(events);
  ASSERT_EQ(applied.size(), 2u);
  EXPECT_TRUE(std::signbit(applied[0].event.step().idle_seconds()));
  EXPECT_TRUE(MessageDifferencer::Equals(applied[1].event, Step("job", 2, 2)))
      << applied[1].event.DebugString();
}

TEST(CompactEventsTest, StepTimesBefore1970AndFarFromItComeBackExactly) {
  v1::Event before = Step("job", 0, 1);
  before.mutable_time()->set_seconds(-1);
  before.mutable_time()->set_nanos(5);
  v1::Event far = Step("job", 0, 2);
  far.mutable_time()->set_seconds(253'402'300'799);  // 9999-12-31T23:59:59Z
  far.mutable_time()->set_nanos(999'999'999);
  v1::Event early = Step("job", 0, 3);
  early.mutable_time()->set_seconds(-9'500'000'000);  // year 1668
  CompactEvents events;
  ASSERT_TRUE(events.Add(before, 0, 1).ok());
  ASSERT_TRUE(events.Add(far, 0, 2).ok());
  ASSERT_TRUE(events.Add(early, 0, 3).ok());
  const std::vector<Applied> applied =
      InApplyOrder(events, std::numeric_limits<int64_t>::max());
  ASSERT_EQ(applied.size(), 3u);
  for (const Applied& a : applied) {
    const v1::Event& want = a.line == 1 ? before : a.line == 2 ? far : early;
    EXPECT_TRUE(MessageDifferencer::Equals(a.event, want))
        << a.event.DebugString();
  }
}

TEST(CompactEventsTest, HostsAndAttemptsComeBackAsTheyChange) {
  const std::vector<std::pair<std::string, std::string>> origins = {
      {"h1", "1"}, {"", "1"}, {"", ""}, {"h1", ""}, {"h2", "2"}, {"h2", "2"}};
  CompactEvents events;
  for (size_t i = 0; i < origins.size(); ++i) {
    v1::Event e = Step(i % 2 == 0 ? "a" : "b", i, i);
    e.set_host(origins[i].first);
    e.set_attempt(origins[i].second);
    ASSERT_TRUE(events.Add(e, 0, i + 1).ok());
  }
  for (const Applied& a : InApplyOrder(events)) {
    EXPECT_EQ(a.event.host(), origins[a.line - 1].first) << a.line;
    EXPECT_EQ(a.event.attempt(), origins[a.line - 1].second) << a.line;
    EXPECT_EQ(a.event.job_id(), a.line % 2 == 1 ? "a" : "b") << a.line;
  }
}

TEST(CompactEventsTest, GivesBackOtherKindsWhole) {
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
  const std::vector<Applied> applied = InApplyOrder(events);
  ASSERT_EQ(applied.size(), 2u);
  EXPECT_TRUE(MessageDifferencer::Equals(applied[0].event, Beat("h1", 3)));
  EXPECT_TRUE(MessageDifferencer::Equals(applied[1].event, e));
}

TEST(CompactEventsTest, ManyEventsSpanBlocksAndChunks) {
  constexpr int kEvents = 150'000;  // more than two 4 MiB chunks
  CompactEvents events;
  for (int i = 0; i < kEvents; ++i) {
    ASSERT_TRUE(
        events.Add(Step("j" + std::to_string(i % 7), i, i), 1, i + 1).ok());
  }
  ASSERT_EQ(events.size(), static_cast<size_t>(kEvents));
  const std::vector<Applied> applied = InApplyOrder(events);
  ASSERT_EQ(applied.size(), static_cast<size_t>(kEvents));
  size_t k = 0;  // job by job, each in addition order
  for (int job = 0; job < 7; ++job) {
    for (int i = job; i < kEvents; i += 7, ++k) {
      ASSERT_EQ(applied[k].event.step().step(), i);
      ASSERT_EQ(applied[k].event.job_id(), "j" + std::to_string(job));
      ASSERT_EQ(applied[k].line, i + 1);
    }
  }
}

TEST(CompactEventsTest, ApplyOrderGroupsJobsAndSortsEachByTimeKindInput) {
  CompactEvents events;
  v1::Event checkpoint = At("a", 10);
  checkpoint.mutable_checkpoint()->set_step(1);
  const std::vector<v1::Event> in = {
      checkpoint,         // line 1: a at 10, rank 3
      Step("b", 5, 1),    // 2: b at 5
      Beat("h2", 7),      // 3
      Step("a", 10, 1),   // 4: a at 10, rank 2: before 1
      Step("a", 2, 0),    // 5: a at 2
      Beat("h1", 1),      // 6
      Step("b", 5, 1),    // 7: b at 5 again: after 2
      Step("a", 99, 2)};  // 8: after as-of
  for (size_t i = 0; i < in.size(); ++i) {
    ASSERT_TRUE(events.Add(in[i], 0, i + 1).ok());
  }
  int64_t after = -1;
  const std::vector<Applied> applied =
      InApplyOrder(events, (kTen + 50) * 1'000'000'000, &after);
  // Heartbeats (group 0) first, then a, then b: ids in order of first use.
  EXPECT_THAT(Lines(applied), ElementsAre(6, 3, 5, 4, 1, 2, 7));
  EXPECT_EQ(after, 1);
  EXPECT_EQ(events.LatestTimeNanos(), (kTen + 99) * 1'000'000'000);
}

// AddStep(s) is Add(PlainStepToEvent(s)): the same events back, in the
// same order (job, host and attempt interned in Add's order), far times
// and positions included.
TEST(CompactEventsTest, AddStepIsAddOfTheStepsEvent) {
  std::vector<codec::PlainStep> steps = {
      {kTen + 5, 250, "a", "b", "1", 7},
      {kTen + 1, 0, "b", "", "", 1},  // "b" is a host above, now a job
      {-1, 5, "a", "h", "", 2},
      {253'402'300'799, 999'999'999, "c", "", "2", 3},  // year 9999
      {kTen + 5, 250, "a", "b", "1", 7}};
  v1::Event checkpoint = At("c", 4);
  checkpoint.mutable_checkpoint()->set_step(3);
  CompactEvents by_event, by_step;
  for (size_t i = 0; i < steps.size(); ++i) {
    v1::Event e;
    codec::PlainStepToEvent(steps[i], &e);
    ASSERT_TRUE(by_event.Add(e, i % 2, i + 1).ok());
    ASSERT_TRUE(by_step.AddStep(steps[i], i % 2, i + 1).ok());
    ASSERT_TRUE(by_event.Add(checkpoint, 2, 100 + i).ok());
    ASSERT_TRUE(by_step.Add(checkpoint, 2, 100 + i).ok());
  }
  EXPECT_EQ(by_step.LatestTimeNanos(), by_event.LatestTimeNanos());
  const std::vector<Applied> want = InApplyOrder(by_event);
  const std::vector<Applied> got = InApplyOrder(by_step);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_TRUE(MessageDifferencer::Equals(got[i].event, want[i].event))
        << i << ": " << got[i].event.DebugString();
    EXPECT_EQ(got[i].input, want[i].input) << i;
    EXPECT_EQ(got[i].line, want[i].line) << i;
  }
  EXPECT_EQ(by_step.AddStep(steps[0], 65'536, 1).code(),
            absl::StatusCode::kResourceExhausted);
}

TEST(CompactEventsTest, NoEventsHaveLatestTimeZero) {
  CompactEvents events;
  EXPECT_EQ(events.LatestTimeNanos(), 0);
  EXPECT_TRUE(InApplyOrder(events).empty());
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
