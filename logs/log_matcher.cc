#include "logs/log_matcher.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "util/proto_time.h"

namespace goodput::logs {
namespace {

re2::StringPiece Piece(absl::string_view s) {
  return re2::StringPiece(s.data(), s.size());
}

absl::string_view View(const re2::StringPiece& s) {
  return absl::string_view(s.data(), s.size());
}

// Where a rule's error comes from: "profile P: rule N (kind)".
std::string RuleContext(const LogProfile& profile, const LogRule& rule) {
  size_t index = &rule - profile.rules.data();
  return absl::StrCat("profile ", profile.name, ": rule ", index + 1, " (",
                      LogRuleKindName(rule.kind), ") pattern '", rule.pattern,
                      "'");
}

// Up to this many capturing groups are read per rule; more is an error at
// match time only if a known capture lies beyond it.
constexpr int kMaxGroups = 16;

// Adds the rule's step_offset to a captured step; the result must be >= 0.
absl::Status OffsetStep(const LogProfile& profile, const LogRule& rule,
                        absl::string_view text, int64_t* step) {
  *step += rule.step_offset;
  if (*step >= 0) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat(RuleContext(profile, rule), ": capture 'step' = '", text,
                   "' plus step_offset ", rule.step_offset, " is below 0"));
}

}  // namespace

LogMatcher::LogMatcher(const LogProfile& profile, MatcherOptions options)
    : profile_(profile), options_(std::move(options)) {
  attempt_ = options_.attempt.empty() ? options_.attempt_before_start
                                      : options_.attempt;
  last_time_ns_ = options_.initial_time_ns;
}

MatcherState LogMatcher::state() const {
  return MatcherState{attempts_, last_step_, ended_, last_time_ns_};
}

void LogMatcher::set_state(const MatcherState& state) {
  attempts_ = state.attempts;
  last_step_ = state.last_step;
  ended_ = state.ended;
  last_time_ns_ = state.last_time_ns;
  if (options_.attempt.empty() && attempts_ > 0) {
    attempt_ = absl::StrCat(attempts_);
  }
}

absl::Status LogMatcher::Match(absl::string_view line, int64_t read_time_ns,
                               std::vector<v1::Event>* out) {
  last_rule_ = -1;
  hits_.clear();
  if (!profile_.any->Match(Piece(line), &hits_)) return absl::OkStatus();
  last_rule_ = *std::min_element(hits_.begin(), hits_.end());
  const LogRule& rule = profile_.rules[last_rule_];
  Captures c;
  if (absl::Status s = Capture(rule, line, read_time_ns, &c); !s.ok()) {
    return s;
  }
  if (ended_ && rule.kind != LogRuleKind::kStart) {
    ++dropped_;
    return absl::OkStatus();
  }
  Apply(rule, c, out);
  return absl::OkStatus();
}

absl::Status LogMatcher::Capture(const LogRule& rule, absl::string_view line,
                                 int64_t read_time_ns, Captures* c) {
  re2::StringPiece groups[kMaxGroups + 1];
  const int n = std::min(rule.groups, kMaxGroups) + 1;
  if (!rule.re->Match(Piece(line), 0, line.size(), RE2::UNANCHORED, groups,
                      n)) {
    return absl::InternalError(absl::StrCat(RuleContext(profile_, rule),
                                            ": the set matched, the rule not"));
  }
  // A group that took no part in the match (an optional one) is absent.
  auto got = [&](int i) { return i > 0 && i < n && groups[i].data(); };
  auto group = [&](int i) { return View(groups[i]); };
  absl::Status s = CaptureNumbers(rule, groups, n, c);
  if (!s.ok()) return s;
  if (got(rule.time_group)) {
    return CaptureTime(rule, group(rule.time_group), &c->time_ns);
  }
  c->time_ns = read_time_ns >= 0 ? read_time_ns : UntimedLineTime(rule, *c);
  if (c->time_ns < 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        RuleContext(profile_, rule),
        ": the line has no timestamp and no earlier line had one"));
  }
  return absl::OkStatus();
}

absl::Status LogMatcher::CaptureNumbers(const LogRule& rule,
                                        const re2::StringPiece* groups, int n,
                                        Captures* c) {
  auto got = [&](int i) { return i > 0 && i < n && groups[i].data(); };
  auto group = [&](int i) { return View(groups[i]); };
  absl::Status s;
  if (got(rule.step_group)) {
    s = CaptureInt(rule, "step", group(rule.step_group), &c->step);
    if (s.ok())
      s = OffsetStep(profile_, rule, group(rule.step_group), &c->step);
  }
  if (s.ok() && got(rule.steps_group)) {
    s = CaptureInt(rule, "steps", group(rule.steps_group), &c->steps);
  }
  if (s.ok() && got(rule.flops_group)) {
    s = CaptureNumber(rule, "flops", group(rule.flops_group), &c->flops);
  }
  if (s.ok() && got(rule.tokens_group)) {
    s = CaptureNumber(rule, "tokens", group(rule.tokens_group), &c->tokens);
  }
  if (s.ok() && got(rule.step_time_group)) {
    s = CaptureNumber(rule, "step_time", group(rule.step_time_group),
                      &c->step_seconds);
    c->step_seconds *= rule.step_time_scale;
  }
  return s;
}

int64_t LogMatcher::UntimedLineTime(const LogRule& rule, const Captures& c) {
  if (c.step_seconds < 0 || last_time_ns_ < 0) return last_time_ns_;
  int64_t steps = c.steps >= 0 ? c.steps : rule.steps_per_line;
  if (c.step >= 0) steps = std::max<int64_t>(c.step - last_step_, 0);
  last_time_ns_ += std::llround(c.step_seconds * 1e9 * steps);
  return last_time_ns_;
}

absl::Status LogMatcher::CaptureTime(const LogRule& rule,
                                     absl::string_view text, int64_t* ns) {
  std::string value(text);
  std::string format = profile_.time_format;
  if (!profile_.time_format_has_year) {
    value = absl::StrCat(options_.default_year, " ", value);
    format = absl::StrCat("%Y ", format);
  }
  absl::Time t;
  std::string error;
  if (!absl::ParseTime(format, value, profile_.time_zone, &t, &error)) {
    return absl::InvalidArgumentError(absl::StrCat(
        RuleContext(profile_, rule), ": capture 'time' = '", text,
        "' does not match time_format '", profile_.time_format, "': ", error));
  }
  *ns = absl::ToUnixNanos(t);
  last_time_ns_ = *ns;
  return absl::OkStatus();
}

absl::Status LogMatcher::CaptureNumber(const LogRule& rule, const char* name,
                                       absl::string_view text, double* value) {
  if (absl::SimpleAtod(text, value) && std::isfinite(*value) && *value >= 0) {
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(
      absl::StrCat(RuleContext(profile_, rule), ": capture '", name, "' = '",
                   text, "' is not a number >= 0"));
}

absl::Status LogMatcher::CaptureInt(const LogRule& rule, const char* name,
                                    absl::string_view text, int64_t* value) {
  if (absl::SimpleAtoi(text, value) && *value >= 0) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat(RuleContext(profile_, rule), ": capture '", name, "' = '",
                   text, "' is not an integer >= 0"));
}

void LogMatcher::Apply(const LogRule& rule, const Captures& c,
                       std::vector<v1::Event>* out) {
  switch (rule.kind) {
    case LogRuleKind::kStart:
      return ApplyStart(rule, c, out);
    case LogRuleKind::kInit:
      return AddActivity(v1::Activity::INIT, c, out);
    case LogRuleKind::kPrep:
      return AddActivity(v1::Activity::PREP, c, out);
    case LogRuleKind::kCompile:
      return AddActivity(v1::Activity::COMPILE, c, out);
    case LogRuleKind::kDataWait:
      return AddActivity(v1::Activity::DATA_WAIT, c, out);
    case LogRuleKind::kCustom:
      AddActivity(v1::Activity::CUSTOM, c, out);
      out->back().mutable_activity()->set_name(rule.name);
      return;
    case LogRuleKind::kTraining:
      return AddActivity(v1::Activity::TRAINING, c, out);
    case LogRuleKind::kStep:
      return ApplyStep(rule, c, out);
    case LogRuleKind::kCheckpointStart:
      saving_ = true;
      save_step_ = c.step;
      return AddActivity(v1::Activity::CHECKPOINT, c, out);
    case LogRuleKind::kCheckpointDone:
      return ApplyCheckpointDone(c, out);
    case LogRuleKind::kRestoreStart:
    case LogRuleKind::kRestoreDone:
      return ApplyRestore(rule, c, out);
    case LogRuleKind::kInterruption:
      NewEvent(c, out)->mutable_interruption()->set_reason(rule.reason);
      return;
    case LogRuleKind::kEnd:
      return ApplyEnd(c, out);
  }
}

void LogMatcher::ApplyStart(const LogRule& rule, const Captures& c,
                            std::vector<v1::Event>* out) {
  ended_ = false;
  saving_ = false;
  restore_step_ = false;
  last_step_ = 0;
  if (options_.attempt.empty()) attempt_ = absl::StrCat(++attempts_);
  if (options_.lifecycle) NewEvent(c, out)->mutable_started();
  if (rule.then != v1::Activity::KIND_UNSPECIFIED) {
    AddActivity(rule.then, c, out);
  }
}

void LogMatcher::ApplyStep(const LogRule& rule, const Captures& c,
                           std::vector<v1::Event>* out) {
  if (c.step >= 0) {
    last_step_ = c.step;
  } else {
    last_step_ += c.steps >= 0 ? c.steps : rule.steps_per_line;
  }
  v1::Step* step = NewEvent(c, out)->mutable_step();
  step->set_step(last_step_);
  if (c.flops >= 0) {
    step->set_flops(c.flops);
  } else if (c.tokens >= 0) {
    step->set_flops(c.tokens * profile_.flops_per_token);
  }
  saving_ = false;
}

void LogMatcher::ApplyCheckpointDone(const Captures& c,
                                     std::vector<v1::Event>* out) {
  int64_t step = c.step >= 0 ? c.step : last_step_;
  if (c.step < 0 && saving_ && save_step_ >= 0) step = save_step_;
  NewEvent(c, out)->mutable_checkpoint()->set_step(step);
  if (saving_) AddActivity(v1::Activity::TRAINING, c, out);
  saving_ = false;
}

void LogMatcher::ApplyRestore(const LogRule& rule, const Captures& c,
                              std::vector<v1::Event>* out) {
  const bool done = rule.kind == LogRuleKind::kRestoreDone;
  if (!done || (c.step >= 0 && !restore_step_)) {
    AddActivity(v1::Activity::RESTORE, c, out);
    if (c.step >= 0 && !restore_step_) {
      out->back().mutable_activity()->set_step(c.step);
      restore_step_ = true;
    }
  }
  if (c.step >= 0) last_step_ = c.step;
  if (done && rule.then != v1::Activity::KIND_UNSPECIFIED) {
    AddActivity(rule.then, c, out);
  }
}

void LogMatcher::ApplyEnd(const Captures& c, std::vector<v1::Event>* out) {
  ended_ = true;
  if (!options_.lifecycle) return;
  NewEvent(c, out)->mutable_job_ended()->set_outcome(v1::JobEnded::SUCCEEDED);
}

v1::Event* LogMatcher::NewEvent(const Captures& c,
                                std::vector<v1::Event>* out) {
  v1::Event& e = out->emplace_back();
  *e.mutable_time() = NanosToTimestamp(c.time_ns);
  e.set_job_id(options_.job_id);
  if (!attempt_.empty()) e.set_attempt(attempt_);
  return &e;
}

void LogMatcher::AddActivity(v1::Activity::Kind kind, const Captures& c,
                             std::vector<v1::Event>* out) {
  NewEvent(c, out)->mutable_activity()->set_kind(kind);
}

}  // namespace goodput::logs
