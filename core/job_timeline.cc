#include "core/job_timeline.h"

#include <algorithm>
#include <cstdint>
#include <utility>

#include "absl/strings/str_cat.h"
#include "core/event_order.h"

namespace goodput::core {
namespace {

using Kind = TimelineEntry::Kind;

// An attempt's state before its first activity or step (SPEC rule 2).
constexpr char kNothingReported[] = "IDLE";

// The text of an activity span, e.g. "CUSTOM eval" or "RESTORE step 500".
std::string ActivityText(const v1::Activity& a) {
  std::string text = v1::Activity::Kind_Name(a.kind());
  if (a.kind() == v1::Activity::CUSTOM && !a.name().empty()) {
    absl::StrAppend(&text, " ", a.name());
  }
  if (a.kind() == v1::Activity::RESTORE && a.has_step()) {
    absl::StrAppend(&text, " step ", a.step());
  }
  return text;
}

// Walks one job's events in apply order and appends timeline entries.
// Not thread-safe; one per BuildJobTimeline call.
class TimelineBuilder {
 public:
  explicit TimelineBuilder(std::vector<TimelineEntry>* out) : out_(out) {}

  void Apply(const v1::Event& e);
  void Finish(int64_t as_of_ns);

 private:
  void Submitted(const v1::Event& e);
  void Allocation(const v1::Event& e);
  void Started(const v1::Event& e);
  void Activity(const v1::Event& e);
  void Step(const v1::Event& e);
  void Checkpoint(const v1::Event& e);
  void Interruption(const v1::Event& e);
  void Ended(const v1::Event& e);

  // Starts an attempt (named by the event's attempt, else "#N") that has
  // reported nothing yet; `mark` adds a STARTED mark.
  void StartAttempt(const v1::Event& e, bool mark);
  // The attempt's first report is a step: its spans so far were stepping.
  void GapWasStepping();
  // Closes the open span at `t` and opens (attempt_, `what`) unless that
  // is already open.
  void Open(int64_t t, const std::string& what);
  void Close(int64_t t, bool ongoing);
  void Mark(int64_t t, const std::string& attempt, std::string what);
  std::string SteppingKind() const { return serving_ ? "SERVING" : "TRAINING"; }
  bool Stepping() const {
    return span_ && (span_->what == "TRAINING" || span_->what == "SERVING");
  }

  std::vector<TimelineEntry>* out_;
  std::optional<TimelineEntry> span_;
  std::string attempt_;   // "" outside an attempt
  std::string activity_;  // the attempt's current activity text
  int attempts_ = 0;
  int64_t requested_ = 0;
  bool serving_ = false;
  bool ran_ = false;       // ever all-allocated or started
  bool reported_ = false;  // the attempt sent an activity or step
  bool ended_ = false;
};

void TimelineBuilder::Apply(const v1::Event& e) {
  // An exclusion changes no state (docs/semantics.md, "Exclusions").
  if (ended_ || e.has_exclusion()) return;
  if (!span_ && !e.has_job_submitted()) Open(EventTimeNanos(e), "QUEUED");
  switch (e.body_case()) {
    case v1::Event::kJobSubmitted:
      return Submitted(e);
    case v1::Event::kAllocation:
      return Allocation(e);
    case v1::Event::kStarted:
      return Started(e);
    case v1::Event::kActivity:
      return Activity(e);
    case v1::Event::kStep:
      return Step(e);
    case v1::Event::kCheckpoint:
      return Checkpoint(e);
    case v1::Event::kInterruption:
      return Interruption(e);
    case v1::Event::kJobEnded:
      return Ended(e);
    default:
      return;
  }
}

void TimelineBuilder::Submitted(const v1::Event& e) {
  // Rule 14: an elastic job is all-allocated from min_chips.
  const v1::JobSubmitted& s = e.job_submitted();
  requested_ = s.has_min_chips() && s.chips() > 0 && s.min_chips() > 0
                   ? std::min(s.min_chips(), s.chips())
                   : s.chips();
  serving_ = e.job_submitted().workload() == v1::JobSubmitted::SERVING ||
             e.job_submitted().workload() == v1::JobSubmitted::BULK_INFERENCE;
  if (!span_) Open(EventTimeNanos(e), "QUEUED");
}

void TimelineBuilder::Allocation(const v1::Event& e) {
  const int64_t chips = e.allocation().chips();
  const int64_t t = EventTimeNanos(e);
  if (chips > 0 && chips >= requested_) {
    ran_ = true;
    Open(t, attempt_.empty() ? "ALLOCATED" : activity_);
    return;
  }
  Open(t, ran_ ? "RECOVERING" : "QUEUED");
}

void TimelineBuilder::Started(const v1::Event& e) {
  if (!e.attempt().empty() && e.attempt() == attempt_) return;  // duplicate
  StartAttempt(e, true);
}

void TimelineBuilder::Activity(const v1::Event& e) {
  if (attempt_.empty()) StartAttempt(e, false);
  reported_ = true;
  activity_ = ActivityText(e.activity());
  Open(EventTimeNanos(e), activity_);
}

void TimelineBuilder::Step(const v1::Event& e) {
  if (attempt_.empty()) StartAttempt(e, false);
  if (!reported_) GapWasStepping();
  if (!Stepping()) {
    activity_ = SteppingKind();
    Open(EventTimeNanos(e), activity_);
  }
  const int64_t step = e.step().step();
  if (!span_->first_step) span_->first_step = step;
  if (!span_->last_step || step > *span_->last_step) span_->last_step = step;
}

void TimelineBuilder::Checkpoint(const v1::Event& e) {
  ++span_->checkpoints;
  const int64_t step = e.checkpoint().step();
  if (!span_->last_checkpoint || step > *span_->last_checkpoint) {
    span_->last_checkpoint = step;
  }
}

void TimelineBuilder::Interruption(const v1::Event& e) {
  const v1::Interruption& i = e.interruption();
  const std::string reason = v1::Interruption::Reason_Name(i.reason());
  const int64_t t = EventTimeNanos(e);
  if (i.notice() || attempt_.empty()) {
    Mark(t, attempt_,
         absl::StrCat(i.notice() ? "NOTICE " : "INTERRUPTED ", reason));
    return;
  }
  Close(t, false);
  Mark(t, attempt_, "INTERRUPTED " + reason);
  attempt_.clear();
  ran_ = true;
  Open(t, "RECOVERING");
}

void TimelineBuilder::Ended(const v1::Event& e) {
  const int64_t t = EventTimeNanos(e);
  Close(t, false);
  Mark(t, attempt_,
       "ENDED " + v1::JobEnded::Outcome_Name(e.job_ended().outcome()));
  ended_ = true;
}

void TimelineBuilder::StartAttempt(const v1::Event& e, bool mark) {
  const int64_t t = EventTimeNanos(e);
  Close(t, false);
  ++attempts_;
  attempt_ = e.attempt().empty() ? absl::StrCat("#", attempts_) : e.attempt();
  ran_ = true;
  if (mark) Mark(t, attempt_, "STARTED");
  activity_ = kNothingReported;
  reported_ = false;
  Open(t, activity_);
}

void TimelineBuilder::GapWasStepping() {
  reported_ = true;
  activity_ = SteppingKind();
  if (span_ && span_->what == kNothingReported) span_->what = activity_;
  for (auto it = out_->rbegin(); it != out_->rend() && it->attempt == attempt_;
       ++it) {
    if (it->kind == Kind::kSpan && it->what == kNothingReported) {
      it->what = activity_;
    }
  }
}

void TimelineBuilder::Open(int64_t t, const std::string& what) {
  if (span_ && span_->attempt == attempt_ && span_->what == what) return;
  Close(t, false);
  span_.emplace();
  span_->start_ns = span_->end_ns = t;
  span_->attempt = attempt_;
  span_->what = what;
}

void TimelineBuilder::Close(int64_t t, bool ongoing) {
  if (!span_) return;
  span_->end_ns = t;
  span_->ongoing = ongoing;
  const bool empty = t == span_->start_ns && !span_->first_step &&
                     span_->checkpoints == 0 && !ongoing;
  if (!empty) out_->push_back(*std::move(span_));
  span_.reset();
}

void TimelineBuilder::Mark(int64_t t, const std::string& attempt,
                           std::string what) {
  TimelineEntry& m = out_->emplace_back();
  m.kind = Kind::kMark;
  m.start_ns = m.end_ns = t;
  m.attempt = attempt;
  m.what = std::move(what);
}

void TimelineBuilder::Finish(int64_t as_of_ns) {
  if (span_) Close(std::max(as_of_ns, span_->start_ns), true);
}

}  // namespace

std::vector<TimelineEntry> BuildJobTimeline(
    const std::vector<v1::Event>& events, int64_t as_of_ns) {
  std::vector<uint32_t> order;
  for (uint32_t i = 0; i < events.size(); ++i) {
    if (EventTimeNanos(events[i]) <= as_of_ns) order.push_back(i);
  }
  SortForApply(events, &order);
  std::vector<TimelineEntry> out;
  TimelineBuilder builder(&out);
  for (uint32_t i : order) builder.Apply(events[i]);
  builder.Finish(as_of_ns);
  // Spans are appended when they close: put everything in time order, a
  // mark before a span that starts at its time.
  std::stable_sort(out.begin(), out.end(),
                   [](const TimelineEntry& a, const TimelineEntry& b) {
                     auto key = [](const TimelineEntry& e) {
                       return std::make_pair(e.start_ns, e.kind != Kind::kMark);
                     };
                     return key(a) < key(b);
                   });
  return out;
}

}  // namespace goodput::core
