#include "codec/event_validator.h"

#include <cmath>
#include <initializer_list>
#include <string>

#include "absl/numeric/int128.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/util/time_util.h"

namespace goodput {
namespace codec {
namespace {

using absl::Status;
using google::protobuf::util::TimeUtil;

constexpr int64_t kNanosPerSecond = 1000 * 1000 * 1000;

Status Invalid(absl::string_view field, absl::string_view problem,
               absl::string_view got) {
  return absl::InvalidArgumentError(
      absl::StrCat(field, ": ", problem, ", got ", got));
}

// The first non-OK status, in order.
Status FirstError(std::initializer_list<Status> checks) {
  for (const Status& status : checks) {
    if (!status.ok()) return status;
  }
  return absl::OkStatus();
}

// A string value for a message: quoted, escaped, long ones cut.
std::string Quote(absl::string_view value) {
  constexpr size_t kShown = 40;
  return absl::StrCat("\"", absl::CHexEscape(value.substr(0, kShown)),
                      value.size() > kShown ? "\"..." : "\"");
}

Status CheckSize(absl::string_view field, absl::string_view value,
                 const ValidationLimits& limits) {
  if (value.size() <= limits.max_string_bytes) return absl::OkStatus();
  return Invalid(
      field,
      absl::StrCat("must be at most ", limits.max_string_bytes, " bytes"),
      absl::StrCat(value.size(), " bytes ", Quote(value)));
}

// FLOPs, bytes and seconds: finite and not negative.
Status CheckAmount(absl::string_view field, double value) {
  if (std::isfinite(value) && value >= 0) return absl::OkStatus();
  return Invalid(field, "must be finite and >= 0", absl::StrCat(value));
}

// An amount (CheckAmount) at most `max`, the flag `flag`.
Status CheckBoundedAmount(absl::string_view field, double value, double max,
                          absl::string_view flag) {
  if (Status s = CheckAmount(field, value); !s.ok()) return s;
  if (value <= max) return absl::OkStatus();
  return Invalid(field, absl::StrCat("must be at most ", max, " (", flag, ")"),
                 absl::StrCat(value));
}

// A count (chips, a step number) in [min, max], the flag `flag`.
Status CheckCount(absl::string_view field, int64_t value, int64_t min,
                  int64_t max, absl::string_view flag) {
  if (value < min) {
    return Invalid(field, absl::StrCat("must be >= ", min),
                   absl::StrCat(value));
  }
  if (value <= max) return absl::OkStatus();
  return Invalid(field, absl::StrCat("must be at most ", max, " (", flag, ")"),
                 absl::StrCat(value));
}

Status CheckChips(absl::string_view field, int64_t value, int64_t min,
                  const ValidationLimits& limits) {
  return CheckCount(field, value, min, limits.max_chips, "--max_chips");
}

Status CheckStepNumber(absl::string_view field, int64_t value,
                       const ValidationLimits& limits) {
  return CheckCount(field, value, 0, limits.max_step, "--max_step");
}

// Rejects 0 (*_UNSPECIFIED) and numbers the schema does not name.
Status CheckEnum(absl::string_view field, int value,
                 const google::protobuf::EnumDescriptor* type) {
  const auto* known = type->FindValueByNumber(value);
  if (value != 0 && known != nullptr) return absl::OkStatus();
  std::string expected;
  for (int i = 0; i < type->value_count(); ++i) {
    if (type->value(i)->number() == 0) continue;
    absl::StrAppend(&expected, expected.empty() ? "" : ", ",
                    type->value(i)->name());
  }
  return absl::InvalidArgumentError(absl::StrCat(
      field, ": missing or unknown value ", value,
      known != nullptr ? absl::StrCat(" (", known->name(), ")") : "",
      "; expected one of ", expected));
}

Status CheckLabels(const v1::JobSubmitted& job,
                   const ValidationLimits& limits) {
  const size_t count = static_cast<size_t>(job.labels_size());
  if (count > limits.max_labels) {
    return Invalid(
        "job_submitted.labels",
        absl::StrCat("must have at most ", limits.max_labels, " labels"),
        absl::StrCat(count));
  }
  for (const auto& [key, value] : job.labels()) {
    Status status = CheckSize("job_submitted.labels key", key, limits);
    if (status.ok() && value.size() > limits.max_string_bytes) {
      status = CheckSize(absl::StrCat("job_submitted.labels[", Quote(key), "]"),
                         value, limits);
    }
    if (!status.ok()) return status;
  }
  return absl::OkStatus();
}

// Rule 14: an elastic job's min_chips needs chips and lies in (0, chips].
Status CheckMinChips(const v1::JobSubmitted& job) {
  if (!job.has_min_chips()) return absl::OkStatus();
  const int64_t min = job.min_chips();
  if (job.chips() <= 0) {
    return Invalid("job_submitted.min_chips", "needs job_submitted.chips > 0",
                   absl::StrCat(min, " with chips ", job.chips()));
  }
  if (min <= 0) {
    return Invalid("job_submitted.min_chips", "must be > 0", absl::StrCat(min));
  }
  if (min <= job.chips()) return absl::OkStatus();
  return Invalid(
      "job_submitted.min_chips",
      absl::StrCat("must be at most job_submitted.chips (", job.chips(), ")"),
      absl::StrCat(min));
}

Status CheckJobSubmitted(const v1::JobSubmitted& job,
                         const ValidationLimits& limits) {
  return FirstError(
      {CheckMinChips(job),
       job.chips() > 0
           ? CheckChips("job_submitted.chips", job.chips(), 1, limits)
           : Invalid("job_submitted.chips", "must be > 0",
                     absl::StrCat(job.chips())),
       CheckEnum("job_submitted.workload", job.workload(),
                 v1::JobSubmitted::Workload_descriptor()),
       CheckSize("job_submitted.accelerator", job.accelerator(), limits),
       CheckSize("job_submitted.framework", job.framework(), limits),
       CheckLabels(job, limits),
       CheckBoundedAmount("job_submitted.step_flops", job.step_flops(),
                          limits.max_flops, "--max_flops"),
       CheckBoundedAmount("job_submitted.step_bytes", job.step_bytes(),
                          limits.max_bytes, "--max_bytes")});
}

Status CheckActivity(const v1::Activity& activity,
                     const ValidationLimits& limits) {
  return FirstError(
      {CheckEnum("activity.kind", activity.kind(),
                 v1::Activity::Kind_descriptor()),
       activity.has_step()
           ? CheckStepNumber("activity.step", activity.step(), limits)
           : absl::OkStatus(),
       CheckSize("activity.name", activity.name(), limits),
       activity.kind() == v1::Activity::CUSTOM && activity.name().empty()
           ? absl::InvalidArgumentError("activity.name: required for CUSTOM")
           : absl::OkStatus()});
}

Status CheckStep(const v1::Step& step, const ValidationLimits& limits) {
  return FirstError(
      {CheckStepNumber("step.step", step.step(), limits),
       CheckBoundedAmount("step.flops", step.flops(), limits.max_flops,
                          "--max_flops"),
       CheckBoundedAmount("step.bytes", step.bytes(), limits.max_bytes,
                          "--max_bytes"),
       CheckAmount("step.input_wait_seconds", step.input_wait_seconds()),
       CheckAmount("step.idle_seconds", step.idle_seconds())});
}

Status CheckHeartbeat(const v1::Event& e, const ValidationLimits& limits) {
  return FirstError(
      {e.host().empty() ? absl::InvalidArgumentError(
                              "host: required for heartbeat, got \"\"")
                        : absl::OkStatus(),
       CheckChips("heartbeat.chips", e.heartbeat().chips(), 0, limits),
       CheckSize("heartbeat.accelerator", e.heartbeat().accelerator(),
                 limits)});
}

// A timestamp in protobuf's range (seconds and nanos).
bool ValidTimestamp(const google::protobuf::Timestamp& t) {
  return t.seconds() >= TimeUtil::kTimestampMinSeconds &&
         t.seconds() <= TimeUtil::kTimestampMaxSeconds && t.nanos() >= 0 &&
         t.nanos() < kNanosPerSecond;
}

Status CheckExclusionUntil(const v1::Event& e) {
  const google::protobuf::Timestamp& until = e.exclusion().until();
  if (!e.exclusion().has_until()) {
    return absl::InvalidArgumentError("exclusion.until: required, got none");
  }
  if (!ValidTimestamp(until)) {
    return Invalid(
        "exclusion.until", "not a valid timestamp",
        absl::StrCat("seconds=", until.seconds(), " nanos=", until.nanos()));
  }
  if (e.has_time() && ValidTimestamp(e.time()) && until <= e.time()) {
    return Invalid("exclusion.until", "must be after time",
                   absl::StrCat(TimeUtil::ToString(until), " with time ",
                                TimeUtil::ToString(e.time())));
  }
  return absl::OkStatus();
}

// JOB names the event's job and no hosts; HOSTS names hosts and no job;
// FLEET names neither.
Status CheckExclusionScope(const v1::Event& e, const ValidationLimits& limits) {
  const v1::Exclusion& x = e.exclusion();
  const bool job = x.scope() == v1::Exclusion::JOB;
  const bool hosts = x.scope() == v1::Exclusion::HOSTS;
  if (!job && !e.job_id().empty()) {
    return Invalid("job_id", "must be empty for a HOSTS or FLEET exclusion",
                   Quote(e.job_id()));
  }
  if (!hosts && x.hosts_size() > 0) {
    return Invalid("exclusion.hosts", "only for scope HOSTS",
                   absl::StrCat(x.hosts_size(), " hosts"));
  }
  if (hosts && x.hosts_size() == 0) {
    return absl::InvalidArgumentError(
        "exclusion.hosts: required (at least one) for scope HOSTS, got none");
  }
  if (static_cast<size_t>(x.hosts_size()) > limits.max_exclusion_hosts) {
    return Invalid(
        "exclusion.hosts",
        absl::StrCat("must have at most ", limits.max_exclusion_hosts),
        absl::StrCat(x.hosts_size()));
  }
  for (const std::string& host : x.hosts()) {
    if (host.empty()) {
      return absl::InvalidArgumentError(
          "exclusion.hosts: a host is empty, got \"\"");
    }
    if (Status s = CheckSize("exclusion.hosts", host, limits); !s.ok()) {
      return s;
    }
  }
  return absl::OkStatus();
}

Status CheckExclusion(const v1::Event& e, const ValidationLimits& limits) {
  const v1::Exclusion& x = e.exclusion();
  return FirstError(
      {CheckEnum("exclusion.scope", x.scope(),
                 v1::Exclusion::Scope_descriptor()),
       CheckExclusionUntil(e),
       x.reason().empty()
           ? absl::InvalidArgumentError("exclusion.reason: required, got \"\"")
           : CheckSize("exclusion.reason", x.reason(), limits),
       CheckExclusionScope(e, limits)});
}

Status CheckBody(const v1::Event& e, const ValidationLimits& limits) {
  switch (e.body_case()) {
    case v1::Event::kJobSubmitted:
      return CheckJobSubmitted(e.job_submitted(), limits);
    case v1::Event::kAllocation:
      return CheckChips("allocation.chips", e.allocation().chips(), 0, limits);
    case v1::Event::kActivity:
      return CheckActivity(e.activity(), limits);
    case v1::Event::kStep:
      return CheckStep(e.step(), limits);
    case v1::Event::kCheckpoint:
      return CheckStepNumber("checkpoint.step", e.checkpoint().step(), limits);
    case v1::Event::kInterruption:
      return CheckEnum("interruption.reason", e.interruption().reason(),
                       v1::Interruption::Reason_descriptor());
    case v1::Event::kJobEnded:
      return CheckEnum("job_ended.outcome", e.job_ended().outcome(),
                       v1::JobEnded::Outcome_descriptor());
    case v1::Event::kHeartbeat:
      return CheckHeartbeat(e, limits);
    case v1::Event::kExclusion:
      return CheckExclusion(e, limits);
    case v1::Event::kStarted:
    case v1::Event::BODY_NOT_SET:
      break;
  }
  return absl::OkStatus();
}

Status CheckTime(const v1::Event& e, const ValidationLimits& limits) {
  if (!e.has_time())
    return absl::InvalidArgumentError("time: required, got none");
  const google::protobuf::Timestamp& t = e.time();
  if (!ValidTimestamp(t)) {
    return Invalid("time", "not a valid timestamp",
                   absl::StrCat("seconds=", t.seconds(), " nanos=", t.nanos()));
  }
  if (!limits.now_ns.has_value()) return absl::OkStatus();
  const absl::int128 at =
      absl::int128(t.seconds()) * kNanosPerSecond + t.nanos();
  if (limits.max_age_ns > 0 &&
      at < absl::int128(*limits.now_ns) - limits.max_age_ns) {
    return Invalid(
        "time",
        absl::StrCat("more than ",
                     absl::FormatDuration(absl::Nanoseconds(limits.max_age_ns)),
                     " in the past (--max_event_age; now ",
                     TimeUtil::ToString(
                         TimeUtil::NanosecondsToTimestamp(*limits.now_ns)),
                     ")"),
        TimeUtil::ToString(t));
  }
  if (at <= absl::int128(*limits.now_ns) + limits.max_future_ns) {
    return absl::OkStatus();
  }
  return Invalid(
      "time",
      absl::StrCat(
          "more than ", limits.max_future_ns / 1e9, "s in the future (now ",
          TimeUtil::ToString(TimeUtil::NanosecondsToTimestamp(*limits.now_ns)),
          ")"),
      TimeUtil::ToString(t));
}

Status CheckCommon(const v1::Event& e, const ValidationLimits& limits) {
  const bool needs_job =
      !e.has_heartbeat() &&
      !(e.has_exclusion() && e.exclusion().scope() != v1::Exclusion::JOB);
  return FirstError(
      {CheckTime(e, limits),
       needs_job && e.job_id().empty()
           ? absl::InvalidArgumentError(
                 "job_id: required (all events but heartbeats and HOSTS or "
                 "FLEET exclusions), got \"\"")
           : absl::OkStatus(),
       CheckSize("job_id", e.job_id(), limits),
       CheckSize("host", e.host(), limits),
       CheckSize("attempt", e.attempt(), limits)});
}

}  // namespace

Status ValidateEvent(const v1::Event& e, const ValidationLimits& limits) {
  if (e.body_case() == v1::Event::BODY_NOT_SET) {
    return absl::InvalidArgumentError(
        "body: no event body, expected one of job_submitted, allocation, "
        "started, activity, step, checkpoint, interruption, job_ended, "
        "heartbeat, exclusion");
  }
  return FirstError({CheckCommon(e, limits), CheckBody(e, limits)});
}

}  // namespace codec
}  // namespace goodput
