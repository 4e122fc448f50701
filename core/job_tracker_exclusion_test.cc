// Exclusions (docs/semantics.md, "Exclusions"): one hand-computed timeline
// per decision: excluded time is its own category left out of every ratio;
// a step in flight keeps only its time outside; an attempt ending inside
// loses only its counted in-flight time; the hang clock stops; windows
// clip excluded time; a late exclusion rewrites history (rule 8);
// overlapping exclusions count once; HOSTS and FLEET scopes reach every
// job they cover; counters and snapshots.
// Times are on 2026-11-22 (UTC); the job is "j"; stall_after is 600 s.
#include <string>
#include <vector>

#include "core/event_order.h"
#include "core/fleet_tracker.h"
#include "core/job_tracker.h"
#include "core/testing/expect.h"
#include "core/testing/timeline.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"

namespace goodput::core {
namespace {

using ::goodput::core::testing::ExpectSeconds;
using ::goodput::core::testing::Job;
using ::goodput::core::testing::ParseEvents;
using ::goodput::core::testing::Replay;
using ::goodput::core::testing::T;
using ::goodput::core::testing::Timeline;

int64_t At(const std::string& hms) { return T("2026-11-22T" + hms + "Z"); }

// An exclusion body from `hms` until `until` of `scope` (JOB by default).
std::string Exclusion(const std::string& until,
                      const std::string& scope = "JOB",
                      const std::string& extra = "") {
  return R"({"exclusion":{"until":"2026-11-22T)" + until +
         R"(Z","reason":"planned maintenance","scope":")" + scope + "\"" +
         extra + "}}";
}

class ExclusionTest : public ::testing::Test {
 protected:
  JobReport Run(const std::string& text, const std::string& as_of) {
    report_ = Replay(ParseEvents(Timeline(text)), config_, At(as_of));
    return Job(report_, "j");
  }

  // The events of `text` applied in apply order to one tracker.
  JobTracker Track(const std::string& text) {
    const std::vector<v1::Event> events = ParseEvents(Timeline(text));
    std::vector<uint32_t> order(events.size());
    for (uint32_t i = 0; i < order.size(); ++i) order[i] = i;
    SortForApply(events, &order);
    JobTracker t("j", &config_);
    for (uint32_t i : order) EXPECT_TRUE(t.Apply(events[i]).ok());
    return t;
  }

  Config config_;
  FleetReport report_;
};

// Queued 10 s, INIT 10 s, excluded 20 -> 40 (TRAINING from 30 inside it),
// the first step's counted time 40 -> 60.
const std::string kMaintenance = R"(
10:00:00 {"job_submitted":{"chips":8}}
10:00:10 {"allocation":{"chips":8}}
10:00:10 {"started":{}}
10:00:10 {"activity":{"kind":"INIT"}}
10:00:20 )" + Exclusion("10:00:40") +
                                 R"(
10:00:30 {"activity":{"kind":"TRAINING"}}
10:01:00 {"step":{"step":1}}
)";

TEST_F(ExclusionTest, ExcludedTimeIsItsOwnCategoryLeftOutOfEveryRatio) {
  JobReport j = Run(kMaintenance, "10:01:00");
  ExpectSeconds(
      j, 60,
      {{"queued", 10}, {"init", 10}, {"excluded", 20}, {"productive", 20}});
  // Of the 40 counted seconds: SG = 1 - 10/40, RG = 20/30, goodput 20/40.
  const Ratios r = JobRatios(j);
  EXPECT_DOUBLE_EQ(*r.sg, 0.75);
  EXPECT_DOUBLE_EQ(*r.rg, 20.0 / 30.0);
  EXPECT_DOUBLE_EQ(*r.goodput, 0.5);
  // The fleet's chip-weighted ratios leave it out the same way.
  EXPECT_DOUBLE_EQ(report_.fleet.chip_seconds[Index(Category::kExcluded)], 160);
  const Ratios f = ComputeRatios(report_.fleet).ratios;
  EXPECT_DOUBLE_EQ(*f.sg, 0.75);
  EXPECT_DOUBLE_EQ(*f.rg, 20.0 / 30.0);
  EXPECT_DOUBLE_EQ(*f.goodput, 0.5);
}

// Steps of 10 s; step 3 is in flight 20 -> 40 with 25 -> 35 excluded.
const std::string kSteps = R"(
10:00:00 {"job_submitted":{"chips":8}}
10:00:00 {"allocation":{"chips":8}}
10:00:00 {"started":{}}
10:00:00 {"activity":{"kind":"TRAINING"}}
10:00:10 {"step":{"step":1}}
10:00:20 {"step":{"step":2}}
)";

TEST_F(ExclusionTest, AStepInFlightAcrossAnExclusionKeepsItsTimeOutsideIt) {
  const std::string text = kSteps + "10:00:25 " + Exclusion("10:00:35") +
                           "\n10:00:40 {\"step\":{\"step\":3}}\n";
  // Step 3's time is 5 + 5 = 10 s, like the others.
  ExpectSeconds(Run(text, "10:00:40"), 40,
                {{"productive", 30}, {"excluded", 10}});
  // In flight inside the exclusion: 5 s of it so far.
  JobReport mid = Run(text, "10:00:30");
  ExpectSeconds(mid, 30, {{"productive", 25}, {"excluded", 5}});
}

TEST_F(ExclusionTest, AnAttemptEndingInsideAnExclusionLosesOnlyCountedTime) {
  JobReport j = Run(kSteps + "10:00:25 " + Exclusion("10:00:45") + R"(
10:00:30 {"interruption":{"reason":"MAINTENANCE"}}
10:00:50 {"started":{}}
10:00:50 {"activity":{"kind":"TRAINING"}}
10:01:00 {"step":{"step":3}}
)",
                    "10:01:00");
  // In flight 20 -> 25 lost; 25 -> 45 excluded (the interruption inside
  // it); recovery 45 -> 50; steps 1 to 3 productive (resumed from 2).
  ExpectSeconds(
      j, 60,
      {{"productive", 30}, {"lost", 5}, {"excluded", 20}, {"recovery", 5}});
  EXPECT_EQ(j.interruptions, 1);
  EXPECT_EQ(j.lost_steps, 0);
}

TEST_F(ExclusionTest, TheHangClockStopsDuringAnExclusion) {
  const std::string text = R"(
10:00:00 {"job_submitted":{"chips":8}}
10:00:00 {"started":{}}
10:00:00 {"activity":{"kind":"TRAINING"}}
10:01:00 )" + Exclusion("11:00:00") +
                           "\n";
  // 60 s before and 120 s after the hour are 180 s of step time, under
  // stall_after (600 s): no hang.
  ExpectSeconds(Run(text + "11:02:00 {\"step\":{\"step\":1}}\n", "11:02:00"),
                3720, {{"productive", 180}, {"excluded", 3540}});
  // 60 + 720 s: the hang starts after 600 counted seconds, at 11:09.
  ExpectSeconds(Run(text + "11:12:00 {\"step\":{\"step\":1}}\n", "11:12:00"),
                4320, {{"productive", 600}, {"idle", 180}, {"excluded", 3540}});
}

TEST_F(ExclusionTest, WindowsClipExcludedTime) {
  config_.since_ns = At("10:00:30");
  JobReport j = Run(kMaintenance, "10:01:00");
  ExpectSeconds(j, 30, {{"excluded", 10}, {"productive", 20}});
  EXPECT_DOUBLE_EQ(*JobRatios(j).sg, 1.0);
  EXPECT_DOUBLE_EQ(*JobRatios(j).rg, 1.0);
  // A window wholly inside the exclusion has no counted time: no ratios.
  config_.since_ns = At("10:00:25");
  JobReport inside = Run(kMaintenance, "10:00:35");
  ExpectSeconds(inside, 10, {{"excluded", 10}});
  EXPECT_FALSE(JobRatios(inside).sg.has_value());
  EXPECT_FALSE(JobRatios(inside).goodput.has_value());
}

TEST_F(ExclusionTest, ALateExclusionRewritesHistoryLikeALateEvent) {
  // Sent after the step it covers: replay applies it at its time.
  const std::string late = R"(
10:00:00 {"job_submitted":{"chips":8}}
10:00:10 {"allocation":{"chips":8}}
10:00:10 {"started":{}}
10:00:10 {"activity":{"kind":"INIT"}}
10:00:30 {"activity":{"kind":"TRAINING"}}
10:01:00 {"step":{"step":1}}
10:00:20 )" + Exclusion("10:00:40") +
                           "\n";
  ExpectSeconds(
      Run(late, "10:01:00"), 60,
      {{"queued", 10}, {"init", 10}, {"excluded", 20}, {"productive", 20}});
  // A tracker that attributed past its start refuses it, changing nothing
  // (the live state replays the job from the store instead).
  std::vector<v1::Event> events = ParseEvents(Timeline(late));
  JobTracker t("j", &config_);
  for (size_t i = 0; i + 1 < events.size(); ++i) {
    ASSERT_TRUE(t.Apply(events[i]).ok());
  }
  absl::StatusOr<ApplyResult> r = t.Apply(events.back());
  EXPECT_TRUE(absl::IsFailedPrecondition(r.status())) << r.status();
  EXPECT_EQ(t.Exclude(At("10:00:20"), At("10:00:40")).code(),
            absl::StatusCode::kFailedPrecondition);
  ExpectSeconds(t.Report(At("10:01:00")), 60,
                {{"queued", 10}, {"init", 20}, {"productive", 30}});
}

TEST_F(ExclusionTest, OverlappingExclusionsExcludeTheirTimeOnce) {
  JobReport j = Run(R"(
10:00:00 {"job_submitted":{"chips":8}}
10:00:00 {"started":{}}
10:00:00 {"activity":{"kind":"INIT"}}
10:00:10 )" + Exclusion("10:00:30") +
                        "\n10:00:20 " + Exclusion("10:00:40") + "\n10:00:35 " +
                        Exclusion("10:00:45", "FLEET") + "\n",
                    "10:01:00");
  // 10 -> 45 once: 35 s, not 20 + 20 + 10.
  ExpectSeconds(j, 60, {{"init", 25}, {"excluded", 35}});
}

TEST_F(ExclusionTest, HostAndFleetExclusionsReachEveryJobTheyCover) {
  report_ = Replay(ParseEvents(Timeline(R"(
09:59:00 {"job_id":"e","exclusion":{"until":"2026-11-22T10:00:05Z","reason":"r","scope":"JOB"}}
09:59:30 {"job_id":"d","exclusion":{"until":"2026-11-22T10:00:05Z","reason":"r","scope":"JOB"}}
10:00:00 {"job_id":"a","host":"h1","job_submitted":{"chips":4}}
10:00:00 {"job_id":"a","host":"h1","started":{}}
10:00:00 {"job_id":"a","host":"h1","activity":{"kind":"INIT"}}
10:00:00 {"job_id":"b","host":"h2","job_submitted":{"chips":4}}
10:00:00 {"job_id":"b","host":"h2","started":{}}
10:00:00 {"job_id":"b","host":"h2","activity":{"kind":"INIT"}}
10:00:00 {"job_id":"e","host":"h2","job_submitted":{"chips":4}}
10:00:00 {"job_id":"e","host":"h2","started":{}}
10:00:00 {"job_id":"e","host":"h2","activity":{"kind":"INIT"}}
10:00:10 {"host":"ops","exclusion":{"until":"2026-11-22T10:00:20Z","reason":"rack","scope":"HOSTS","hosts":["h1","h9"]}}
10:00:30 {"exclusion":{"until":"2026-11-22T10:00:50Z","reason":"incident","scope":"FLEET"}}
10:00:40 {"job_id":"c","host":"h3","job_submitted":{"chips":4}}
10:00:40 {"job_id":"c","host":"h3","started":{}}
10:00:40 {"job_id":"c","host":"h3","activity":{"kind":"INIT"}}
)")),
                   config_, At("10:01:00"));
  // a (on h1): the host's 10 s and the fleet's 20 s.
  ExpectSeconds(Job(report_, "a"), 60, {{"init", 30}, {"excluded", 30}});
  // b (on h2): the fleet's 20 s only.
  ExpectSeconds(Job(report_, "b"), 60, {{"init", 40}, {"excluded", 20}});
  // c (first event at 40, inside the fleet exclusion): 40 -> 50.
  ExpectSeconds(Job(report_, "c"), 20, {{"init", 10}, {"excluded", 10}});
  // e: its own exclusion, sent before its first event, covers 0 -> 5 of
  // its life, plus the fleet's 20 s.
  ExpectSeconds(Job(report_, "e"), 60, {{"init", 35}, {"excluded", 25}});
  // d had only an exclusion: no job.
  EXPECT_EQ(report_.jobs.size(), 4u);
  EXPECT_DOUBLE_EQ(report_.fleet.chip_seconds[Index(Category::kExcluded)],
                   4 * (30 + 20 + 10 + 25));
}

// sg_capacity leaves excluded time out of both sides: a and b (4 chips
// each, on h1 and h2 of 4 chips) are all-allocated for 60 s; HOSTS h1
// excludes 10 -> 20 and FLEET 30 -> 50. Counted allocated chip-seconds:
// a 4 x 30 and b 4 x 40; capacity: h1 4 x 30 and h2 4 x 40. So 280 / 280,
// where leaving capacity whole would give 280 / 480.
TEST_F(ExclusionTest, HostAndFleetExclusionsLeaveCapacityOut) {
  report_ = Replay(ParseEvents(Timeline(R"(
10:00:00 {"host":"h1","heartbeat":{"chips":4,"accelerator":"tpu-v5p"}}
10:00:00 {"host":"h2","heartbeat":{"chips":4,"accelerator":"tpu-v5p"}}
10:00:00 {"job_id":"a","host":"h1","job_submitted":{"chips":4,"accelerator":"tpu-v5p"}}
10:00:00 {"job_id":"a","host":"h1","started":{}}
10:00:00 {"job_id":"a","host":"h1","activity":{"kind":"INIT"}}
10:00:00 {"job_id":"b","host":"h2","job_submitted":{"chips":4,"accelerator":"tpu-v5p"}}
10:00:00 {"job_id":"b","host":"h2","started":{}}
10:00:00 {"job_id":"b","host":"h2","activity":{"kind":"INIT"}}
10:00:10 {"host":"ops","exclusion":{"until":"2026-11-22T10:00:20Z","reason":"rack","scope":"HOSTS","hosts":["h1"]}}
10:00:30 {"exclusion":{"until":"2026-11-22T10:00:50Z","reason":"incident","scope":"FLEET"}}
10:00:40 {"host":"h1","heartbeat":{"chips":4,"accelerator":"tpu-v5p"}}
10:00:40 {"host":"h2","heartbeat":{"chips":4,"accelerator":"tpu-v5p"}}
)")),
                   config_, At("10:01:00"));
  ASSERT_TRUE(report_.fleet.capacity_chip_seconds.has_value());
  EXPECT_DOUBLE_EQ(*report_.fleet.capacity_chip_seconds, 4 * 30 + 4 * 40);
  const TotalsRatios r = ComputeRatios(report_.fleet);
  ASSERT_TRUE(r.sg_capacity.has_value());
  EXPECT_DOUBLE_EQ(*r.sg_capacity, 1.0);
  const Totals& v5p = report_.segments.at("accelerator").at("tpu-v5p");
  ASSERT_TRUE(v5p.capacity_chip_seconds.has_value());
  EXPECT_DOUBLE_EQ(*v5p.capacity_chip_seconds, 280);
}

TEST_F(ExclusionTest, CountersCountExcludedTimeWhenItIsAttributed) {
  // Excluded time counts as it is attributed; the first step's time once
  // rule 4 freezes its compile estimate (here at the end).
  JobTracker t = Track(kMaintenance);
  EXPECT_EQ(t.Recognize().nanos[Index(Category::kExcluded)],
            At("10:00:40") - At("10:00:20"));
  t = Track(kMaintenance +
            "10:01:00 {\"job_ended\":{\"outcome\":\"SUCCEEDED\"}}\n");
  const Recognized r = t.Recognize();
  EXPECT_EQ(r.nanos[Index(Category::kExcluded)],
            At("10:00:40") - At("10:00:20"));
  EXPECT_EQ(r.nanos[Index(Category::kProductive)],
            At("10:01:00") - At("10:00:40"));
}

TEST_F(ExclusionTest, SnapshotsKeepTheExclusions) {
  const std::vector<v1::Event> events = ParseEvents(Timeline(kMaintenance));
  std::vector<uint32_t> order(events.size());
  for (uint32_t i = 0; i < order.size(); ++i) order[i] = i;
  SortForApply(events, &order);
  for (size_t cut = 0; cut <= order.size(); ++cut) {
    JobTracker whole("j", &config_), part("j", &config_);
    for (size_t i = 0; i < cut; ++i) {
      ASSERT_TRUE(whole.Apply(events[order[i]]).ok());
      ASSERT_TRUE(part.Apply(events[order[i]]).ok());
    }
    internal::v1::JobTrackerState state;
    part.SaveState(&state);
    absl::StatusOr<JobTracker> back = JobTracker::FromState(state, &config_);
    ASSERT_TRUE(back.ok()) << back.status();
    for (size_t i = cut; i < order.size(); ++i) {
      ASSERT_TRUE(whole.Apply(events[order[i]]).ok());
      ASSERT_TRUE(back->Apply(events[order[i]]).ok());
    }
    EXPECT_EQ(whole.Report(At("10:01:00")).nanos,
              back->Report(At("10:01:00")).nanos)
        << cut;
  }
}

TEST_F(ExclusionTest, AVersionThreeRecordLoadsWithoutExclusions) {
  JobTracker t = Track(kSteps);
  internal::v1::JobTrackerState state;
  t.SaveState(&state);
  EXPECT_EQ(state.version(), kJobTrackerStateVersion);
  state.set_version(3);
  absl::StatusOr<JobTracker> back = JobTracker::FromState(state, &config_);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->Report(At("10:00:30")).nanos, t.Report(At("10:00:30")).nanos);
}

}  // namespace
}  // namespace goodput::core
