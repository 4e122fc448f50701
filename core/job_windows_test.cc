// core::JobWindows: a window's report equals a replay under since_ns = its
// edge, exactly (random fleets, every edge within the horizon), and
// hand-computed windows around the rules whose time moves after an edge.
// Hand-computed times are on 2026-11-22 (UTC); the job is "j".
#include "core/job_windows.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "core/event_order.h"
#include "core/fleet_report.h"
#include "core/testing/expect.h"
#include "core/testing/random_fleet.h"
#include "core/testing/timeline.h"
#include "gtest/gtest.h"

namespace goodput::core {
namespace {

using ::goodput::core::testing::ExpectSeconds;
using ::goodput::core::testing::Job;
using ::goodput::core::testing::ParseEvents;
using ::goodput::core::testing::RandomFleet;
using ::goodput::core::testing::Replay;
using ::goodput::core::testing::S;
using ::goodput::core::testing::T;
using ::goodput::core::testing::Timeline;

int64_t At(const std::string& hms) { return T("2026-11-22T" + hms + "Z"); }

// The jobs of `events` (apply order) as JobWindows, with JOB exclusions
// that come before a job's first event held for it, as FleetTracker does.
class Fleet {
 public:
  Fleet(const Config* config, WindowGrid grid) : config_(config), grid_(grid) {}

  void Apply(const std::vector<v1::Event>& events, size_t count) {
    std::vector<uint32_t> order(events.size());
    for (uint32_t i = 0; i < order.size(); ++i) order[i] = i;
    SortForApply(events, &order);
    for (size_t i = 0; i < count && i < order.size(); ++i) {
      ApplyOne(events[order[i]]);
    }
  }

  // As a restart or a rebuild does: every job becomes its live tracker's
  // snapshot (SaveState, FromState), keeping no edge; returns each job's
  // cursor then.
  std::map<std::string, int64_t> Restart() {
    std::map<std::string, int64_t> cursors;
    for (auto& [id, job] : jobs_) {
      internal::v1::JobTrackerState state;
      job.live().SaveState(&state);
      absl::StatusOr<JobTracker> t = JobTracker::FromState(state, config_);
      EXPECT_TRUE(t.ok()) << t.status();
      cursors[id] = t->cursor_ns();
      job = JobWindows(*std::move(t), config_, grid_);
    }
    return cursors;
  }

  // As a restart from stored records does: every job becomes its live
  // tracker's state and its edges' (SaveState, SaveEdges, through their
  // bytes), loaded back (FromState, RestoreEdges).
  void RestartWithEdges() {
    for (auto& [id, job] : jobs_) {
      internal::v1::JobTrackerState state;
      job.live().SaveState(&state);
      internal::v1::JobWindowsState edges;
      job.SaveEdges(&edges);
      internal::v1::JobTrackerState state_back;
      internal::v1::JobWindowsState edges_back;
      ASSERT_TRUE(state_back.ParseFromString(state.SerializeAsString()));
      ASSERT_TRUE(edges_back.ParseFromString(edges.SerializeAsString()));
      absl::StatusOr<JobTracker> t = JobTracker::FromState(state_back, config_);
      ASSERT_TRUE(t.ok()) << t.status();
      JobWindows restored(*std::move(t), config_, grid_);
      absl::Status s = restored.RestoreEdges(edges_back);
      ASSERT_TRUE(s.ok()) << s;
      EXPECT_EQ(restored.window_count(), job.window_count());
      EXPECT_EQ(restored.shadow_count(), job.shadow_count());
      job = std::move(restored);
    }
  }

  std::map<std::string, JobWindows>& jobs() { return jobs_; }
  int64_t newest_ns() const { return newest_ns_; }

 private:
  void ApplyOne(const v1::Event& e) {
    if (e.has_heartbeat()) return;
    const int64_t t = EventTimeNanos(e);
    newest_ns_ = std::max(newest_ns_, t);
    auto it = jobs_.find(e.job_id());
    if (e.has_exclusion() && it == jobs_.end()) {
      ASSERT_EQ(e.exclusion().scope(), v1::Exclusion::JOB);
      const auto& u = e.exclusion().until();
      early_[e.job_id()].push_back(
          {t, u.seconds() * kNanosPerSecond + u.nanos()});
      return;
    }
    if (it == jobs_.end()) {
      it = jobs_.try_emplace(e.job_id(), e.job_id(), config_, grid_).first;
      for (auto [from, until] : early_[e.job_id()]) {
        ASSERT_TRUE(it->second.Exclude(from, until).ok());
      }
    }
    ASSERT_TRUE(it->second.Apply(e).ok()) << e.DebugString();
  }

  const Config* config_;
  WindowGrid grid_;
  std::map<std::string, JobWindows> jobs_;
  std::map<std::string, std::vector<std::pair<int64_t, int64_t>>> early_;
  int64_t newest_ns_ = 0;
};

// Doubles (chip-seconds, ideal seconds) of a collapsed window are the live
// sums less the offset: equal up to rounding.
void ExpectNearSeconds(double got, double want, const std::string& what) {
  EXPECT_NEAR(got, want, 1e-9 * std::max(1.0, std::abs(want))) << what;
}

// Everything a report shows, integers exactly.
void ExpectSameJob(const JobReport& got, const JobReport& want) {
  SCOPED_TRACE(want.job_id);
  EXPECT_EQ(got.job_id, want.job_id);
  EXPECT_EQ(got.nanos, want.nanos);
  EXPECT_EQ(got.total_ns, want.total_ns);
  EXPECT_EQ(got.at_risk_ns, want.at_risk_ns);
  EXPECT_EQ(got.custom_nanos, want.custom_nanos);
  EXPECT_EQ(got.costed_productive_ns, want.costed_productive_ns);
  EXPECT_EQ(got.state, want.state);
  EXPECT_EQ(got.last_step, want.last_step);
  EXPECT_EQ(got.last_checkpoint, want.last_checkpoint);
  EXPECT_EQ(got.lost_steps, want.lost_steps);
  EXPECT_EQ(got.duplicates, want.duplicates);
  EXPECT_EQ(got.interruptions, want.interruptions);
  EXPECT_EQ(got.notices, want.notices);
  EXPECT_EQ(got.min_chips, want.min_chips);
  EXPECT_TRUE(got.step_time == want.step_time);
  ExpectNearSeconds(got.ideal_seconds, want.ideal_seconds, "ideal");
  ExpectNearSeconds(got.costed_productive_chip_seconds,
                    want.costed_productive_chip_seconds, "costed cs");
  for (size_t c = 0; c < got.chip_seconds.size(); ++c) {
    ExpectNearSeconds(got.chip_seconds[c], want.chip_seconds[c],
                      "chip_seconds " + std::to_string(c));
  }
}

// --- Snapping.

TEST(WindowGridTest, SnapsDownToTheFineThenTheCoarseGrid) {
  WindowGrid g;  // 60 s for 2 h, 1 h for 25 h
  const int64_t now = At("12:00:30");
  EXPECT_EQ(g.Snap(At("11:00:30"), now), At("11:00:00"));
  EXPECT_EQ(g.Snap(At("10:00:30"), now), At("10:00:00"));  // 2 h 30 s: coarse
  EXPECT_EQ(g.Snap(At("10:01:00"), now), At("10:01:00"));  // exactly 1:59:30
  EXPECT_EQ(g.Snap(At("09:59:59"), now), At("09:00:00"));
  EXPECT_EQ(g.Snap(At("12:05:10"), now), At("12:05:00"));  // after newest
  EXPECT_EQ(g.Snap(T("2026-11-21T12:00:30Z"), now),
            T("2026-11-21T12:00:00Z"));  // 24 h 30 s: coarse
  EXPECT_EQ(g.Snap(T("2026-11-21T11:59:59Z"), now), std::nullopt);
  EXPECT_TRUE(g.Keeps(At("10:01:00"), now));
  EXPECT_FALSE(g.Keeps(At("09:59:00"), now));
  EXPECT_TRUE(g.Keeps(At("10:00:00"), now));
}

TEST(WindowGridTest, ValidateNamesTheBadField) {
  WindowGrid g;
  EXPECT_TRUE(g.Validate().ok());
  g.coarse_grid_ns = S(90);
  EXPECT_FALSE(g.Validate().ok());
  g = WindowGrid{};
  g.horizon_ns = S(60);
  EXPECT_FALSE(g.Validate().ok());
  g = WindowGrid{};
  g.grid_ns = 0;
  EXPECT_FALSE(g.Validate().ok());
}

// --- Hand-computed windows (a 1 s grid).

class JobWindowsTest : public ::testing::Test {
 protected:
  // The window since `since` as of `as_of`, checked against a replay
  // under since_ns = since.
  JobReport Window(const std::string& text, const std::string& since,
                   const std::string& as_of) {
    std::vector<v1::Event> events;  // those at or before as_of
    for (v1::Event& e : ParseEvents(Timeline(text))) {
      if (EventTimeNanos(e) <= At(as_of)) events.push_back(std::move(e));
    }
    Fleet fleet(&config_, grid_);
    fleet.Apply(events, events.size());
    absl::StatusOr<JobReport> got =
        fleet.jobs().at("j").Report(At(as_of), At(since));
    EXPECT_TRUE(got.ok()) << got.status();
    Config windowed = config_;
    windowed.since_ns = At(since);
    ExpectSameJob(*got, Job(Replay(events, windowed, At(as_of)), "j"));
    return *got;
  }

  Config config_;
  WindowGrid grid_{S(1), S(3600), S(3600), S(7200)};
};

// A step open across the edge: only its part after the edge counts.
TEST_F(JobWindowsTest, StepsSpanningTheEdge) {
  constexpr char kText[] = R"(
10:00:00 {"job_submitted":{"chips":4}}
10:00:00 {"started":{}}
10:00:00 {"activity":{"kind":"TRAINING"}}
10:00:40 {"step":{"step":1}}
10:01:20 {"step":{"step":2}}
)";
  ExpectSeconds(Window(kText, "10:01:00", "10:01:50"), 50,
                {{"productive", 50}});
  ExpectSeconds(Window(kText, "10:01:30", "10:01:50"), 20,
                {{"productive", 20}});
}

// Rule 4: a first step's compile share comes first in its interval
// (rule 11), and is recomputed from the mean at each report.
TEST_F(JobWindowsTest, FirstStepCompileShareIsCutAtTheEdge) {
  constexpr char kText[] = R"(
10:00:00 {"job_submitted":{"chips":4}}
10:00:00 {"started":{}}
10:00:00 {"activity":{"kind":"TRAINING"}}
10:01:30 {"step":{"step":1}}
10:02:00 {"step":{"step":2}}
10:02:30 {"step":{"step":3}}
)";
  ExpectSeconds(Window(kText, "10:01:00", "10:02:30"), 90,
                {{"productive", 90}});
  ExpectSeconds(Window(kText, "10:00:30", "10:02:30"), 120,
                {{"compile", 30}, {"productive", 90}});
}

// Rule 7: steps completed before and across the edge become lost after it.
TEST_F(JobWindowsTest, PendingCompletionLostAfterTheEdge) {
  constexpr char kText[] = R"(
10:00:00 {"job_submitted":{"chips":4}}
10:00:00 {"started":{}}
10:00:00 {"activity":{"kind":"TRAINING"}}
10:00:30 {"step":{"step":1}}
10:01:00 {"step":{"step":2}}
10:01:30 {"step":{"step":3}}
10:02:00 {"interruption":{"reason":"PREEMPTED"}}
10:03:00 {"started":{}}
10:03:00 {"activity":{"kind":"TRAINING"}}
10:03:30 {"step":{"step":1}}
)";
  // Before the resume point the window's steps are productive.
  ExpectSeconds(Window(kText, "10:01:00", "10:03:00"), 120,
                {{"productive", 30}, {"lost", 30}, {"recovery", 60}});
  ExpectSeconds(Window(kText, "10:01:00", "10:04:00"), 180,
                {{"productive", 60}, {"lost", 60}, {"recovery", 60}});
}

// Rule 2: the start gap is idle until the first report decides it; a
// first step then takes it (and rule 4 makes part of it compile).
TEST_F(JobWindowsTest, StartGapBeforeAndAfterTheFirstStep) {
  constexpr char kText[] = R"(
10:00:00 {"job_submitted":{"chips":4}}
10:00:00 {"started":{}}
10:00:07 {"step":{"step":1}}
10:00:10 {"step":{"step":2}}
)";
  ExpectSeconds(Window(kText, "10:00:02", "10:00:05"), 3, {{"idle", 3}});
  ExpectSeconds(Window(kText, "10:00:05", "10:00:10"), 5, {{"productive", 5}});
  ExpectSeconds(Window(kText, "10:00:03", "10:00:10"), 7,
                {{"compile", 1}, {"productive", 6}});
}

// Rule 14: the step in flight at a resize is lost; chip-seconds follow
// the held chips.
TEST_F(JobWindowsTest, ElasticResizeAfterTheEdge) {
  constexpr char kText[] = R"(
10:00:00 {"job_submitted":{"chips":8,"min_chips":4}}
10:00:00 {"allocation":{"chips":8}}
10:00:00 {"started":{}}
10:00:00 {"activity":{"kind":"TRAINING"}}
10:00:10 {"step":{"step":1}}
10:00:20 {"step":{"step":2}}
10:00:25 {"allocation":{"chips":4}}
10:00:35 {"step":{"step":3}}
)";
  JobReport j = Window(kText, "10:00:15", "10:00:35");
  ExpectSeconds(j, 20, {{"productive", 15}, {"lost", 5}});
  EXPECT_DOUBLE_EQ(j.chip_seconds[Index(Category::kProductive)],
                   5 * 8 + 10 * 4);
  EXPECT_DOUBLE_EQ(j.chip_seconds[Index(Category::kLost)], 5 * 8);
}

// An exclusion that starts after the edge is excluded time in the window.
TEST_F(JobWindowsTest, ExclusionInsideTheWindow) {
  constexpr char kText[] = R"(
10:00:00 {"job_submitted":{"chips":4}}
10:00:00 {"started":{}}
10:00:00 {"activity":{"kind":"TRAINING"}}
10:00:10 {"step":{"step":1}}
10:00:30 {"exclusion":{"until":"2026-11-22T10:00:40Z","scope":"JOB"}}
10:00:50 {"step":{"step":2}}
)";
  JobReport j = Window(kText, "10:00:35", "10:00:50");
  EXPECT_EQ(j.total_ns, S(15));
  EXPECT_EQ(j.nanos[Index(Category::kExcluded)], S(5));
}

// A window from before the job's first event is its whole lifetime; one
// after its last event is empty; an edge the grid dropped is refused.
TEST_F(JobWindowsTest, EdgesOutsideTheJob) {
  constexpr char kText[] = R"(
10:00:00 {"job_submitted":{"chips":4}}
10:00:00 {"started":{}}
10:00:00 {"activity":{"kind":"TRAINING"}}
10:00:10 {"step":{"step":1}}
)";
  ExpectSeconds(Window(kText, "09:00:00", "10:00:20"), 20,
                {{"productive", 20}});
  ExpectSeconds(Window(kText, "10:00:15", "10:00:20"), 5, {{"productive", 5}});
  grid_ = WindowGrid{S(1), S(3), S(5), S(5)};
  std::vector<v1::Event> events = ParseEvents(Timeline(kText));
  Fleet fleet(&config_, grid_);
  fleet.Apply(events, events.size());
  EXPECT_EQ(fleet.jobs().at("j").window_count(),
            4u);  // :05 (coarse), :07, :08, :09
  EXPECT_EQ(fleet.jobs()
                .at("j")
                .Report(At("10:00:10"), At("10:00:01"))
                .status()
                .code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(fleet.jobs().at("j").Report(At("10:00:10"), At("10:00:05")).ok());
}

// Edges the grid no longer keeps are dropped as the job's events move on:
// fine ones past the fine horizon, coarse ones past the horizon.
TEST_F(JobWindowsTest, EdgesPastTheHorizonAreDropped) {
  grid_ = WindowGrid{S(1), S(3), S(5), S(5)};
  std::vector<v1::Event> events = ParseEvents(Timeline(R"(
10:00:00 {"job_submitted":{"chips":4}}
10:00:00 {"started":{}}
10:00:10 {"step":{"step":1}}
10:00:14 {"step":{"step":2}}
10:00:21 {"step":{"step":3}}
)"));
  Fleet through_14(&config_, grid_);
  through_14.Apply(events, 4);
  // At :10: :05 (coarse), :07, :08, :09. At :14: :10 (coarse), :11, :12,
  // :13 open; :05 is past the horizon, :07 to :09 past the fine horizon.
  EXPECT_EQ(through_14.jobs().at("j").window_count(), 4u);
  Fleet through_21(&config_, grid_);
  through_21.Apply(events, 5);
  // At :21: :18, :19, :20 open (:16 and :17 are neither); :10 is past the
  // horizon, :11 to :13 past the fine one.
  const JobWindows& job = through_21.jobs().at("j");
  EXPECT_EQ(job.window_count(), 3u);
  EXPECT_TRUE(job.Report(At("10:00:21"), At("10:00:18")).ok());
  EXPECT_EQ(job.Report(At("10:00:21"), At("10:00:10")).status().code(),
            absl::StatusCode::kFailedPrecondition);
}

// Saved edges that do not fit are refused whole, leaving the edges as
// they were: another grid or version, an edge off the grid, a short
// offset, a shadow of another job.
TEST_F(JobWindowsTest, RestoreEdgesRefusesWhatDoesNotFit) {
  Fleet fleet(&config_, grid_);
  std::vector<v1::Event> events = ParseEvents(Timeline(R"(
10:00:00 {"job_submitted":{"chips":4}}
10:00:00 {"started":{}}
10:00:00 {"activity":{"kind":"TRAINING"}}
10:00:40 {"step":{"step":1}}
10:01:20 {"step":{"step":2}}
)"));
  fleet.Apply(events, events.size());
  const JobWindows& job = fleet.jobs().at("j");
  internal::v1::JobWindowsState saved;
  job.SaveEdges(&saved);
  ASSERT_GT(saved.edges_size(), 2);
  ASSERT_TRUE(saved.edges(0).has_offset());
  auto refused = [&](internal::v1::JobWindowsState bad) {
    JobWindows fresh(job.live(), &config_, grid_);
    absl::Status s = fresh.RestoreEdges(bad);
    EXPECT_EQ(fresh.window_count(), 0u);
    return s.code();
  };
  JobWindows fresh(job.live(), &config_, grid_);
  ASSERT_TRUE(fresh.RestoreEdges(saved).ok());
  EXPECT_EQ(fresh.window_count(), job.window_count());
  internal::v1::JobWindowsState bad = saved;
  bad.set_grid_ns(S(2));
  EXPECT_EQ(refused(bad), absl::StatusCode::kInvalidArgument);
  bad = saved;
  bad.set_version(kJobWindowsStateVersion + 1);
  EXPECT_EQ(refused(bad), absl::StatusCode::kInvalidArgument);
  bad = saved;
  bad.mutable_edges(1)->set_edge_ns(bad.edges(0).edge_ns());
  EXPECT_EQ(refused(bad), absl::StatusCode::kDataLoss);
  bad = saved;
  bad.mutable_edges(0)->mutable_offset()->mutable_nanos()->RemoveLast();
  EXPECT_EQ(refused(bad), absl::StatusCode::kDataLoss);
  bad = saved;
  internal::v1::JobTrackerState other;
  job.live().SaveState(&other);
  other.set_job_id("k");
  *bad.mutable_edges(0)->mutable_shadow() = other;
  EXPECT_EQ(refused(bad), absl::StatusCode::kDataLoss);
}

// A collapsed edge's deferred completions (version 2) must be the live
// tracker's: columns of one length, as many wholly before the edge as it
// holds, and each straddling one a later pending completion. A version-1
// record (none deferred) loads.
TEST_F(JobWindowsTest, RestoreEdgesRefusesDeferredCompletionsThatDoNotFit) {
  Fleet fleet(&config_, grid_);
  std::vector<v1::Event> events = ParseEvents(Timeline(R"(
10:00:00 {"job_submitted":{"chips":4}}
10:00:00 {"started":{}}
10:00:00 {"activity":{"kind":"TRAINING"}}
10:00:40 {"step":{"step":1}}
10:01:20 {"step":{"step":2}}
10:02:00 {"step":{"step":3}}
10:02:40 {"step":{"step":4}}
)"));
  fleet.Apply(events, events.size());
  const JobWindows& job = fleet.jobs().at("j");
  EXPECT_EQ(job.shadow_count(), 0u);  // all collapsed, steps 2-4 pending
  internal::v1::JobWindowsState saved;
  job.SaveEdges(&saved);
  // The edge at 10:02:10: steps 2 and 3 before it, step 4 across it.
  int i = 0;
  while (i < saved.edges_size() && saved.edges(i).edge_ns() != At("10:02:10")) {
    ++i;
  }
  ASSERT_LT(i, saved.edges_size());
  const auto& offset = saved.edges(i).offset();
  EXPECT_EQ(offset.excluded_count(), 2);
  EXPECT_EQ(offset.excluded_through(), 3);
  ASSERT_EQ(offset.partial_first_step_size(), 1);
  EXPECT_EQ(offset.partial_first_step(0), 4);
  EXPECT_EQ(offset.partial_rest_window_ns(0), S(30));
  auto loads = [&](const internal::v1::JobWindowsState& state) {
    JobWindows fresh(job.live(), &config_, grid_);
    return fresh.RestoreEdges(state).code();
  };
  EXPECT_EQ(loads(saved), absl::StatusCode::kOk);
  auto bad = [&](auto change) {
    internal::v1::JobWindowsState b = saved;
    change(b.mutable_edges(i)->mutable_offset());
    return loads(b);
  };
  using Offset = internal::v1::JobWindowsState::Offset;
  EXPECT_EQ(bad([](Offset* o) { o->mutable_partial_ideal_s()->RemoveLast(); }),
            absl::StatusCode::kDataLoss);
  EXPECT_EQ(bad([](Offset* o) { o->set_excluded_count(3); }),
            absl::StatusCode::kDataLoss);
  EXPECT_EQ(bad([](Offset* o) { o->set_excluded_count(-1); }),
            absl::StatusCode::kDataLoss);
  EXPECT_EQ(bad([](Offset* o) { o->set_partial_first_step(0, 9); }),
            absl::StatusCode::kDataLoss);
  EXPECT_EQ(bad([](Offset* o) { o->set_partial_last_step(0, 5); }),
            absl::StatusCode::kDataLoss);
  EXPECT_EQ(bad([](Offset* o) { o->set_excluded_through(4); }),
            absl::StatusCode::kDataLoss);
  internal::v1::JobWindowsState v1 = saved;
  v1.set_version(1);
  EXPECT_EQ(loads(v1), absl::StatusCode::kOk);
}

// --- Every edge within the horizon of random fleets, cut at random
// points (jobs running, steps open, completions pending).

class JobWindowsPropertyTest : public ::testing::TestWithParam<uint32_t> {
 protected:
  // Applies the first `cut` events of a random fleet (after `restart` of
  // them, every job restarts from its snapshot) and checks every edge
  // within the horizon against a replay under it: equal, or (only with a
  // restart, for an edge between a job's first event and its cursor at
  // the restart) refused. Reports come from copies of the jobs.
  void Check(bool with_restart, int jobs = 6, int events_per_job = 50) {
    Config config;
    // Fine edges for 20 min, 10 min ones for 50 min: the fleets span about
    // 75 min, so windows age out while their jobs run.
    const WindowGrid grid{S(60), S(1200), S(600), S(3000)};
    std::vector<v1::Event> events =
        RandomFleet(GetParam(), jobs, events_per_job);
    std::mt19937 rng(GetParam());
    const size_t cut = std::uniform_int_distribution<size_t>(
        events.size() / 3, events.size())(rng);
    const size_t restart =
        with_restart ? std::uniform_int_distribution<size_t>(1, cut)(rng) : cut;
    std::vector<v1::Event> applied;  // what the fleet took, for the replay
    std::vector<uint32_t> order(events.size());
    for (uint32_t i = 0; i < order.size(); ++i) order[i] = i;
    SortForApply(events, &order);
    for (size_t i = 0; i < cut; ++i) applied.push_back(events[order[i]]);
    std::vector<v1::Event> before(applied.begin(), applied.begin() + restart);
    std::vector<v1::Event> after(applied.begin() + restart, applied.end());
    Fleet fleet(&config, grid);
    fleet.Apply(before, before.size());
    std::map<std::string, int64_t> cursors;
    if (with_restart) cursors = fleet.Restart();
    fleet.Apply(after, after.size());
    const int64_t newest = fleet.newest_ns();
    const int64_t as_of = newest + S(90);
    size_t windows = 0, shadows = 0;
    for (auto& [id, job] : fleet.jobs()) {
      windows += job.window_count();
      shadows += job.shadow_count();
    }
    if (!with_restart) EXPECT_LT(shadows, windows);  // edges collapse
    int checked = 0, refused = 0;
    for (int64_t since = newest - grid.horizon_ns - S(600);
         since <= newest + S(120); since += S(37)) {
      std::optional<int64_t> edge = grid.Snap(since, newest);
      if (!edge) continue;
      Config windowed = config;
      windowed.since_ns = *edge;
      FleetReport want = Replay(applied, windowed, as_of);
      SCOPED_TRACE("since " + FormatTimeNanos(*edge));
      std::vector<JobReport> jobs;
      std::set<std::string> refused_ids;
      for (auto& [id, job] : fleet.jobs()) {
        const JobWindows copy = job;
        absl::StatusOr<JobReport> got = copy.Report(as_of, &windowed);
        if (got.ok()) {
          jobs.push_back(*std::move(got));
          continue;
        }
        EXPECT_EQ(got.status().code(), absl::StatusCode::kFailedPrecondition);
        EXPECT_TRUE(with_restart);
        EXPECT_LT(*edge, cursors[id]);
        EXPECT_GT(*edge, job.live().first_event_ns());
        refused_ids.insert(id);
        ++refused;
      }
      FleetReport got = BuildFleetReport(windowed, as_of, std::move(jobs), {});
      std::vector<JobReport> kept;
      for (JobReport& j : want.jobs) {
        if (refused_ids.count(j.job_id) == 0) kept.push_back(std::move(j));
      }
      ASSERT_EQ(got.jobs.size(), kept.size());
      for (size_t i = 0; i < kept.size(); ++i) {
        ExpectSameJob(got.jobs[i], kept[i]);
        ++checked;
      }
    }
    EXPECT_GT(checked, 0);
    if (!with_restart) EXPECT_EQ(refused, 0);
  }
};

TEST_P(JobWindowsPropertyTest, EveryEdgeEqualsAReplayUnderItsWindow) {
  Check(/*with_restart=*/false);
}

TEST_P(JobWindowsPropertyTest, AfterARestartEveryKeptEdgeEqualsAReplay) {
  Check(/*with_restart=*/true);
}

// Longer jobs: more completions pending across edges that later collapse,
// then split, lost or kept by checkpoints and interruptions.
TEST_P(JobWindowsPropertyTest, LongJobsEveryEdgeEqualsAReplay) {
  Check(/*with_restart=*/false, /*jobs=*/2, /*events_per_job=*/300);
}

// Every field a report shows, doubles bit for bit: a restored JobWindows
// computes what the uninterrupted one does, in the same order.
void ExpectIdenticalJob(const JobReport& got, const JobReport& want) {
  ExpectSameJob(got, want);
  EXPECT_EQ(got.chip_seconds, want.chip_seconds);
  EXPECT_EQ(got.ideal_seconds, want.ideal_seconds);
  EXPECT_EQ(got.costed_productive_chip_seconds,
            want.costed_productive_chip_seconds);
}

// A random fleet cut at a random point, its edges saved and restored with
// the live trackers (as a restart from stored records), then the rest of
// the events: every edge within the horizon reports what an uninterrupted
// run reports (not refused: the edges before the restart are kept).
void CheckRestoredEdges(uint32_t seed, int jobs, int events_per_job) {
  Config config;
  const WindowGrid grid{S(60), S(1200), S(600), S(3000)};
  std::vector<v1::Event> events = RandomFleet(seed, jobs, events_per_job);
  std::vector<uint32_t> order(events.size());
  for (uint32_t i = 0; i < order.size(); ++i) order[i] = i;
  SortForApply(events, &order);
  std::vector<v1::Event> applied;
  for (uint32_t i : order) applied.push_back(events[i]);
  std::mt19937 rng(seed + 1000);
  const size_t restart =
      std::uniform_int_distribution<size_t>(1, applied.size() - 1)(rng);
  std::vector<v1::Event> before(applied.begin(), applied.begin() + restart);
  std::vector<v1::Event> after(applied.begin() + restart, applied.end());
  Fleet uninterrupted(&config, grid);
  uninterrupted.Apply(applied, applied.size());
  Fleet restored(&config, grid);
  restored.Apply(before, before.size());
  restored.RestartWithEdges();
  restored.Apply(after, after.size());
  const int64_t newest = uninterrupted.newest_ns();
  const int64_t as_of = newest + S(90);
  ASSERT_EQ(restored.jobs().size(), uninterrupted.jobs().size());
  int checked = 0;
  for (auto& [id, want] : uninterrupted.jobs()) {
    const JobWindows& got = restored.jobs().at(id);
    EXPECT_EQ(got.window_count(), want.window_count()) << id;
    EXPECT_EQ(got.shadow_count(), want.shadow_count()) << id;
    for (int64_t since = newest - grid.horizon_ns - S(600);
         since <= newest + S(120); since += S(60)) {
      std::optional<int64_t> edge = grid.Snap(since, newest);
      if (!edge) continue;
      SCOPED_TRACE("since " + FormatTimeNanos(*edge));
      absl::StatusOr<JobReport> w = want.Report(as_of, *edge);
      absl::StatusOr<JobReport> g = got.Report(as_of, *edge);
      ASSERT_EQ(g.status(), w.status());
      if (!w.ok()) continue;
      ExpectIdenticalJob(*g, *w);
      ++checked;
    }
  }
  EXPECT_GT(checked, 0);
}

TEST_P(JobWindowsPropertyTest, RestoredEdgesEqualAnUninterruptedRun) {
  CheckRestoredEdges(GetParam(), 6, 50);
}

TEST_P(JobWindowsPropertyTest, LongJobsRestoredEdgesEqualAnUninterruptedRun) {
  CheckRestoredEdges(GetParam(), 2, 300);
}

// --- One training job that runs on: completions pending across many
// edges (checkpoints minutes apart), several steps per report, checkpoints
// at or a little before the last step (splitting a report's steps), and
// preemptions resumed from a step near the last checkpoint (losing, and
// splitting, what came after it); costed, so ideal time moves too.
std::vector<v1::Event> LongRun(uint32_t seed, int reports) {
  std::mt19937 rng(seed);
  auto uniform = [&](int64_t a, int64_t b) {
    return std::uniform_int_distribution<int64_t>(a, b)(rng);
  };
  std::vector<v1::Event> out;
  int64_t t = At("10:00:00"), step = 0, checkpoint = 0;
  auto next = [&](int64_t dt) -> v1::Event& {
    t += dt;
    v1::Event& e = out.emplace_back();
    e.set_job_id("j");
    e.mutable_time()->set_seconds(t / kNanosPerSecond);
    e.mutable_time()->set_nanos(static_cast<int32_t>(t % kNanosPerSecond));
    return e;
  };
  auto start = [&](int64_t dt) {
    next(dt).mutable_started();
    next(0).mutable_activity()->set_kind(v1::Activity::TRAINING);
  };
  auto* submitted = next(0).mutable_job_submitted();
  submitted->set_chips(8);
  submitted->set_accelerator("tpu-v5p");
  submitted->set_step_flops(1e15);
  submitted->set_workload(v1::JobSubmitted::TRAINING);
  start(0);
  for (int i = 0; i < reports; ++i) {
    const int64_t r = uniform(0, 99);
    if (r < 85) {
      step += uniform(1, 4);
      next(S(uniform(5, 40)) + uniform(0, 999) * 1'000'000)
          .mutable_step()
          ->set_step(step);
    } else if (r < 93) {
      checkpoint = std::max(checkpoint, step - uniform(0, 3));
      next(S(uniform(0, 5))).mutable_checkpoint()->set_step(checkpoint);
    } else {
      next(S(uniform(1, 20)))
          .mutable_interruption()
          ->set_reason(v1::Interruption::PREEMPTED);
      start(S(uniform(10, 90)));
      step = checkpoint + uniform(1, 3);  // resumes after step - 1
      next(S(uniform(20, 60))).mutable_step()->set_step(step);
    }
  }
  return out;
}

class JobWindowsLongRunTest : public ::testing::TestWithParam<uint32_t> {
 protected:
  const WindowGrid grid_{S(60), S(1200), S(600), S(3000)};
  Config config_;
};

// At cuts every 40 reports, every edge within the horizon equals a replay
// under it.
TEST_P(JobWindowsLongRunTest, EveryEdgeEqualsAReplayUnderItsWindow) {
  const std::vector<v1::Event> events = LongRun(GetParam(), 240);
  int checked = 0;
  for (size_t cut = 40; cut <= events.size(); cut += 40) {
    const std::vector<v1::Event> applied(events.begin(), events.begin() + cut);
    Fleet fleet(&config_, grid_);
    fleet.Apply(applied, applied.size());
    const JobWindows& job = fleet.jobs().at("j");
    EXPECT_LE(job.shadow_count(), 2u);  // edges collapse between checkpoints
    const int64_t newest = fleet.newest_ns(), as_of = newest + S(30);
    for (int64_t since = newest - grid_.horizon_ns; since <= newest;
         since += S(60)) {
      std::optional<int64_t> edge = grid_.Snap(since, newest);
      if (!edge) continue;
      SCOPED_TRACE("cut " + std::to_string(cut) + ", since " +
                   FormatTimeNanos(*edge));
      Config windowed = config_;
      windowed.since_ns = *edge;
      absl::StatusOr<JobReport> got = job.Report(as_of, &windowed);
      ASSERT_TRUE(got.ok()) << got.status();
      ExpectSameJob(*got, Job(Replay(applied, windowed, as_of), "j"));
      ++checked;
    }
  }
  EXPECT_GT(checked, 100);
}

// Copies taken while shadows are open (as a report's view of a job with
// buffered events is) go on as the original: every edge alike at the end.
// Shadows outlive an event only now and then, so over 20 runs.
TEST(JobWindowsCopyTest, CopiesWithOpenShadowsGoOnAsTheOriginal) {
  const WindowGrid grid{S(60), S(1200), S(600), S(3000)};
  const Config config;
  size_t copied = 0;
  for (uint32_t seed = 1; seed <= 20; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    const std::vector<v1::Event> events = LongRun(seed, 240);
    std::vector<uint32_t> order(events.size());
    std::iota(order.begin(), order.end(), 0);
    SortForApply(events, &order);
    JobWindows job("j", &config, grid);
    std::vector<JobWindows> copies;
    for (uint32_t i : order) {
      if (job.shadow_count() > 0 && copies.size() < 4) copies.push_back(job);
      ASSERT_TRUE(job.Apply(events[i]).ok());
      for (JobWindows& c : copies) ASSERT_TRUE(c.Apply(events[i]).ok());
    }
    copied += copies.size();
    const int64_t newest = EventTimeNanos(events[order.back()]);
    for (int64_t since = newest - grid.horizon_ns; since <= newest;
         since += S(60)) {
      std::optional<int64_t> edge = grid.Snap(since, newest);
      if (!edge) continue;
      absl::StatusOr<JobReport> want = job.Report(newest, *edge);
      ASSERT_TRUE(want.ok()) << want.status();
      for (const JobWindows& c : copies) {
        absl::StatusOr<JobReport> got = c.Report(newest, *edge);
        ASSERT_TRUE(got.ok()) << got.status();
        ExpectSameJob(*got, *want);
      }
    }
  }
  EXPECT_GE(copied, 10u);
}

// Restarted from saved edges at cuts every 40 reports, then given the
// rest: every edge reports what the uninterrupted run reports, bit for bit.
TEST_P(JobWindowsLongRunTest, RestoredEdgesEqualAnUninterruptedRun) {
  const std::vector<v1::Event> events = LongRun(GetParam(), 240);
  Fleet uninterrupted(&config_, grid_);
  uninterrupted.Apply(events, events.size());
  const JobWindows& want = uninterrupted.jobs().at("j");
  const int64_t newest = uninterrupted.newest_ns(), as_of = newest + S(30);
  for (size_t cut = 40; cut < events.size(); cut += 40) {
    const std::vector<v1::Event> before(events.begin(), events.begin() + cut);
    const std::vector<v1::Event> after(events.begin() + cut, events.end());
    Fleet restored(&config_, grid_);
    restored.Apply(before, before.size());
    restored.RestartWithEdges();
    restored.Apply(after, after.size());
    const JobWindows& got = restored.jobs().at("j");
    for (int64_t since = newest - grid_.horizon_ns; since <= newest;
         since += S(60)) {
      std::optional<int64_t> edge = grid_.Snap(since, newest);
      if (!edge) continue;
      SCOPED_TRACE("cut " + std::to_string(cut) + ", since " +
                   FormatTimeNanos(*edge));
      absl::StatusOr<JobReport> w = want.Report(as_of, *edge);
      absl::StatusOr<JobReport> g = got.Report(as_of, *edge);
      ASSERT_EQ(g.status(), w.status());
      if (w.ok()) ExpectIdenticalJob(*g, *w);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Seeds, JobWindowsLongRunTest,
                         ::testing::Range<uint32_t>(1, 21));

INSTANTIATE_TEST_SUITE_P(Seeds, JobWindowsPropertyTest,
                         ::testing::Range<uint32_t>(1, 21));

}  // namespace
}  // namespace goodput::core
