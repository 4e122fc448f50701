// LiveState's own contract, against the in-memory store: reordering within
// the lateness, late events queued for a rebuild and finished, admission
// after job_ended, state records under the policy, and one job's report.
// (The Ingestor's tests cover it through ingest; eviction_test the
// eviction path.)
#include "server/live_state.h"

#include <string>
#include <unordered_map>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/testing/expect.h"
#include "core/testing/timeline.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "storage/memory_event_store.h"

namespace goodput::server {
namespace {

using ::goodput::core::testing::ExpectEqualReports;
using ::goodput::core::testing::ParseEvents;
using ::goodput::core::testing::Replay;
using ::goodput::core::testing::T;
using ::goodput::core::testing::Timeline;
using ::testing::HasSubstr;

constexpr int64_t kLateness = 5'000'000'000;

std::vector<v1::Event> Events(const std::string& timeline) {
  return ParseEvents(Timeline(timeline));
}

class LiveStateTest : public ::testing::Test {
 protected:
  // Stores `events` as one batch, then applies it, as the Ingestor does.
  void Apply(std::vector<v1::Event> events) {
    storage::BatchWrite write;
    write.agent_id = "agent";
    write.sequence = ++sequence_;
    write.accepted = events;
    auto id = store_.Write(write);
    ASSERT_TRUE(id.ok()) << id.status();
    for (const v1::Event& e : events) all_.push_back(e);
    live_.ApplyBatch(*id, &events);
  }
  // Jobs j and k step to 10:10:10 (with `more` in the same batch), then a
  // batch brings each a step at 10:05:00: later than the lateness for both.
  void ApplyTwoJobsThenALateStepOfEach(const std::string& more) {
    Apply(Events(R"(
10:00:00 {"started":{}}
10:00:10 {"step":{"step":1}}
10:10:00 {"step":{"step":3}}
10:10:10 {"step":{"step":4}}
10:00:00 {"job_id":"k","started":{}}
10:00:10 {"job_id":"k","step":{"step":1}}
10:10:00 {"job_id":"k","step":{"step":3}}
10:10:10 {"job_id":"k","step":{"step":4}}
)" + more));
    Apply(Events(R"(
10:05:00 {"step":{"step":2}}
10:05:00 {"job_id":"k","step":{"step":2}}
)"));
  }
  void ExpectEqualsReplay(const std::string& as_of) {
    auto live = live_.Report(T(as_of));
    ASSERT_TRUE(live.ok()) << live.status();
    ExpectEqualReports(*live, Replay(all_, config_, as_of));
  }

  core::Config config_;
  storage::MemoryEventStore store_;
  LiveState live_{&config_, kLateness, &store_};
  std::vector<v1::Event> all_;
  uint64_t sequence_ = 0;
};

TEST_F(LiveStateTest, EventsWithinTheLatenessAreReorderedWithoutARebuild) {
  Apply(Events(R"(
10:00:00 {"started":{}}
10:00:20 {"step":{"step":2}}
)"));
  Apply(Events(R"(
10:00:17 {"step":{"step":1}}
10:01:00 {"step":{"step":3}}
)"));
  EXPECT_EQ(live_.stats().late_rebuilds, 0);
  EXPECT_EQ(live_.stats().rebuilds_pending, 0);
  ExpectEqualsReplay("2026-11-22T10:02:00Z");
}

// ApplyBatch hands back what it is done with, for the Ingestor to destroy
// outside its lock: the batch's own events emptied where it buffered them,
// filled with the buffered events it applied, more appended.
TEST_F(LiveStateTest, ApplyBatchHandsBackTheEventsItApplied) {
  std::vector<v1::Event> first = Events(R"(
10:00:00 {"started":{}}
10:00:02 {"step":{"step":1}}
)");
  live_.ApplyBatch(1, &first);  // both wait out the lateness
  ASSERT_EQ(first.size(), 2u);
  EXPECT_EQ(first[0].ByteSizeLong(), 0u);
  EXPECT_EQ(first[1].ByteSizeLong(), 0u);
  std::vector<v1::Event> second = Events(R"(
10:00:08 {"step":{"step":2}}
)");
  live_.ApplyBatch(2, &second);  // applies the first two, keeps step 2
  ASSERT_EQ(second.size(), 2u);
  EXPECT_TRUE(second[0].has_started()) << second[0].DebugString();
  ASSERT_TRUE(second[1].has_step()) << second[1].DebugString();
  EXPECT_EQ(second[1].step().step(), 1);
  EXPECT_EQ(live_.stats().applied, 2);
}

TEST_F(LiveStateTest, ReportsFollowEventsThatWaitInTheReorderBufferAndNewJobs) {
  Apply(Events(R"(
10:00:00 {"started":{}}
10:00:04 {"step":{"step":2}}
)"));
  // Both wait in the buffer (5 s of lateness); a report applies them to
  // its cached view of the job.
  ExpectEqualsReplay("2026-11-22T10:00:10Z");
  Apply(Events(R"(
10:00:02 {"step":{"step":1}}
10:00:01 {"job_id":"a","started":{}}
)"));  // sorts before step 2: the view is stale; a new job sorts first
  ExpectEqualsReplay("2026-11-22T10:00:10Z");
  ExpectEqualsReplay("2026-11-22T10:00:03Z");  // inside the buffer
}

TEST_F(LiveStateTest, LateEventsAreRebuiltFromTheStoreWithinTheirCredit) {
  ApplyTwoJobsThenALateStepOfEach("");
  // The batch earns a credit of its 2 events; the first rebuild reads the
  // job's stored events (more than 2), so the second job waits.
  EXPECT_EQ(live_.stats().late_rebuilds, 1);
  EXPECT_EQ(live_.stats().rebuilds_pending, 1);
  live_.FinishRebuilds();
  EXPECT_EQ(live_.stats().late_rebuilds, 2);
  EXPECT_EQ(live_.stats().rebuilds_pending, 0);
  ExpectEqualsReplay("2026-11-22T10:20:00Z");
}

// Hand-computed: the late batch earns 2; the first rebuild reads its job's
// 5 stored events at weight 4, so the credit is 2 - 20 = -18. Eighteen
// fresh events bring it to 0 (the second job still waits); one more to 1.
TEST_F(LiveStateTest, ARebuildCostsFourIngestedEventsPerStoredEventRead) {
  ApplyTwoJobsThenALateStepOfEach("");
  ASSERT_EQ(live_.stats().restored_events, 5);
  ASSERT_EQ(live_.stats().rebuilds_pending, 1);
  std::string fresh;
  for (int i = 0; i < 18; ++i) {
    fresh += absl::StrCat("10:11:", 10 + i,
                          " {\"job_id\":\"n\",\"step\":{\"step\":", i, "}}\n");
  }
  Apply(Events(fresh));
  EXPECT_EQ(live_.stats().rebuilds_pending, 1);
  Apply(Events("10:11:30 {\"job_id\":\"n\",\"step\":{\"step\":18}}"));
  EXPECT_EQ(live_.stats().rebuilds_pending, 0);
  EXPECT_EQ(live_.stats().late_rebuilds, 2);
  ExpectEqualsReplay("2026-11-22T10:20:00Z");
}

// The idle-time drain rebuilds while its budget (stored events) lasts.
TEST_F(LiveStateTest, DrainRebuildsSpendsItsBudgetWithoutIngest) {
  ApplyTwoJobsThenALateStepOfEach(R"(
10:00:00 {"job_id":"m","started":{}}
10:10:10 {"job_id":"m","step":{"step":4}}
10:10:20 {"job_id":"m","step":{"step":5}}
)");
  // The credit is 2 - 4 x 5 = -18 after the first rebuild: m's late step
  // (1 more) leaves it queued beside the second job.
  Apply(Events("10:05:00 {\"job_id\":\"m\",\"step\":{\"step\":2}}"));
  ASSERT_EQ(live_.stats().rebuilds_pending, 2);
  EXPECT_EQ(live_.DrainRebuilds(0), 2);  // no budget: nothing
  EXPECT_EQ(live_.DrainRebuilds(1), 1);  // one job (5 or 4 events) spends it
  EXPECT_EQ(live_.DrainRebuilds(5), 0);
  EXPECT_EQ(live_.stats().late_rebuilds, 3);
  ExpectEqualsReplay("2026-11-22T10:20:00Z");
}

TEST_F(LiveStateTest, OneJobsReportIsRebuiltFirstAndAbsentBeforeItsEvents) {
  ApplyTwoJobsThenALateStepOfEach(R"(
10:15:00 {"job_id":"b","started":{}}
)");
  ASSERT_EQ(live_.stats().rebuilds_pending, 1);
  EXPECT_FALSE(
      live_.ReportOne("nobody", T("2026-11-22T10:20:00Z")).value().has_value());
  // b's only event still waits in its reorder buffer, after this as-of.
  EXPECT_FALSE(
      live_.ReportOne("b", T("2026-11-22T10:14:00Z")).value().has_value());
  EXPECT_TRUE(
      live_.ReportOne("b", T("2026-11-22T10:16:00Z")).value().has_value());
  const core::FleetReport replay =
      Replay(all_, config_, "2026-11-22T10:20:00Z");
  for (const core::JobReport& want : replay.jobs) {
    auto one = live_.ReportOne(want.job_id, T("2026-11-22T10:20:00Z"));
    ASSERT_TRUE(one.ok() && one->has_value()) << want.job_id;
    ExpectEqualReports(core::FleetReport{.jobs = {**one}},
                       core::FleetReport{.jobs = {want}});
  }
  EXPECT_EQ(live_.stats().rebuilds_pending, 0);  // the queued job: rebuilt
}

TEST_F(LiveStateTest, ARestartQueuesJobsWhoseNewestRecordALateEventMadeStale) {
  live_.set_state_policy({.every_events = 2, .every_ns = 1LL << 62, .keep = 4});
  Apply(Events(R"(
10:00:00 {"started":{}}
10:00:10 {"step":{"step":1}}
10:10:00 {"step":{"step":3}}
10:10:10 {"step":{"step":4}}
10:00:00 {"job_id":"k","started":{}}
10:00:10 {"job_id":"k","step":{"step":1}}
10:10:00 {"job_id":"k","step":{"step":3}}
10:10:10 {"job_id":"k","step":{"step":4}}
)"));
  std::vector<internal::v1::StoredJobState> put;
  std::vector<std::pair<std::string, uint64_t>> remove;
  live_.TakeJobStates(1, /*all=*/false, &put, &remove);
  ASSERT_EQ(put.size(), 2u);
  ASSERT_TRUE(store_.WriteJobStates(put, remove).ok());
  Apply(Events(R"(
10:05:00 {"step":{"step":2}}
10:05:00 {"job_id":"k","step":{"step":2}}
)"));
  // A kill -9 now: both records sort after a stored late event.
  LiveState restarted(&config_, kLateness, &store_);
  ASSERT_TRUE(restarted.Recover(2).ok());
  EXPECT_EQ(restarted.stats().rebuilds_pending, 2);
  EXPECT_EQ(restarted.stats().restored_events, 0);  // served first
  const int64_t applied = restarted.applied_through_ns();
  restarted.FinishRebuilds();
  EXPECT_EQ(restarted.stats().rebuilds_pending, 0);
  EXPECT_GT(restarted.stats().restored_events, 0);
  EXPECT_EQ(restarted.applied_through_ns(), applied);
  auto report = restarted.Report(T("2026-11-22T10:20:00Z"));
  ASSERT_TRUE(report.ok()) << report.status();
  ExpectEqualReports(*report, Replay(all_, config_, "2026-11-22T10:20:00Z"));
}

// Exclusions (docs/semantics.md): a JOB exclusion later than the lateness
// rewrites history by a rebuild, one alone makes no job, and HOSTS and
// FLEET ones are admitted (shared_exclusions_test has their timelines).
TEST_F(LiveStateTest, ALateExclusionIsRebuiltAndEqualsReplay) {
  Apply(Events(R"(
10:00:00 {"started":{}}
10:00:00 {"activity":{"kind":"TRAINING"}}
10:00:10 {"step":{"step":1}}
10:10:00 {"step":{"step":2}}
10:10:10 {"step":{"step":3}}
09:59:00 {"job_id":"only","exclusion":{"until":"2026-11-22T10:30:00Z","reason":"r","scope":"JOB"}}
)"));
  Apply(Events(R"(
10:02:00 {"exclusion":{"until":"2026-11-22T10:05:00Z","reason":"maintenance","scope":"JOB"}}
)"));
  live_.FinishRebuilds();
  EXPECT_EQ(live_.stats().late_rebuilds, 1);
  ExpectEqualsReplay("2026-11-22T10:20:00Z");
  auto report = live_.Report(T("2026-11-22T10:20:00Z"));
  ASSERT_TRUE(report.ok());
  ASSERT_EQ(report->jobs.size(), 1u);  // not "only"
  EXPECT_EQ(report->jobs[0].nanos[core::Index(core::Category::kExcluded)],
            T("2026-11-22T10:05:00Z") - T("2026-11-22T10:02:00Z"));
  EXPECT_FALSE(
      live_.ReportOne("only", T("2026-11-22T10:20:00Z")).value().has_value());
  std::unordered_map<std::string, int64_t> ended_in_batch;
  bool held = true;
  absl::Status s = live_.Admit(Events(R"(
10:20:00 {"exclusion":{"until":"2026-11-22T10:30:00Z","reason":"r","scope":"FLEET"}}
)")[0],
                               &ended_in_batch, &held);
  EXPECT_TRUE(s.ok()) << s;
  EXPECT_TRUE(ended_in_batch.empty());  // no job looked up
  EXPECT_FALSE(held);
}

TEST_F(LiveStateTest, NothingIsAdmittedAfterItsJobEnded) {
  Apply(Events(R"(
10:00:00 {"started":{}}
10:00:20 {"job_ended":{"outcome":"SUCCEEDED"}}
)"));
  std::unordered_map<std::string, int64_t> ended_in_batch;
  const v1::Event late = Events(R"(
10:00:30 {"step":{"step":1}}
)")[0];
  bool held = false;
  absl::Status s = live_.Admit(late, &ended_in_batch, &held);
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(s.message()), HasSubstr("ended"));
  EXPECT_TRUE(held);  // its job is in memory
  // Within one batch: a job_ended admitted first refuses what follows it.
  const std::vector<v1::Event> batch = Events(R"(
10:00:00 {"job_id":"k","started":{}}
10:00:05 {"job_id":"k","job_ended":{"outcome":"FAILED"}}
10:00:06 {"job_id":"k","step":{"step":1}}
)");
  ended_in_batch.clear();
  EXPECT_TRUE(live_.Admit(batch[0], &ended_in_batch, &held).ok());
  EXPECT_FALSE(held);  // a new job
  EXPECT_TRUE(live_.Admit(batch[1], &ended_in_batch, &held).ok());
  EXPECT_EQ(live_.Admit(batch[2], &ended_in_batch, &held).code(),
            absl::StatusCode::kFailedPrecondition);
}

TEST_F(LiveStateTest, StateRecordsFollowThePolicy) {
  // Every 3 applied events of a job; the time rule never fires here.
  live_.set_state_policy({.every_events = 3, .every_ns = 1LL << 62, .keep = 2});
  // Applied (5 s of lateness per job): j's first three, other's first one.
  Apply(Events(R"(
10:00:00 {"started":{}}
10:00:10 {"step":{"step":1}}
10:00:20 {"step":{"step":2}}
10:00:30 {"step":{"step":3}}
10:00:00 {"job_id":"other","started":{}}
10:00:10 {"job_id":"other","step":{"step":1}}
)"));
  std::vector<internal::v1::StoredJobState> put;
  std::vector<std::pair<std::string, uint64_t>> remove;
  live_.TakeJobStates(1, /*all=*/false, &put, &remove);
  ASSERT_EQ(put.size(), 1u);  // j is due, other is not
  EXPECT_EQ(put[0].job_id(), "j");
  EXPECT_EQ(put[0].applied_events(), 3);
  EXPECT_EQ(put[0].through_batch(), 1u);
  put.clear();
  // All (a graceful shutdown): every job with something new since its last
  // record, so other but not j again.
  live_.TakeJobStates(1, /*all=*/true, &put, &remove);
  ASSERT_EQ(put.size(), 1u);
  EXPECT_EQ(put[0].job_id(), "other");
  EXPECT_EQ(live_.stats().states_taken, 2);
  EXPECT_TRUE(remove.empty());
}

// Reports list every held job once, in id order, while jobs come and leave
// between them (LiveState keeps the held jobs in id order as they come and
// leave; a walk takes them from there). Each round adds
// three jobs, in an order unlike their ids, and ends one; ended jobs leave
// memory (grace 0).
TEST_F(LiveStateTest, ReportsFollowJobsThatComeAndLeave) {
  for (int round = 0; round < 12; ++round) {
    std::string batch;
    for (int k : {2, 0, 1}) {
      const std::string id =
          absl::StrCat("j", (round * 7 + k * 5) % 40, "-", round);
      const std::string at = absl::StrFormat("10:%02d:00", round);
      batch +=
          absl::StrCat(at, R"( {"job_id":")", id, R"(","started":{}})", "\n");
      if (k == 0) {
        batch +=
            absl::StrFormat("10:%02d:10", round) +
            absl::StrCat(R"( {"job_id":")", id,
                         R"(","job_ended":{"outcome":"SUCCEEDED"}})", "\n");
      }
    }
    Apply(Events(batch));
    // No reports in rounds 2-6: more jobs come and leave between two
    // reports than are held, some of them never merged.
    if (round < 2 || round > 6) {
      ExpectEqualsReplay(absl::StrFormat("2026-11-22T10:%02d:30Z", round));
    }
    auto due = live_.PlanEviction(0, sequence_);
    ASSERT_TRUE(due.ok()) << due.status();
    ASSERT_TRUE(store_.EvictJobs(due->snapshots, due->record).ok());
    live_.Evict(*std::move(due));
  }
  ExpectEqualsReplay("2026-11-22T10:11:30Z");
  EXPECT_GT(live_.evicted_totals().jobs(), 0);
}

}  // namespace
}  // namespace goodput::server
