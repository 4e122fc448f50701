// libFuzzer harness for the core (issue 7 item 2). Decodes the input into a
// random but valid event log of a few jobs and hosts (FuzzedDataProvider
// picks kinds, times with jitter and ties, attempts, steps that repeat, jump
// and go backwards, checkpoints, interruptions, short allocations, ends,
// heartbeats, costs, input waits and exact duplicates) and checks, trapping
// with a message on the first violation:
//   - every generated event passes codec::ValidateEvent (harness self-check);
//   - every report: categories are >= 0 and sum to the job's lifetime in the
//     window; SG, RG and goodput are in [0, 1] and PG >= 0 (jobs, fleet and
//     segments);
//   - replay is deterministic, and independent of how jobs interleave;
//   - the live path (FleetTracker fed in apply order, reported at several
//     as-ofs, with and without a `since` window) equals ReplayEvents;
//   - recognition: no Recognized counter ever decreases, JobLedger never
//     clamps, and once a job has ended its counters sum to its report's
//     total (per category they may differ only by the rule 4 compile
//     estimate: compile, productive and lost).
// Seeds: core/testdata/corpus/core_fuzzer/: seed-* cover ~93% of the edges
// a 15-minute run found; regression-* are the inputs that found the bugs
// fixed with this harness (each has a hand-computed test in core/). No
// dictionary: the input is FuzzedDataProvider bytes, not text.
#include <fuzzer/FuzzedDataProvider.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "codec/event_validator.h"
#include "core/config.h"
#include "core/event_order.h"
#include "core/fleet_tracker.h"
#include "core/job_ledger.h"
#include "core/job_tracker.h"
#include "core/replay_events.h"
#include "core/report.h"
#include "google/protobuf/util/json_util.h"
#include "proto/event.pb.h"

namespace goodput::core {
namespace {

using v1::Event;

constexpr int64_t kStartNs = int64_t{1795341600} * kNanosPerSecond;
constexpr size_t kMaxEvents = 300;
constexpr int kMaxJobs = 4;
constexpr int kAsOfChecks = 6;

// The input being checked, printed on failure as JSON Lines (in apply
// order) so a crash becomes a hand-checkable timeline. Harness-only state.
const std::vector<Event>* current_log = nullptr;

void PrintLog() {
  if (current_log == nullptr) return;
  std::vector<uint32_t> order(current_log->size());
  for (uint32_t i = 0; i < order.size(); ++i) order[i] = i;
  SortForApply(*current_log, &order);
  for (uint32_t i : order) {
    std::string json;
    google::protobuf::util::JsonPrintOptions options;
    options.preserve_proto_field_names = true;
    (void)google::protobuf::util::MessageToJsonString((*current_log)[i], &json,
                                                      options);
    std::fprintf(stderr, "%s\n", json.c_str());
  }
}

[[noreturn]] void Fail(const std::string& what) {
  PrintLog();
  std::fprintf(stderr, "core_fuzzer: invariant violated: %s\n", what.c_str());
  std::fflush(stderr);
  __builtin_trap();
}

void Check(bool ok, const std::string& what) {
  if (!ok) Fail(what);
}

// One job's generator state.
struct JobState {
  std::string id;
  int64_t t_ns = 0;
  int64_t step = 0;
  int64_t chips = 8;
  int attempts = 0;
  bool use_attempts = false;
  std::vector<size_t> sent;  // indices into the log
};

// Decodes fuzz bytes into a valid event log. Not thread-safe.
class LogBuilder {
 public:
  explicit LogBuilder(FuzzedDataProvider* in) : in_(*in) {
    const int jobs = in_.ConsumeIntegralInRange<int>(1, kMaxJobs);
    for (int j = 0; j < jobs; ++j) {
      JobState& s = jobs_.emplace_back();
      s.id = absl::StrCat("job-", j);
      s.t_ns = kStartNs +
               in_.ConsumeIntegralInRange<int64_t>(0, 600) * kNanosPerSecond;
    }
  }

  std::vector<Event> Build() {
    while (in_.remaining_bytes() > 0 && log_.size() < kMaxEvents) {
      const uint8_t which = in_.ConsumeIntegral<uint8_t>();
      if (which % 16 == 15) {
        Heartbeat();
        continue;
      }
      JobEvent(&jobs_[which % jobs_.size()]);
    }
    return log_;
  }

 private:
  int64_t Pick(int64_t lo, int64_t hi) {
    return in_.ConsumeIntegralInRange<int64_t>(lo, hi);
  }
  bool Coin() { return in_.ConsumeBool(); }

  // Monotone-ish: ties, small and large gaps, and small steps back (out of
  // order arrival; replay sorts).
  void Advance(JobState* s) {
    switch (Pick(0, 7)) {
      case 0:
        return;  // same time
      case 1:
        s->t_ns -= Pick(1, 5000) * 1000000;
        return;
      case 2:
        s->t_ns += Pick(1, 3000) * kNanosPerSecond;  // beyond stall
        return;
      case 3:
        s->t_ns += Pick(1, 999999999);  // sub-second
        return;
      default:
        s->t_ns += Pick(1, 60000) * 1000000;
    }
  }

  Event* Next(JobState* s) {
    Advance(s);
    s->sent.push_back(log_.size());
    Event& e = log_.emplace_back();
    SetTime(s->t_ns, &e);
    e.set_job_id(s->id);
    if (s->use_attempts && s->attempts > 0) {
      // Mostly the current attempt, sometimes a stale one.
      const int a = Coin() ? s->attempts : Pick(1, s->attempts);
      e.set_attempt(absl::StrCat("a", a));
    }
    return &e;
  }

  static void SetTime(int64_t ns, Event* e) {
    e->mutable_time()->set_seconds(ns / kNanosPerSecond);
    e->mutable_time()->set_nanos(static_cast<int32_t>(ns % kNanosPerSecond));
  }

  void JobEvent(JobState* s) {
    switch (Pick(0, 19)) {
      case 0:
        return Submitted(s);
      case 1:
      case 2:
        return Allocation(s);
      case 3:
      case 4:
        return Started(s);
      case 5:
      case 6:
      case 7:
        return Activity(s);
      case 8:
      case 9:
      case 10:
      case 11:
      case 12:
        return Step(s);
      case 13:
      case 14:
        return Checkpoint(s);
      case 15:
      case 16:
        return Interruption(s);
      case 17:
        return Duplicate(s);
      case 18:
        return Ended(s);
      default:
        return Step(s);
    }
  }

  void Submitted(JobState* s) {
    static const char* const kAccel[] = {"tpu-v5p", "h100", "a100", "abacus",
                                         ""};
    static const char* const kWork[] = {"jax", "pytorch", ""};
    Event* e = Next(s);
    auto* j = e->mutable_job_submitted();
    s->chips = int64_t{1} << Pick(0, 11);
    j->set_chips(s->chips);
    j->set_accelerator(kAccel[Pick(0, 4)]);
    j->set_workload(static_cast<v1::JobSubmitted::Workload>(Pick(1, 4)));
    j->set_framework(kWork[Pick(0, 2)]);
    if (Coin()) (*j->mutable_labels())["team"] = Coin() ? "search" : "ads";
    if (Coin()) j->set_step_flops(1e15 * static_cast<double>(Pick(1, 100)));
    if (Coin()) j->set_step_bytes(1e12 * static_cast<double>(Pick(1, 100)));
  }

  void Allocation(JobState* s) {
    Next(s)->mutable_allocation()->set_chips(Coin() ? s->chips
                                                    : Pick(0, s->chips));
  }

  void Started(JobState* s) {
    s->use_attempts = Coin();
    ++s->attempts;
    Event* e = Next(s);
    if (s->use_attempts) {
      e->set_attempt(absl::StrCat("a", s->attempts));
    } else {
      e->clear_attempt();
    }
    e->mutable_started();
  }

  void Activity(JobState* s) {
    auto* a = Next(s)->mutable_activity();
    a->set_kind(static_cast<v1::Activity::Kind>(Pick(1, 10)));
    if (a->kind() == v1::Activity::CUSTOM) a->set_name(Coin() ? "eval" : "x");
    if (a->kind() == v1::Activity::RESTORE && Coin()) {
      a->set_step(std::max<int64_t>(0, s->step - Pick(-2, 20)));
    }
  }

  void Step(JobState* s) {
    switch (Pick(0, 5)) {
      case 0:
        break;  // repeat
      case 1:
        s->step = std::max<int64_t>(0, s->step - Pick(1, 5));
        break;
      case 2:
        s->step += Pick(2, 30);  // k-step report
        break;
      default:
        s->step += 1;
    }
    auto* st = Next(s)->mutable_step();
    st->set_step(s->step);
    if (Coin()) st->set_input_wait_seconds(Seconds());
    if (Coin()) st->set_idle_seconds(Seconds());
    if (Coin()) st->set_flops(1e15 * static_cast<double>(Pick(0, 200)));
    if (Coin()) st->set_bytes(1e12 * static_cast<double>(Pick(0, 200)));
  }

  // Small, sometimes larger than the step itself.
  double Seconds() { return static_cast<double>(Pick(0, 100000)) / 1000.0; }

  void Checkpoint(JobState* s) {
    Next(s)->mutable_checkpoint()->set_step(
        std::max<int64_t>(0, s->step - Pick(-1, 4)));
  }

  void Interruption(JobState* s) {
    auto* i = Next(s)->mutable_interruption();
    i->set_reason(static_cast<v1::Interruption::Reason>(Pick(1, 5)));
    i->set_notice(Pick(0, 3) == 0);
  }

  void Ended(JobState* s) {
    Next(s)->mutable_job_ended()->set_outcome(
        static_cast<v1::JobEnded::Outcome>(Pick(1, 3)));
  }

  // An exact copy of one of the job's earlier events (rule 3).
  void Duplicate(JobState* s) {
    if (s->sent.empty()) return Step(s);
    const size_t i = s->sent[Pick(0, s->sent.size() - 1)];
    const Event copy = log_[i];
    s->sent.push_back(log_.size());
    log_.push_back(copy);
  }

  void Heartbeat() {
    const int64_t host = Pick(0, 2);
    Event& e = log_.emplace_back();
    hb_ns_[host] += Pick(0, 400) * kNanosPerSecond;
    SetTime(kStartNs + hb_ns_[host], &e);
    e.set_host(absl::StrCat("host-", host));
    e.mutable_heartbeat()->set_chips(Pick(0, 256));
    e.mutable_heartbeat()->set_accelerator(host == 0 ? "h100" : "tpu-v5p");
  }

  FuzzedDataProvider& in_;
  std::vector<JobState> jobs_;
  std::vector<Event> log_;
  int64_t hb_ns_[3] = {0, 0, 0};
};

// --- Report invariants.

// Each job's [first event, end] in apply order, for the lifetime check.
struct Span {
  int64_t first_ns = 0;
  std::optional<int64_t> end_ns;
};

std::map<std::string, Span> Spans(const std::vector<Event>& events,
                                  int64_t as_of_ns) {
  std::vector<uint32_t> order;
  for (uint32_t i = 0; i < events.size(); ++i) {
    if (EventTimeNanos(events[i]) <= as_of_ns) order.push_back(i);
  }
  SortForApply(events, &order);
  std::map<std::string, Span> spans;
  for (uint32_t i : order) {
    const Event& e = events[i];
    if (e.has_heartbeat()) continue;
    auto [it, fresh] = spans.try_emplace(e.job_id());
    if (fresh) it->second.first_ns = EventTimeNanos(e);
    if (e.has_job_ended() && !it->second.end_ns) {
      it->second.end_ns = EventTimeNanos(e);
    }
  }
  return spans;
}

void CheckUnit(std::optional<double> v, const std::string& what) {
  if (!v) return;
  Check(*v >= -1e-9 && *v <= 1 + 1e-9, absl::StrCat(what, " = ", *v));
}

void CheckRatios(const Ratios& r, const std::string& who) {
  CheckUnit(r.sg, who + " sg");
  CheckUnit(r.rg, who + " rg");
  CheckUnit(r.goodput, who + " goodput");
  if (r.pg) Check(*r.pg >= 0, absl::StrCat(who, " pg = ", *r.pg));
}

void CheckJob(const JobReport& j, const Span& span, const Config& config,
              int64_t as_of_ns) {
  const std::string who = absl::StrCat("job ", j.job_id);
  int64_t sum = 0;
  for (int c = 0; c < kNumCategories; ++c) {
    Check(j.nanos[c] >= 0,
          absl::StrCat(who, " ", CategoryName(Category(c)), " = ", j.nanos[c]));
    sum += j.nanos[c];
  }
  const int64_t end = span.end_ns.value_or(as_of_ns);
  const int64_t life =
      std::max<int64_t>(0, end - std::max(span.first_ns, config.since_ns));
  Check(j.total_ns == life,
        absl::StrCat(who, " total_ns ", j.total_ns, " != lifetime ", life));
  Check(sum == j.total_ns,
        absl::StrCat(who, " categories sum ", sum, " != total ", j.total_ns));
  Check(j.at_risk_ns >= 0 && j.costed_productive_ns >= 0 &&
            j.ideal_seconds >= 0 && j.lost_steps >= 0,
        absl::StrCat(who, " negative: at_risk_ns ", j.at_risk_ns,
                     " costed_productive_ns ", j.costed_productive_ns,
                     " ideal_seconds ", j.ideal_seconds, " lost_steps ",
                     j.lost_steps));
  for (const auto& [name, ns] : j.custom_nanos) {
    Check(ns >= 0, absl::StrCat(who, " custom ", name, " = ", ns));
  }
  CheckRatios(JobRatios(j), who);
}

void CheckReport(const FleetReport& r, const std::vector<Event>& events,
                 const Config& config, int64_t as_of_ns) {
  const std::map<std::string, Span> spans = Spans(events, as_of_ns);
  for (const JobReport& j : r.jobs) {
    auto it = spans.find(j.job_id);
    Check(it != spans.end(), "report has unknown job " + j.job_id);
    CheckJob(j, it->second, config, as_of_ns);
  }
  CheckRatios(ComputeRatios(r.fleet).ratios, "fleet");
  for (const auto& [dim, values] : r.segments) {
    for (const auto& [value, totals] : values) {
      CheckRatios(ComputeRatios(totals).ratios, dim + "=" + value);
    }
  }
}

// --- Report equality (bit for bit: both sides apply the same order).

bool SameJob(const JobReport& a, const JobReport& b) {
  return a.job_id == b.job_id && a.chips == b.chips &&
         a.accelerator == b.accelerator && a.workload == b.workload &&
         a.framework == b.framework && a.labels == b.labels &&
         a.state == b.state && a.total_ns == b.total_ns && a.nanos == b.nanos &&
         a.custom_nanos == b.custom_nanos && a.at_risk_ns == b.at_risk_ns &&
         a.ideal_seconds == b.ideal_seconds &&
         a.costed_productive_ns == b.costed_productive_ns &&
         a.last_step == b.last_step && a.last_checkpoint == b.last_checkpoint &&
         a.lost_steps == b.lost_steps && a.interruptions == b.interruptions &&
         a.duplicates == b.duplicates && a.notices == b.notices &&
         a.checkpoints == b.checkpoints;
}

bool SameTotals(const Totals& a, const Totals& b) {
  return a.chip_seconds == b.chip_seconds &&
         a.total_chip_seconds == b.total_chip_seconds &&
         a.ideal_chip_seconds == b.ideal_chip_seconds &&
         a.costed_productive_chip_seconds == b.costed_productive_chip_seconds &&
         a.capacity_chip_seconds == b.capacity_chip_seconds &&
         a.jobs == b.jobs && a.jobs_without_chips == b.jobs_without_chips;
}

bool SameSegments(const FleetReport& a, const FleetReport& b) {
  if (a.segments.size() != b.segments.size()) return false;
  for (auto i = a.segments.begin(), k = b.segments.begin();
       i != a.segments.end(); ++i, ++k) {
    if (i->first != k->first || i->second.size() != k->second.size()) {
      return false;
    }
    for (auto x = i->second.begin(), y = k->second.begin();
         x != i->second.end(); ++x, ++y) {
      if (x->first != y->first || !SameTotals(x->second, y->second)) {
        return false;
      }
    }
  }
  return true;
}

void CheckSame(const FleetReport& a, const FleetReport& b,
               const std::string& what) {
  Check(a.as_of_ns == b.as_of_ns && a.since_ns == b.since_ns,
        what + ": as_of/since differ");
  Check(a.jobs.size() == b.jobs.size(), what + ": job counts differ");
  for (size_t i = 0; i < a.jobs.size(); ++i) {
    Check(SameJob(a.jobs[i], b.jobs[i]),
          absl::StrCat(what, ": job ", a.jobs[i].job_id, " differs"));
  }
  Check(SameTotals(a.fleet, b.fleet), what + ": fleet totals differ");
  Check(SameSegments(a, b), what + ": segments differ");
}

// --- Recognition.

void CheckNotBelow(const Recognized& now, const Recognized& before,
                   const std::string& who) {
  for (int c = 0; c < kNumCategories; ++c) {
    Check(now.nanos[c] >= before.nanos[c],
          absl::StrCat(who, " recognized ", CategoryName(Category(c)),
                       " fell from ", before.nanos[c], " to ", now.nanos[c]));
  }
  const std::pair<const char*, double> kFields[] = {
      {"costed_productive_ns",
       static_cast<double>(now.costed_productive_ns -
                           before.costed_productive_ns)},
      // A sum minus a pending part in doubles: rounding may take back a
      // few ulps (JobLedger keeps the high-water mark).
      {"ideal_seconds", now.ideal_seconds - before.ideal_seconds +
                            1e-9 * std::max(1.0, before.ideal_seconds)},
      {"pg_above_one_steps",
       static_cast<double>(now.pg_above_one_steps - before.pg_above_one_steps)},
      {"duplicates", static_cast<double>(now.duplicates - before.duplicates)}};
  for (const auto& [name, gain] : kFields) {
    Check(gain >= 0,
          absl::StrCat(who, " recognized ", name, " fell by ", -gain));
  }
  for (int i = 0; i < kNumReasons; ++i) {
    Check(now.interruptions[i] >= before.interruptions[i] &&
              now.notices[i] >= before.notices[i],
          who + " recognized interruptions/notices fell");
  }
  Check(now.at_risk_ns >= 0, who + " recognized at_risk < 0");
}

void CheckLedger(JobLedger* ledger, const Recognized& now,
                 const std::string& who) {
  const CounterIncrease up = ledger->Update(now);
  for (int c = 0; c < kNumCategories; ++c) {
    Check(up.nanos[c] >= 0 && up.clamped[c] == 0,
          absl::StrCat(who, " ledger ", CategoryName(Category(c)), " increase ",
                       up.nanos[c], " clamped ", up.clamped[c]));
  }
}

// An ended job's counters against its report (docs/metrics.md).
void CheckEnded(const JobTracker& job, int64_t as_of_ns) {
  const Recognized r = job.Recognize();
  const JobReport report = job.Report(as_of_ns);
  const std::string who = "ended job " + job.job_id();
  int64_t sum = 0;
  for (int c = 0; c < kNumCategories; ++c) {
    sum += r.nanos[c];
    const Category cat = Category(c);
    if (cat == Category::kCompile || cat == Category::kProductive ||
        cat == Category::kLost) {
      continue;
    }
    Check(r.nanos[c] == report.nanos[c],
          absl::StrCat(who, " recognized ", CategoryName(cat), " ", r.nanos[c],
                       " != report ", report.nanos[c]));
  }
  Check(sum == report.total_ns, absl::StrCat(who, " recognized sum ", sum,
                                             " != total ", report.total_ns));
  Check(r.at_risk_ns == 0, who + " still has time at risk");
}

// --- The live path.

// Applies `events` in apply order to one FleetTracker, checking recognition
// after every event and comparing reports with ReplayEvents at as-ofs that
// fall between distinct event times (`checks` picks which).
class LivePath {
 public:
  LivePath(const std::vector<Event>& events, const Config& config)
      : events_(events), config_(config), fleet_(&config_) {
    for (uint32_t i = 0; i < events_.size(); ++i) order_.push_back(i);
    SortForApply(events_, &order_);
  }

  // Applies everything; `check_at` are positions in apply order after which
  // to compare (as of that event's time), `recognize` whether to check
  // recognition (exact only without a window).
  void Run(const std::vector<size_t>& check_at, bool recognize) {
    for (size_t k = 0; k < order_.size(); ++k) {
      const Event& e = events_[order_[k]];
      const bool applied = fleet_.Apply(e).ok();
      if (applied && recognize && !e.has_heartbeat()) Recognize(e.job_id());
      if (std::binary_search(check_at.begin(), check_at.end(), k)) {
        Compare(k);
      }
    }
  }

  const FleetTracker& fleet() const { return fleet_; }

 private:
  void Recognize(const std::string& id) {
    const JobTracker* job = fleet_.FindJob(id);
    Check(job != nullptr, "applied event but no job " + id);
    const Recognized now = job->Recognize();
    CheckNotBelow(now, last_[id], "job " + id);
    CheckLedger(&ledgers_[id], now, "job " + id);
    last_[id] = now;
  }

  // Compares as of the time of the k-th event, if no later event shares it.
  void Compare(size_t k) {
    const int64_t t = EventTimeNanos(events_[order_[k]]);
    if (k + 1 < order_.size() && EventTimeNanos(events_[order_[k + 1]]) == t) {
      return;
    }
    const FleetReport live = fleet_.Report(t);
    CheckReport(live, events_, config_, t);
    CheckSame(live, ReplayEvents(events_, config_, t),
              absl::StrCat("live vs replay as of event ", k));
  }

  const std::vector<Event>& events_;
  const Config config_;
  FleetTracker fleet_;
  std::vector<uint32_t> order_;
  std::map<std::string, Recognized> last_;
  std::map<std::string, JobLedger> ledgers_;
};

// --- The harness.

Config FuzzConfig(FuzzedDataProvider* in) {
  static const int64_t kStall[] = {600, 30, 1};
  static const int64_t kHost[] = {300, 10};
  Config config;
  config.stall_after_ns =
      kStall[in->ConsumeIntegralInRange(0, 2)] * kNanosPerSecond;
  config.host_timeout_ns =
      kHost[in->ConsumeIntegralInRange(0, 1)] * kNanosPerSecond;
  return config;
}

void CheckEvents(const std::vector<Event>& events) {
  const codec::ValidationLimits limits;
  for (const Event& e : events) {
    const absl::Status s = codec::ValidateEvent(e, limits);
    Check(s.ok(), "harness made an invalid event: " + s.ToString() + "\n" +
                      e.DebugString());
  }
}

// The same events with jobs' (and hosts') relative order kept but the
// interleaving reversed: the report must not change.
std::vector<Event> Reinterleave(const std::vector<Event>& events) {
  std::vector<Event> out = events;
  std::stable_sort(out.begin(), out.end(), [](const Event& a, const Event& b) {
    return std::tie(b.job_id(), b.host()) < std::tie(a.job_id(), a.host());
  });
  return out;
}

int64_t MaxTime(const std::vector<Event>& events) {
  int64_t t = kStartNs;
  for (const Event& e : events) t = std::max(t, EventTimeNanos(e));
  return t;
}

// Positions in apply order (of `n` events) from fractions of 256.
std::vector<size_t> CheckPositions(const std::vector<uint8_t>& fractions,
                                   size_t n) {
  std::vector<size_t> at;
  if (n == 0) return at;
  for (uint8_t f : fractions) at.push_back(f * n / 256);
  at.push_back(n - 1);
  std::sort(at.begin(), at.end());
  return at;
}

void Replays(const std::vector<Event>& events, const Config& config,
             int64_t as_of) {
  const FleetReport base = ReplayEvents(events, config, as_of);
  CheckReport(base, events, config, as_of);
  CheckSame(base, ReplayEvents(events, config, as_of), "replay twice");
  CheckSame(base, ReplayEvents(Reinterleave(events), config, as_of),
            "replay reinterleaved");
}

void Live(const std::vector<Event>& events, const Config& config,
          const std::vector<size_t>& check_at, int64_t as_of) {
  LivePath live(events, config);
  live.Run(check_at, /*recognize=*/true);
  const FleetReport final_report = live.fleet().Report(as_of);
  CheckSame(final_report, ReplayEvents(events, config, as_of),
            "live vs replay at the end");
  for (const JobReport& j : final_report.jobs) {
    const JobTracker* job = live.fleet().FindJob(j.job_id);
    if (job->ended()) CheckEnded(*job, as_of);
  }
}

void Windowed(const std::vector<Event>& events, Config config,
              const std::vector<size_t>& check_at, int64_t since,
              int64_t as_of) {
  config.since_ns = since;
  Replays(events, config, as_of);
  LivePath live(events, config);
  live.Run(check_at, /*recognize=*/false);
  CheckSame(live.fleet().Report(as_of), ReplayEvents(events, config, as_of),
            "windowed live vs replay at the end");
}

}  // namespace
}  // namespace goodput::core

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace goodput::core;  // NOLINT: harness entry point
  FuzzedDataProvider in(data, size);
  const Config config = FuzzConfig(&in);
  const int64_t tail_ns =
      in.ConsumeIntegralInRange<int64_t>(0, 2000) * kNanosPerSecond;
  const int64_t since_back_ns =
      in.ConsumeIntegralInRange<int64_t>(0, 4000) * kNanosPerSecond;
  const std::vector<uint8_t> fractions = in.ConsumeBytes<uint8_t>(kAsOfChecks);
  const std::vector<goodput::v1::Event> events = LogBuilder(&in).Build();
  const std::vector<size_t> check_at = CheckPositions(fractions, events.size());
  current_log = &events;
  CheckEvents(events);
  const int64_t as_of = MaxTime(events) + tail_ns;
  Replays(events, config, as_of);
  Live(events, config, check_at, as_of);
  Windowed(events, config, check_at, as_of - since_back_ns, as_of);
  current_log = nullptr;
  return 0;
}
