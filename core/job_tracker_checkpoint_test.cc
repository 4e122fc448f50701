// Checkpoint advice (issue 18 part 2, docs/semantics.md "Checkpoint
// advice"): the tracker counts the checkpoint events it applies (saves),
// a duplicate save is not counted, the count survives a snapshot (live ==
// replay), and a version-3, 4 or 5 record loads with none counted yet.
// Times are on 2026-11-22 (UTC); the job is "j".
#include <string>
#include <vector>

#include "core/event_order.h"
#include "core/job_tracker.h"
#include "core/testing/timeline.h"
#include "gtest/gtest.h"

namespace goodput::core {
namespace {

using ::goodput::core::testing::ParseEvents;
using ::goodput::core::testing::T;
using ::goodput::core::testing::Timeline;

int64_t At(const std::string& hms) { return T("2026-11-22T" + hms + "Z"); }

// Attempt a saves steps 2 and 4 (the second save of step 2 is a duplicate,
// rule 3), attempt b saves step 6: 3 saves, 1 interruption.
constexpr char kSaves[] = R"(
10:00:00 {"job_submitted":{"chips":8,"workload":"TRAINING"}}
10:00:00 {"attempt":"a","started":{}}
10:00:00 {"attempt":"a","activity":{"kind":"TRAINING"}}
10:00:10 {"attempt":"a","step":{"step":1}}
10:00:20 {"attempt":"a","step":{"step":2}}
10:00:20 {"attempt":"a","activity":{"kind":"CHECKPOINT"}}
10:00:30 {"attempt":"a","checkpoint":{"step":2}}
10:00:30 {"attempt":"a","activity":{"kind":"TRAINING"}}
10:00:35 {"attempt":"a","checkpoint":{"step":2}}
10:00:40 {"attempt":"a","step":{"step":3}}
10:00:50 {"attempt":"a","step":{"step":4}}
10:00:50 {"attempt":"a","checkpoint":{"step":4}}
10:01:00 {"interruption":{"reason":"PREEMPTED"}}
10:05:00 {"attempt":"b","started":{}}
10:05:00 {"attempt":"b","activity":{"kind":"TRAINING"}}
10:05:10 {"attempt":"b","step":{"step":5}}
10:05:20 {"attempt":"b","step":{"step":6}}
10:05:20 {"attempt":"b","checkpoint":{"step":6}}
)";

class JobTrackerCheckpointTest : public ::testing::Test {
 protected:
  // The events of `text` in apply order.
  static std::vector<v1::Event> Ordered(const std::string& text) {
    const std::vector<v1::Event> events = ParseEvents(Timeline(text));
    std::vector<uint32_t> order(events.size());
    for (uint32_t i = 0; i < order.size(); ++i) order[i] = i;
    SortForApply(events, &order);
    std::vector<v1::Event> out;
    for (uint32_t i : order) out.push_back(events[i]);
    return out;
  }

  JobTracker Track(const std::vector<v1::Event>& events) {
    JobTracker t("j", &config_);
    for (const v1::Event& e : events) EXPECT_TRUE(t.Apply(e).ok());
    return t;
  }

  Config config_;
};

TEST_F(JobTrackerCheckpointTest, CountsSavesButNotDuplicates) {
  const JobReport r = Track(Ordered(kSaves)).Report(At("10:06:00"));
  EXPECT_EQ(r.checkpoints, 3);
  EXPECT_EQ(r.duplicates, 1);
  EXPECT_EQ(r.interruptions, 1);
  EXPECT_EQ(r.last_checkpoint, 6);
}

// A tracker saved after any prefix and loaded counts the same saves as
// one that applied everything.
TEST_F(JobTrackerCheckpointTest, SnapshotsKeepTheCount) {
  const std::vector<v1::Event> events = Ordered(kSaves);
  for (size_t cut = 0; cut <= events.size(); ++cut) {
    JobTracker part = Track({events.begin(), events.begin() + cut});
    internal::v1::JobTrackerState state;
    part.SaveState(&state);
    EXPECT_EQ(state.version(), kJobTrackerStateVersion);
    absl::StatusOr<JobTracker> back = JobTracker::FromState(state, &config_);
    ASSERT_TRUE(back.ok()) << back.status();
    for (size_t i = cut; i < events.size(); ++i) {
      ASSERT_TRUE(back->Apply(events[i]).ok());
    }
    EXPECT_EQ(back->Report(At("10:06:00")).checkpoints, 3) << cut;
  }
}

// Versions 3, 4 and 5 had no count: such a record loads with none yet
// (the rest of the report unchanged), and the saves after it count.
TEST_F(JobTrackerCheckpointTest, OlderRecordsLoadWithNoSavesCounted) {
  const std::vector<v1::Event> events = Ordered(kSaves);
  const size_t cut = events.size() - 1;  // before attempt b's save
  const JobTracker part = Track({events.begin(), events.begin() + cut});
  for (const uint32_t version : {3u, 4u, 5u}) {
    internal::v1::JobTrackerState state;
    part.SaveState(&state);
    state.set_version(version);
    state.mutable_recognition()->clear_checkpoints();
    absl::StatusOr<JobTracker> back = JobTracker::FromState(state, &config_);
    ASSERT_TRUE(back.ok()) << version << ": " << back.status();
    EXPECT_EQ(back->Report(At("10:05:20")).checkpoints, 0) << version;
    EXPECT_EQ(back->Report(At("10:05:20")).nanos,
              part.Report(At("10:05:20")).nanos);
    ASSERT_TRUE(back->Apply(events[cut]).ok());
    EXPECT_EQ(back->Report(At("10:06:00")).checkpoints, 1) << version;
  }
}

TEST_F(JobTrackerCheckpointTest, VersionTwoAndEightAreRejected) {
  internal::v1::JobTrackerState state;
  Track(Ordered(kSaves)).SaveState(&state);
  for (const uint32_t version : {2u, 8u}) {
    state.set_version(version);
    EXPECT_FALSE(JobTracker::FromState(state, &config_).ok()) << version;
  }
}

}  // namespace
}  // namespace goodput::core
