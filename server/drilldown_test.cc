// The drill-down queries against the in-memory store and a FakeClock:
// windows equal the report's --since machinery, errors name what is wrong.
#include "server/drilldown.h"

#include <memory>
#include <string>
#include <vector>

#include "core/testing/random_fleet.h"
#include "core/testing/timeline.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "report/query_proto.h"
#include "storage/memory_event_store.h"

namespace goodput::server {
namespace {

using ::goodput::core::testing::ParseEvents;
using ::goodput::core::testing::T;
using ::goodput::core::testing::Timeline;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::SizeIs;

constexpr int64_t kMinute = 60 * core::kNanosPerSecond;

// llm-7 is preempted and restored; serve-1 never gets chips.
constexpr char kFleet[] = R"(
10:00:00 {"job_id":"llm-7","job_submitted":{"chips":256,"workload":"TRAINING","accelerator":"tpu-v5p","framework":"jax","labels":{"team":"search"}}}
10:02:00 {"job_id":"llm-7","allocation":{"chips":256}}
10:02:01 {"job_id":"llm-7","started":{}}
10:02:01 {"job_id":"llm-7","activity":{"kind":"INIT"}}
10:02:30 {"job_id":"llm-7","activity":{"kind":"TRAINING"}}
10:10:00 {"job_id":"llm-7","step":{"step":100}}
10:20:00 {"job_id":"llm-7","checkpoint":{"step":100}}
10:20:00 {"job_id":"llm-7","step":{"step":200}}
10:31:00 {"job_id":"llm-7","interruption":{"reason":"PREEMPTED"}}
10:40:00 {"job_id":"llm-7","started":{}}
10:40:00 {"job_id":"llm-7","activity":{"kind":"RESTORE","step":100}}
10:45:00 {"job_id":"llm-7","activity":{"kind":"TRAINING"}}
10:55:00 {"job_id":"llm-7","step":{"step":300}}
10:00:00 {"job_id":"serve-1","job_submitted":{"chips":8,"accelerator":"a100","workload":"SERVING"}}
)";

class DrilldownTest : public ::testing::Test {
 protected:
  DrilldownTest() {
    live_ = std::make_unique<LiveState>(&config_, 0, &store_);
    ingestor_ = std::make_unique<Ingestor>(&store_, live_.get(), &clock_,
                                           codec::ValidationLimits());
    EXPECT_TRUE(ingestor_->Recover().ok());
  }

  void Send(const std::vector<v1::Event>& events) {
    v1::Batch batch;
    batch.set_agent_id("agent-1");
    batch.set_sequence(++seq_);
    for (const v1::Event& e : events) *batch.add_events() = e;
    absl::StatusOr<v1::Ack> ack = ingestor_->Ingest(batch);
    ASSERT_TRUE(ack.ok()) << ack.status();
    ASSERT_EQ(ack->rejections_size(), 0) << ack->rejections(0).reason();
  }

  // Job `id` in the report over [since, as_of]; one with no time if the
  // report leaves it out (it ended before the window).
  core::JobReport ReportJob(int64_t as_of, std::optional<int64_t> since,
                            const std::string& id) {
    absl::StatusOr<core::FleetReport> r = ingestor_->Report(as_of, since);
    EXPECT_TRUE(r.ok()) << r.status();
    for (const auto& j : r->jobs) {
      if (j.job_id == id) return j;
    }
    EXPECT_TRUE(since.has_value()) << "no job " << id;
    return {};
  }

  core::Config config_;
  storage::MemoryEventStore store_;
  FakeClock clock_{T("2026-11-22T11:00:00Z")};
  std::unique_ptr<LiveState> live_;
  std::unique_ptr<Ingestor> ingestor_;
  uint64_t seq_ = 0;
};

TEST_F(DrilldownTest, JobsRankedAndFiltered) {
  Send(ParseEvents(Timeline(kFleet)));
  Drilldown d(ingestor_.get(), &store_);
  absl::StatusOr<core::JobsView> all =
      d.Jobs(clock_.NowNanos(), std::nullopt, {});
  ASSERT_TRUE(all.ok()) << all.status();
  ASSERT_THAT(all->jobs, SizeIs(2));
  EXPECT_EQ(all->jobs[0].job_id, "llm-7");  // 256 chips x badput
  core::JobFilter filter;
  filter.segments = {{"workload", "SERVING"}};
  absl::StatusOr<core::JobsView> serving =
      d.Jobs(clock_.NowNanos(), std::nullopt, filter);
  ASSERT_THAT(serving->jobs, SizeIs(1));
  EXPECT_EQ(serving->jobs[0].job_id, "serve-1");
  EXPECT_EQ(serving->jobs[0].state, core::JobStateKind::kQueued);
  filter.segments = {{"colour", "red"}};
  absl::Status bad = d.Jobs(clock_.NowNanos(), std::nullopt, filter).status();
  EXPECT_EQ(bad.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(bad.message()), HasSubstr("'colour'"));
}

// Cluster mode: only the jobs the filter answers for (partitions held).
TEST_F(DrilldownTest, AnswersOnlyForTheJobsItIsToldTo) {
  Send(ParseEvents(Timeline(kFleet)));
  Drilldown d(ingestor_.get(), &store_);
  int made = 0;
  d.set_answers([&made] {
    ++made;
    return [](const std::string& job_id) { return job_id == "serve-1"; };
  });
  absl::StatusOr<core::JobsView> jobs =
      d.Jobs(clock_.NowNanos(), std::nullopt, {});
  ASSERT_TRUE(jobs.ok()) << jobs.status();
  ASSERT_THAT(jobs->jobs, SizeIs(1));
  EXPECT_EQ(jobs->jobs[0].job_id, "serve-1");
  EXPECT_EQ(jobs->matched, 1);
  EXPECT_TRUE(d.Job("serve-1", clock_.NowNanos(), {}, 0).ok());
  absl::StatusOr<core::JobView> other =
      d.Job("llm-7", clock_.NowNanos(), {}, 0);
  EXPECT_TRUE(absl::IsNotFound(other.status())) << other.status();
  EXPECT_THAT(other.status().message(), HasSubstr("another instance"));
  EXPECT_EQ(made, 3);  // one per query
}

// Filtered, the fleet view's totals are those of a server holding only the
// admitted job (the capacity, from heartbeats, stays).
TEST_F(DrilldownTest, FleetOfTheAnsweredJobsEqualsAServerWithOnlyThem) {
  const std::vector<v1::Event> events = ParseEvents(Timeline(kFleet));
  Send(events);
  Drilldown d(ingestor_.get(), &store_);
  d.set_answers(
      [] { return [](const std::string& id) { return id == "llm-7"; }; });
  absl::StatusOr<core::FleetView> got =
      d.Fleet(clock_.NowNanos(), T("2026-11-22T10:30:00Z"), "workload");
  ASSERT_TRUE(got.ok()) << got.status();

  storage::MemoryEventStore store;
  LiveState live(&config_, 0, &store);
  Ingestor only(&store, &live, &clock_, codec::ValidationLimits());
  ASSERT_TRUE(only.Recover().ok());
  v1::Batch batch;
  batch.set_agent_id("agent-1");
  batch.set_sequence(1);
  for (const v1::Event& e : events) {
    if (e.job_id() == "llm-7") *batch.add_events() = e;
  }
  ASSERT_TRUE(only.Ingest(batch).ok());
  absl::StatusOr<core::FleetView> want =
      Drilldown(&only, &store)
          .Fleet(clock_.NowNanos(), T("2026-11-22T10:30:00Z"), "workload");
  ASSERT_TRUE(want.ok()) << want.status();
  EXPECT_EQ(got->fleet.jobs, 1);
  EXPECT_EQ(got->fleet.jobs, want->fleet.jobs);
  EXPECT_DOUBLE_EQ(got->fleet.total_chip_seconds,
                   want->fleet.total_chip_seconds);
  EXPECT_GT(got->fleet.total_chip_seconds, 0);
  for (int c = 0; c < core::kNumCategories; ++c) {
    EXPECT_DOUBLE_EQ(got->fleet.chip_seconds[c], want->fleet.chip_seconds[c])
        << c;
  }
  ASSERT_EQ(got->segments.size(), want->segments.size());
  EXPECT_EQ(got->segments.count("TRAINING"), 1u);
  EXPECT_EQ(got->segments.count("SERVING"), 0u);
  EXPECT_EQ(got->since_ns, want->since_ns);
}

TEST_F(DrilldownTest, JobWindowsEqualTheReportSinceWindow) {
  Send(ParseEvents(Timeline(kFleet)));
  Drilldown d(ingestor_.get(), &store_);
  const int64_t as_of = T("2026-11-22T10:58:30Z");
  absl::StatusOr<core::JobView> view =
      d.Job("llm-7", as_of, DefaultJobWindows(), 0);
  ASSERT_TRUE(view.ok()) << view.status();
  ASSERT_THAT(view->windows, SizeIs(4));
  const int64_t lengths[] = {5 * kMinute, 60 * kMinute, 24 * 60 * kMinute};
  for (int i = 0; i < 3; ++i) {
    const core::JobWindow& w = view->windows[i];
    EXPECT_EQ(w.since_ns, as_of - lengths[i]) << w.name;
    core::JobReport expected = ReportJob(as_of, as_of - lengths[i], "llm-7");
    EXPECT_EQ(w.report.nanos, expected.nanos) << w.name;
    EXPECT_EQ(w.report.total_ns, expected.total_ns) << w.name;
  }
  EXPECT_EQ(view->windows[0].name, "5m");
  EXPECT_EQ(view->windows[0].report.total_ns, 5 * kMinute);
  EXPECT_EQ(view->windows[3].name, "all");
  EXPECT_EQ(view->windows[3].since_ns, std::nullopt);
  EXPECT_EQ(view->job.nanos, ReportJob(as_of, std::nullopt, "llm-7").nanos);
  EXPECT_EQ(view->job.interruptions, 1);
}

TEST_F(DrilldownTest, WindowsOfARandomFleetEqualTheReport) {
  std::vector<v1::Event> events = core::testing::RandomFleet(7, 6, 40);
  clock_.Set(T("2026-11-23T00:00:00Z"));  // after every event
  Send(events);
  Drilldown d(ingestor_.get(), &store_);
  absl::StatusOr<core::FleetReport> all =
      ingestor_->Report(clock_.NowNanos(), std::nullopt);
  ASSERT_TRUE(all.ok());
  for (const core::JobReport& job : all->jobs) {
    const int64_t as_of = clock_.NowNanos();
    auto view = d.Job(job.job_id, as_of, {{"7m", 7 * kMinute}}, 0);
    ASSERT_TRUE(view.ok()) << view.status();
    core::JobReport expected =
        ReportJob(as_of, as_of - 7 * kMinute, job.job_id);
    EXPECT_EQ(view->windows[0].report.nanos, expected.nanos) << job.job_id;
    EXPECT_EQ(view->windows[0].report.at_risk_ns, expected.at_risk_ns);
  }
}

TEST_F(DrilldownTest, UnknownJobIsNotFoundNamingIt) {
  Send(ParseEvents(Timeline(kFleet)));
  Drilldown d(ingestor_.get(), &store_);
  absl::Status s =
      d.Job("nope", clock_.NowNanos(), DefaultJobWindows(), 0).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(s.message()), HasSubstr("job 'nope' not found"));
  // Before its first event, the job does not exist yet.
  s = d.Job("llm-7", T("2026-11-22T09:00:00Z"), {}, 0).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(s.message()), HasSubstr("2026-11-22T09:00:00Z"));
}

// A job whose raw events --retention deleted answers from its snapshot:
// all time as before the deletion, no windows or timeline, and a note.
TEST_F(DrilldownTest, JobDeletedByRetentionAnswersFromItsSnapshot) {
  Send(ParseEvents(Timeline(kFleet)));
  Send(ParseEvents(Timeline(R"(
10:56:00 {"job_id":"llm-7","job_ended":{"outcome":"SUCCEEDED"}}
)")));
  const core::JobReport before =
      ReportJob(clock_.NowNanos(), std::nullopt, "llm-7");
  ingestor_->set_retention(30 * kMinute);
  clock_.Set(T("2026-11-22T12:00:00Z"));
  ASSERT_TRUE(ingestor_->EnforceRetention().ok());
  ASSERT_EQ(ingestor_->stats().retired_jobs, 1);
  std::vector<v1::Event> raw;
  ASSERT_TRUE(store_.ReadJob("llm-7", 0, ~uint64_t{0}, &raw).ok());
  ASSERT_THAT(raw, SizeIs(0));

  Drilldown d(ingestor_.get(), &store_);
  auto view = d.Job("llm-7", clock_.NowNanos(), DefaultJobWindows(), 0);
  ASSERT_TRUE(view.ok()) << view.status();
  EXPECT_EQ(view->job.nanos, before.nanos);
  EXPECT_EQ(view->job.total_ns, before.total_ns);
  EXPECT_EQ(view->job.last_step, before.last_step);
  EXPECT_EQ(view->job.interruptions, 1);
  EXPECT_EQ(view->job.state, core::JobStateKind::kEnded);
  ASSERT_THAT(view->windows, SizeIs(1));
  EXPECT_EQ(view->windows[0].name, "all");
  EXPECT_TRUE(view->timeline.empty());
  EXPECT_EQ(view->note,
            "raw events deleted by --retention=30m; timeline and windows "
            "unavailable");

  absl::Status s = d.Job("llm-7", T("2026-11-22T10:30:00Z"), {}, 0).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(s.message()), HasSubstr("--retention=30m"));
  s = d.Job("llm-7", T("2026-11-22T09:00:00Z"), {}, 0).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
}

TEST_F(DrilldownTest, TimelineKeepsTheLastEntries) {
  Send(ParseEvents(Timeline(kFleet)));
  Drilldown d(ingestor_.get(), &store_);
  absl::StatusOr<core::JobView> full = d.Job("llm-7", clock_.NowNanos(), {}, 0);
  ASSERT_TRUE(full.ok());
  ASSERT_THAT(full->timeline, SizeIs(10));
  EXPECT_EQ(full->timeline[0].what, "QUEUED");
  EXPECT_EQ(full->timeline[5].what, "INTERRUPTED PREEMPTED");
  EXPECT_TRUE(full->timeline.back().ongoing);
  absl::StatusOr<core::JobView> last = d.Job("llm-7", clock_.NowNanos(), {}, 3);
  ASSERT_THAT(last->timeline, SizeIs(3));
  EXPECT_EQ(last->timeline_omitted, 7);
  EXPECT_EQ(last->timeline[0].what, full->timeline[7].what);
}

// Issue 18: a job with one interruption of its own is advised with its
// accelerator's rate (here given: 1 per 8 chip-hours, so M = 1 h at 8
// chips; C 60 s), which the view carries over the wire.
TEST_F(DrilldownTest, JobAdviceBelowThreeInterruptionsUsesTheSegmentRate) {
  Send(ParseEvents(Timeline(R"(
10:00:00 {"job_id":"t","job_submitted":{"chips":8,"workload":"TRAINING","accelerator":"tpu-v5p"}}
10:00:00 {"job_id":"t","allocation":{"chips":8}}
10:00:00 {"job_id":"t","started":{}}
10:00:00 {"job_id":"t","activity":{"kind":"TRAINING"}}
10:10:00 {"job_id":"t","step":{"step":100}}
10:10:00 {"job_id":"t","activity":{"kind":"CHECKPOINT"}}
10:11:00 {"job_id":"t","checkpoint":{"step":100}}
10:11:00 {"job_id":"t","activity":{"kind":"TRAINING"}}
10:20:00 {"job_id":"t","interruption":{"reason":"PREEMPTED"}}
)")));
  Drilldown d(ingestor_.get(), &store_);
  absl::StatusOr<core::JobView> alone = d.Job("t", clock_.NowNanos(), {}, 0);
  ASSERT_TRUE(alone.ok()) << alone.status();
  EXPECT_FALSE(core::JobViewCheckpointAdvice(*alone));
  std::vector<std::string> asked;
  d.set_segment_rate([&asked](const std::string& accelerator) {
    asked.push_back(accelerator);
    return 1.0 / (8 * 3600);
  });
  absl::StatusOr<core::JobView> view = d.Job("t", clock_.NowNanos(), {}, 0);
  ASSERT_TRUE(view.ok()) << view.status();
  EXPECT_THAT(asked, ElementsAre("tpu-v5p"));
  absl::StatusOr<core::JobView> wire =
      report::JobViewFromProto(report::JobViewToProto(*view));
  ASSERT_TRUE(wire.ok()) << wire.status();
  const std::optional<core::CheckpointAdvice> a =
      core::JobViewCheckpointAdvice(*wire);
  ASSERT_TRUE(a);
  EXPECT_TRUE(a->mtbi_from_segment);
  EXPECT_DOUBLE_EQ(a->mtbi_seconds, 3600);
  EXPECT_DOUBLE_EQ(a->save_seconds, 60);
}

TEST_F(DrilldownTest, WindowAfterTheJobEndedHasOnlyItsIdentity) {
  Send(ParseEvents(Timeline(R"(
10:00:00 {"job_id":"done","job_submitted":{"chips":4,"workload":"OTHER"}}
10:01:00 {"job_id":"done","job_ended":{"outcome":"CANCELLED"}}
)")));
  Drilldown d(ingestor_.get(), &store_);
  auto view = d.Job("done", T("2026-11-22T11:00:00Z"), DefaultJobWindows(), 0);
  ASSERT_TRUE(view.ok()) << view.status();
  EXPECT_EQ(view->windows[0].report.total_ns, 0);
  EXPECT_EQ(view->windows[0].report.chips, 4);
  EXPECT_EQ(view->windows[2].report.total_ns, kMinute);  // 24h covers it
  EXPECT_EQ(view->job.state, core::JobStateKind::kEnded);
}

TEST_F(DrilldownTest, FleetByDimension) {
  Send(ParseEvents(Timeline(kFleet)));
  Drilldown d(ingestor_.get(), &store_);
  absl::StatusOr<core::FleetView> view =
      d.Fleet(clock_.NowNanos(), std::nullopt, "workload");
  ASSERT_TRUE(view.ok()) << view.status();
  EXPECT_EQ(view->by, "workload");
  EXPECT_THAT(view->segments, ElementsAre(::testing::Key("SERVING"),
                                          ::testing::Key("TRAINING")));
  EXPECT_EQ(view->fleet.jobs, 2);
  EXPECT_EQ(view->worst_jobs[0].job_id, "llm-7");
  absl::Status bad = d.Fleet(clock_.NowNanos(), std::nullopt, "team").status();
  EXPECT_EQ(bad.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(bad.message()), HasSubstr("'team'"));
}

// A cancelled query stops: the replays behind a window or an as-of in the
// past, and a job's windows.
TEST_F(DrilldownTest, CancelledQueriesStop) {
  Send(ParseEvents(Timeline(kFleet)));
  Drilldown d(ingestor_.get(), &store_);
  auto cancelled = [] { return true; };
  const int64_t past = T("2026-11-22T10:30:00Z");
  EXPECT_EQ(d.Jobs(past, std::nullopt, {}, cancelled).status().code(),
            absl::StatusCode::kCancelled);
  EXPECT_EQ(
      d.Fleet(clock_.NowNanos(), past, "workload", cancelled).status().code(),
      absl::StatusCode::kCancelled);
  EXPECT_EQ(d.Job("llm-7", clock_.NowNanos(), DefaultJobWindows(), 0, cancelled)
                .status()
                .code(),
            absl::StatusCode::kCancelled);
  auto running = [] { return false; };
  EXPECT_TRUE(d.Jobs(past, std::nullopt, {}, running).ok());
}

}  // namespace
}  // namespace goodput::server
