// JobTracker::SaveState and FromState over random fleets: a tracker saved
// at any point of a job's events, taken through bytes, restored and given
// the remaining events equals the one that applied them all, in its whole
// state and in every field of its report, recognition and observations;
// a window that starts after the saved state's cursor gives the windowed
// replay exactly. And the records FromState rejects.
#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <map>
#include <numeric>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/event_order.h"
#include "core/job_tracker.h"
#include "core/testing/random_fleet.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"

namespace goodput::core {
namespace {

using ::goodput::core::testing::RandomFleet;
using ::google::protobuf::Descriptor;
using ::google::protobuf::FieldDescriptor;
using ::google::protobuf::Message;
using Proto = internal::v1::JobTrackerState;
using Events = std::vector<v1::Event>;

constexpr int64_t kStart = 1795341600LL * kNanosPerSecond;
constexpr int64_t kAsOf = kStart + 4 * 3600 * kNanosPerSecond;

// A fleet's events per job, each job's in apply order.
std::map<std::string, Events> JobsInApplyOrder(const Events& fleet) {
  std::map<std::string, Events> jobs;
  for (const v1::Event& e : fleet) {
    if (!e.has_heartbeat()) jobs[e.job_id()].push_back(e);
  }
  for (auto& [id, events] : jobs) {
    std::vector<uint32_t> order(events.size());
    std::iota(order.begin(), order.end(), 0);
    SortForApply(events, &order);
    Events sorted;
    for (uint32_t i : order) sorted.push_back(events[i]);
    events = std::move(sorted);
  }
  return jobs;
}

// Applies events [begin, end); a rejected event changes nothing, so both
// sides of a comparison see the same rejections.
void ApplyRange(const Events& events, size_t begin, size_t end, JobTracker* t) {
  for (size_t i = begin; i < end; ++i) (void)t->Apply(events[i]);
}

JobTracker Prefix(const std::string& id, const Events& events, size_t n,
                  const Config* config) {
  JobTracker t(id, config);
  ApplyRange(events, 0, n, &t);
  return t;
}

Proto Saved(const JobTracker& t) {
  Proto state;
  t.SaveState(&state);
  return state;
}

// SaveState, serialized to bytes and parsed back, FromState.
absl::StatusOr<JobTracker> RoundTrip(const JobTracker& t,
                                     const Config* config) {
  Proto parsed;
  EXPECT_TRUE(parsed.ParseFromString(Saved(t).SerializeAsString()));
  return JobTracker::FromState(parsed, config);
}

void ExpectSameReport(const JobReport& a, const JobReport& b) {
  EXPECT_EQ(a.job_id, b.job_id);
  EXPECT_EQ(a.chips, b.chips);
  EXPECT_EQ(a.accelerator, b.accelerator);
  EXPECT_EQ(a.workload, b.workload);
  EXPECT_EQ(a.framework, b.framework);
  EXPECT_EQ(a.labels, b.labels);
  EXPECT_EQ(a.state, b.state);
  EXPECT_EQ(a.total_ns, b.total_ns);
  EXPECT_EQ(a.nanos, b.nanos);
  EXPECT_EQ(a.custom_nanos, b.custom_nanos);
  EXPECT_EQ(a.at_risk_ns, b.at_risk_ns);
  EXPECT_EQ(a.ideal_seconds, b.ideal_seconds);
  EXPECT_EQ(a.costed_productive_ns, b.costed_productive_ns);
  EXPECT_EQ(a.last_step, b.last_step);
  EXPECT_EQ(a.last_checkpoint, b.last_checkpoint);
  EXPECT_EQ(a.lost_steps, b.lost_steps);
  EXPECT_EQ(a.interruptions, b.interruptions);
  EXPECT_EQ(a.duplicates, b.duplicates);
  EXPECT_EQ(a.notices, b.notices);
}

void ExpectSameRecognized(const Recognized& a, const Recognized& b) {
  EXPECT_EQ(a.nanos, b.nanos);
  EXPECT_EQ(a.costed_productive_ns, b.costed_productive_ns);
  EXPECT_EQ(a.ideal_seconds, b.ideal_seconds);
  EXPECT_EQ(a.interruptions, b.interruptions);
  EXPECT_EQ(a.notices, b.notices);
  EXPECT_EQ(a.pg_above_one_steps, b.pg_above_one_steps);
  EXPECT_EQ(a.duplicates, b.duplicates);
  EXPECT_EQ(a.steps, b.steps);
  EXPECT_EQ(a.at_risk_ns, b.at_risk_ns);
  EXPECT_EQ(a.last_step_ns, b.last_step_ns);
  EXPECT_EQ(a.last_checkpoint_ns, b.last_checkpoint_ns);
  EXPECT_EQ(a.state, b.state);
  EXPECT_EQ(a.chips, b.chips);
  EXPECT_EQ(a.last_event_ns, b.last_event_ns);
}

void ExpectSameObservations(const std::vector<Observation>& a,
                            const std::vector<Observation>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].kind, b[i].kind) << i;
    EXPECT_EQ(a[i].nanos, b[i].nanos) << i;
  }
}

// The whole saved state, field by field.
void ExpectSameState(const JobTracker& a, const JobTracker& b) {
  google::protobuf::util::MessageDifferencer differ;
  std::string diff;
  differ.ReportDifferencesToString(&diff);
  EXPECT_TRUE(differ.Compare(Saved(a), Saved(b))) << diff;
}

// Everything a caller sees of `b` equals `a`'s, as of `as_of_ns`.
void ExpectSameTracker(const JobTracker& a, const JobTracker& b,
                       int64_t as_of_ns) {
  SCOPED_TRACE(FormatTimeNanos(as_of_ns));
  ExpectSameReport(a.Report(as_of_ns), b.Report(as_of_ns));
  ExpectSameReport(a.Spec(), b.Spec());
  ExpectSameRecognized(a.Recognize(), b.Recognize());
  ExpectSameObservations(a.observations(), b.observations());
  EXPECT_EQ(a.job_id(), b.job_id());
  EXPECT_EQ(a.ended(), b.ended());
  EXPECT_EQ(a.first_event_ns(), b.first_event_ns());
  EXPECT_EQ(a.last_event_ns(), b.last_event_ns());
  EXPECT_EQ(a.cursor_ns(), b.cursor_ns());
}

// As-ofs at and after `t`'s cursor: the cursor, a nanosecond later, around
// the stall boundary, a random instant, and the end of the fleet.
std::vector<int64_t> AsOfs(const JobTracker& t, const Config& config,
                           std::mt19937* rng) {
  const int64_t c = t.cursor_ns();
  const int64_t stall = c + config.stall_after_ns;
  std::uniform_int_distribution<int64_t> later(0, 3 * 3600 * kNanosPerSecond);
  return {c, c + 1, stall - 1, stall + 1, c + later(*rng), kAsOf};
}

class JobTrackerStateTest : public ::testing::TestWithParam<uint32_t> {
 protected:
  std::map<std::string, Events> Jobs(int jobs, int events_per_job) const {
    return JobsInApplyOrder(RandomFleet(GetParam(), jobs, events_per_job));
  }
  size_t RandomCut(size_t n) {
    return std::uniform_int_distribution<size_t>(0, n)(rng_);
  }
  std::mt19937 rng_{GetParam() * 7919u};
};

// Saves at a random cut under `config`, restores under it, and checks the
// restored tracker against the saved one and, after the rest, against
// the full replay.
void ExpectRoundTrip(const std::string& id, const Events& events, size_t cut,
                     const Config* config, std::mt19937* rng) {
  SCOPED_TRACE(id + " cut at " + std::to_string(cut));
  const JobTracker prefix = Prefix(id, events, cut, config);
  absl::StatusOr<JobTracker> restored = RoundTrip(prefix, config);
  ASSERT_TRUE(restored.ok()) << restored.status();
  ExpectSameState(prefix, *restored);
  for (int64_t as_of : AsOfs(prefix, *config, rng)) {
    ExpectSameTracker(prefix, *restored, as_of);
  }
  ApplyRange(events, cut, events.size(), &*restored);
  const JobTracker full = Prefix(id, events, events.size(), config);
  ExpectSameState(full, *restored);
  ExpectSameTracker(full, *restored, kAsOf);
}

TEST_P(JobTrackerStateTest, RestoredThenRestEqualsFullReplay) {
  const Config config;
  for (const auto& [id, events] : Jobs(20, 80)) {
    ExpectRoundTrip(id, events, RandomCut(events.size()), &config, &rng_);
  }
}

TEST_P(JobTrackerStateTest, RestoredUnderItsWindowEqualsWindowedReplay) {
  Config config;
  config.since_ns = kStart + std::uniform_int_distribution<int64_t>(
                                 0, 2 * 3600 * kNanosPerSecond)(rng_);
  for (const auto& [id, events] : Jobs(20, 80)) {
    ExpectRoundTrip(id, events, RandomCut(events.size()), &config, &rng_);
  }
}

// Saved with no window at a random cut, loaded under a window since T at
// or after the cut's last event: equals the replay under that window,
// before and after the rest of the events.
TEST_P(JobTrackerStateTest, WindowAfterCursorEqualsWindowedReplay) {
  const Config plain;
  for (const auto& [id, events] : Jobs(20, 80)) {
    const size_t cut = RandomCut(events.size());
    const JobTracker prefix = Prefix(id, events, cut, &plain);
    Config windowed;
    const int64_t c = prefix.cursor_ns();
    windowed.since_ns = std::bernoulli_distribution(0.25)(rng_)
                            ? c
                            : std::uniform_int_distribution<int64_t>(
                                  c, std::max(c, kAsOf))(rng_);
    SCOPED_TRACE(id + " cut at " + std::to_string(cut) + " since " +
                 FormatTimeNanos(windowed.since_ns));
    absl::StatusOr<JobTracker> loaded = RoundTrip(prefix, &windowed);
    ASSERT_TRUE(loaded.ok()) << loaded.status();
    const JobTracker replayed = Prefix(id, events, cut, &windowed);
    ExpectSameState(replayed, *loaded);
    for (int64_t as_of : AsOfs(prefix, windowed, &rng_)) {
      ExpectSameTracker(replayed, *loaded, as_of);
    }
    ApplyRange(events, cut, events.size(), &*loaded);
    const JobTracker full = Prefix(id, events, events.size(), &windowed);
    ExpectSameState(full, *loaded);
    ExpectSameTracker(full, *loaded, kAsOf);
  }
}

INSTANTIATE_TEST_SUITE_P(Seeds, JobTrackerStateTest,
                         ::testing::Range<uint32_t>(1, 31));

// --- Every field of the record is exercised by the random fleets, so a
// member that SaveState or FromState forgets changes some comparison above.

// Adds the full names of the fields of `m` (and of its nested messages)
// that hold something other than their default.
void CollectSetFields(const Message& m, std::set<std::string>* seen) {
  std::vector<const FieldDescriptor*> fields;
  m.GetReflection()->ListFields(m, &fields);
  for (const FieldDescriptor* f : fields) {
    seen->insert(f->full_name());
    if (f->cpp_type() != FieldDescriptor::CPPTYPE_MESSAGE || f->is_map()) {
      continue;
    }
    if (!f->is_repeated()) {
      CollectSetFields(m.GetReflection()->GetMessage(m, f), seen);
      continue;
    }
    for (int i = 0; i < m.GetReflection()->FieldSize(m, f); ++i) {
      CollectSetFields(m.GetReflection()->GetRepeatedMessage(m, f, i), seen);
    }
  }
}

// Fields only read: the messages of versions 3 to 6 that version 7 writes
// as columns (AnOlderRecordsMessagesLoadAlike covers them).
bool OnlyRead(const FieldDescriptor* f) {
  return f->full_name() == "goodput.internal.v1.JobTrackerState.pending" ||
         f->full_name() ==
             "goodput.internal.v1.JobTrackerState.StepTimes.recent";
}

void ExpectAllFieldsSeen(const Descriptor* d,
                         const std::set<std::string>& seen) {
  for (int i = 0; i < d->field_count(); ++i) {
    const FieldDescriptor* f = d->field(i);
    if (OnlyRead(f)) continue;
    EXPECT_TRUE(seen.count(f->full_name())) << f->full_name() << " unused";
    if (f->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE && !f->is_map()) {
      ExpectAllFieldsSeen(f->message_type(), seen);
    }
  }
}

TEST(JobTrackerStateFieldsTest, RandomFleetsSetEveryField) {
  Config plain, windowed;
  windowed.since_ns = kStart + 3600 * kNanosPerSecond;
  std::set<std::string> seen;
  for (uint32_t seed = 1; seed <= 10; ++seed) {
    for (const auto& [id, events] :
         JobsInApplyOrder(RandomFleet(seed, 20, 80))) {
      for (const Config* config : {&plain, &windowed}) {
        JobTracker t(id, config);
        for (const v1::Event& e : events) {
          (void)t.Apply(e);
          CollectSetFields(Saved(t), &seen);
        }
      }
    }
  }
  ExpectAllFieldsSeen(Proto::descriptor(), seen);
}

// `state` (version 7) as a version-6 record: its pending completions and
// recent step reports as one message each.
Proto AsMessages(Proto state) {
  const Proto::CompletionColumns& c = state.pending_columns();
  int64_t last = 0;
  for (int i = 0; i < c.first_step_delta_size(); ++i) {
    Proto::Completion* m = state.add_pending();
    m->set_first_step(last + c.first_step_delta(i));
    m->set_last_step(last = m->first_step() + c.extra_steps(i));
    m->set_rest_ns(c.rest_ns(i));
    m->set_rest_window_ns(c.rest_ns(i) - c.rest_window_delta_ns(i));
    m->set_ideal_s(c.ideal_s(i));
    m->set_costed(c.costed(i));
    const int ref = c.first_ref_plus_one_size() ? c.first_ref_plus_one(i) : 0;
    if (ref > 0) m->set_first_ref(ref - 1);
    if (c.chips_size() > 0) m->set_chips(c.chips(i));
  }
  state.clear_pending_columns();
  Proto::StepTimes* times = state.mutable_step_times();
  const Proto::StepTimes::ReportColumns& r = times->recent_columns();
  int64_t at_ns = 0;
  for (int i = 0; i < r.steps_size(); ++i) {
    Proto::StepTimes::Report* m = times->add_recent();
    m->set_per_step_ns(r.per_step_ns(i));
    m->set_at_ns(at_ns += r.at_delta_ns(i));
    m->set_steps(r.steps(i));
  }
  times->clear_recent_columns();
  state.set_version(6);
  return state;
}

// Records stored before version 7 load to the same tracker: saved again,
// it is the version-7 record exactly. Version 7 is smaller.
TEST(JobTrackerStateFieldsTest, AnOlderRecordsMessagesLoadAlike) {
  Config plain, windowed;
  windowed.since_ns = kStart + 3600 * kNanosPerSecond;
  size_t columns_bytes = 0, messages_bytes = 0;
  int loaded = 0;
  for (const auto& [id, events] : JobsInApplyOrder(RandomFleet(3, 20, 80))) {
    for (const Config* config : {&plain, &windowed}) {
      JobTracker t(id, config);
      for (const v1::Event& e : events) {
        (void)t.Apply(e);
        const Proto state = Saved(t);
        absl::StatusOr<JobTracker> back =
            JobTracker::FromState(AsMessages(state), config);
        ASSERT_TRUE(back.ok()) << back.status();
        ASSERT_TRUE(google::protobuf::util::MessageDifferencer::Equals(
            Saved(*back), state))
            << id;
        columns_bytes += state.ByteSizeLong();
        messages_bytes += AsMessages(state).ByteSizeLong();
        loaded += state.pending_columns().first_step_delta_size() > 0;
      }
    }
  }
  EXPECT_GT(loaded, 100);
  EXPECT_LT(columns_bytes, messages_bytes);
}

// Writes tracker_state_fuzzer's seeds: every 20th saved state of a random
// fleet's jobs, in version 7 and as version 6, to $SEED_DIR. Run by hand:
//   SEED_DIR=core/testdata/corpus/tracker_state_fuzzer \
//     core/job_tracker_state_test --gtest_also_run_disabled_tests \
//     --gtest_filter='*WriteFuzzSeeds'
TEST(JobTrackerStateFieldsTest, DISABLED_WriteFuzzSeeds) {
  const char* dir = std::getenv("SEED_DIR");
  ASSERT_NE(dir, nullptr) << "set SEED_DIR";
  Config config;
  int n = 0;
  for (const auto& [id, events] : JobsInApplyOrder(RandomFleet(2, 8, 80))) {
    JobTracker t(id, &config);
    for (size_t i = 0; i < events.size(); ++i) {
      (void)t.Apply(events[i]);
      if (i % 20 != 19) continue;
      for (const Proto& state : {Saved(t), AsMessages(Saved(t))}) {
        std::ofstream out(absl::StrCat(dir, "/seed-", n++),
                          std::ios::binary | std::ios::trunc);
        out << state.SerializeAsString();
        ASSERT_TRUE(out.good());
      }
    }
  }
}

// --- Records and configs FromState rejects.

// A job's state with pending completions, one of them a first step.
class JobTrackerStateErrorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const auto& [id, events] : JobsInApplyOrder(RandomFleet(1, 20, 80))) {
      JobTracker t(id, &config_);
      for (const v1::Event& e : events) {
        (void)t.Apply(e);
        state_ = Saved(t);
        if (HasFirstRef(state_) && state_.first_steps_size() > 0) return;
      }
    }
    FAIL() << "no job with a pending first step";
  }

  static bool HasFirstRef(const Proto& state) {
    for (int32_t ref : state.pending_columns().first_ref_plus_one()) {
      if (ref > 0) return true;
    }
    return false;
  }

  // FromState's error under `config`, which names `field`.
  void ExpectError(const Config& config, absl::StatusCode code,
                   const std::string& field) {
    absl::StatusOr<JobTracker> t = JobTracker::FromState(state_, &config);
    ASSERT_FALSE(t.ok()) << field;
    EXPECT_EQ(t.status().code(), code) << t.status();
    EXPECT_EQ(t.status().message().substr(0, field.size() + 1), field + ":")
        << t.status();
  }
  void ExpectError(absl::StatusCode code, const std::string& field) {
    ExpectError(config_, code, field);
  }

  Config config_;
  Proto state_;
};

TEST_F(JobTrackerStateErrorTest, TheStateItselfLoads) {
  absl::StatusOr<JobTracker> t = JobTracker::FromState(state_, &config_);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_TRUE(
      google::protobuf::util::MessageDifferencer::Equals(Saved(*t), state_));
}

TEST_F(JobTrackerStateErrorTest, UnknownVersion) {
  state_.set_version(kJobTrackerStateVersion + 1);
  ExpectError(absl::StatusCode::kInvalidArgument, "version");
  state_.clear_version();
  ExpectError(absl::StatusCode::kInvalidArgument, "version");
}

TEST_F(JobTrackerStateErrorTest, IndexOutOfRange) {
  Proto::CompletionColumns* c = state_.mutable_pending_columns();
  int i = 0;
  while (c->first_ref_plus_one(i) == 0) ++i;
  c->set_first_ref_plus_one(i, state_.first_steps_size() + 1);
  ExpectError(absl::StatusCode::kDataLoss,
              "pending[" + std::to_string(i) + "].first_ref");
}

TEST_F(JobTrackerStateErrorTest, NegativeIndex) {
  state_.mutable_recognition()->set_unfrozen_first(-1);
  ExpectError(absl::StatusCode::kDataLoss, "recognition.unfrozen_first");
}

TEST_F(JobTrackerStateErrorTest, UnknownCategory) {
  (*state_.mutable_sink()->mutable_nanos())["warp"] = 5;
  ExpectError(absl::StatusCode::kDataLoss, "sink.nanos");
}

TEST_F(JobTrackerStateErrorTest, UnknownReason) {
  (*state_.mutable_recognition()->mutable_notices())["SOLAR_FLARE"] = 1;
  ExpectError(absl::StatusCode::kDataLoss, "recognition.notices");
}

TEST_F(JobTrackerStateErrorTest, UnknownEnumValue) {
  state_.mutable_timeline()->set_alloc(static_cast<Proto::Alloc>(7));
  ExpectError(absl::StatusCode::kDataLoss, "timeline.alloc");
}

TEST_F(JobTrackerStateErrorTest, RunningWithoutAttempts) {
  state_.mutable_timeline()->set_running(true);
  state_.clear_attempts();
  ExpectError(absl::StatusCode::kDataLoss, "attempts");
}

TEST_F(JobTrackerStateErrorTest, CompletionBelowItsFirstStep) {
  state_.mutable_pending_columns()->set_extra_steps(0, -1);
  ExpectError(absl::StatusCode::kDataLoss, "pending[0].last_step");
}

TEST_F(JobTrackerStateErrorTest, ColumnsOfOtherLengths) {
  const Proto good = state_;
  state_.mutable_pending_columns()->add_costed(true);
  ExpectError(absl::StatusCode::kDataLoss, "pending_columns");
  state_ = good;
  state_.mutable_pending_columns()->mutable_rest_ns()->RemoveLast();
  ExpectError(absl::StatusCode::kDataLoss, "pending_columns");
  state_ = good;
  state_.mutable_pending_columns()->add_first_ref_plus_one(0);
  ExpectError(absl::StatusCode::kDataLoss, "pending_columns");
}

TEST_F(JobTrackerStateErrorTest, BothMessagesAndColumns) {
  state_.add_pending()->set_first_step(1);
  ExpectError(absl::StatusCode::kDataLoss, "pending");
}

TEST_F(JobTrackerStateErrorTest, OlderCompletionMessagesAreStillChecked) {
  state_ = AsMessages(state_);
  state_.mutable_pending(0)->set_last_step(state_.pending(0).first_step() - 1);
  ExpectError(absl::StatusCode::kDataLoss, "pending[0].last_step");
}

TEST_F(JobTrackerStateErrorTest, WindowBeforeTheCursor) {
  Config windowed;
  windowed.since_ns = state_.timeline().cursor_ns() - 1;
  ExpectError(windowed, absl::StatusCode::kInvalidArgument, "since_ns");
  windowed.since_ns = state_.timeline().cursor_ns();
  EXPECT_TRUE(JobTracker::FromState(state_, &windowed).ok());
}

TEST_F(JobTrackerStateErrorTest, WindowedStateUnderAnotherWindow) {
  state_.set_since_ns(state_.timeline().cursor_ns());
  Config earlier, later, plain;
  earlier.since_ns = state_.since_ns() - 1;
  later.since_ns = state_.since_ns() + 1;
  ExpectError(earlier, absl::StatusCode::kInvalidArgument, "since_ns");
  ExpectError(later, absl::StatusCode::kInvalidArgument, "since_ns");
  ExpectError(plain, absl::StatusCode::kInvalidArgument, "since_ns");
}

TEST_F(JobTrackerStateErrorTest, AnotherStallAfter) {
  Config config;
  config.stall_after_ns = state_.stall_after_ns() + 1;
  ExpectError(config, absl::StatusCode::kInvalidArgument, "stall_after_ns");
}

TEST_F(JobTrackerStateErrorTest, AnotherCatalog) {
  state_.mutable_spec()->set_accelerator("h100");
  state_.mutable_peak()->set_flops_per_second(1);
  ExpectError(absl::StatusCode::kInvalidArgument, "peak");
  state_.clear_peak();
  ExpectError(absl::StatusCode::kInvalidArgument, "peak");
  state_.mutable_spec()->set_accelerator("abacus");
  EXPECT_TRUE(JobTracker::FromState(state_, &config_).ok());
  state_.mutable_peak();
  ExpectError(absl::StatusCode::kInvalidArgument, "peak");
}

}  // namespace
}  // namespace goodput::core
