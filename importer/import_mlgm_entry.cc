#include "importer/import_mlgm_entry.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "util/time_format.h"

namespace goodput::importer {
namespace {

using Json = nlohmann::json;
using Kind = MlgmMark::Kind;
using Span = MlgmMark::Span;

// The recorder's fields, each a POSIX time in seconds (float).
struct TimeField {
  const char* name;
  Kind kind;
  Span span;
};
constexpr TimeField kTimeFields[] = {
    {"job_start_time", Kind::kJobStart, Span::kTpuInit},
    {"job_end_time", Kind::kJobEnd, Span::kTpuInit},
    {"step_start_time", Kind::kStepStart, Span::kTpuInit},
    {"tpu_init_start_time", Kind::kBegin, Span::kTpuInit},
    {"tpu_init_end_time", Kind::kEnd, Span::kTpuInit},
    {"training_prep_start_time", Kind::kBegin, Span::kTrainingPrep},
    {"training_prep_end_time", Kind::kEnd, Span::kTrainingPrep},
    {"data_loading_start_time", Kind::kBegin, Span::kDataLoading},
    {"data_loading_end_time", Kind::kEnd, Span::kDataLoading},
    {"custom_badput_event_start_time", Kind::kBegin, Span::kCustom},
    {"custom_badput_event_end_time", Kind::kEnd, Span::kCustom},
    {"elastic_wait_start_time", Kind::kBegin, Span::kElasticWait},
    {"elastic_wait_end_time", Kind::kEnd, Span::kElasticWait},
    {"elastic_reinit_start_time", Kind::kBegin, Span::kReinit},
    {"elastic_reinit_end_time", Kind::kEnd, Span::kReinit},
    {"elastic_slice_counts_timestamp", Kind::kSlices, Span::kTpuInit},
};

// Later than any real log (2286); keeps nanoseconds inside int64.
constexpr double kMaxSeconds = 1e10;

absl::Status Bad(absl::string_view field, absl::string_view problem,
                 const Json& value) {
  std::string shown =
      value.dump(-1, ' ', false, Json::error_handler_t::replace);
  if (shown.size() > 64) shown = shown.substr(0, 61) + "...";
  return absl::InvalidArgumentError(
      absl::StrCat(field, ": ", problem, ", got ", shown));
}

// The field `name` of `object`, or nullptr when absent or null.
const Json* Find(const Json& object, const char* name) {
  auto it = object.find(name);
  if (it == object.end() || it->is_null()) return nullptr;
  return &*it;
}

// POSIX seconds -> Unix nanoseconds, rounded to the microsecond (Python's
// datetime.timestamp() has microsecond precision).
absl::StatusOr<int64_t> Seconds(const Json& value, absl::string_view field) {
  double s = value.is_number() ? value.get<double>() : -1;
  if (!(s > 0 && s < kMaxSeconds)) {
    return Bad(field, "must be POSIX seconds (a number > 0)", value);
  }
  return std::llround(s * 1e6) * 1000;
}

absl::StatusOr<int64_t> Step(const Json& value, absl::string_view field) {
  double s = value.is_number() ? value.get<double>() : -1;
  if (!(s >= 0 && s < 9e15) || s != std::floor(s)) {
    return Bad(field, "must be an integer >= 0", value);
  }
  return static_cast<int64_t>(s);
}

absl::StatusOr<double> Duration(const Json* value, absl::string_view field) {
  if (value == nullptr) return 0.0;
  double d = value->is_number() ? value->get<double>() : -1;
  if (!(d >= 0 && d < kMaxSeconds)) {
    return Bad(field, "must be seconds >= 0", *value);
  }
  return d;
}

// The one recorder time field present in `payload`; an error if there are
// several; nullptr if none.
absl::StatusOr<const TimeField*> FindTimeField(const Json& payload) {
  const TimeField* found = nullptr;
  for (const TimeField& field : kTimeFields) {
    if (Find(payload, field.name) == nullptr) continue;
    if (found != nullptr) {
      return absl::InvalidArgumentError(absl::StrCat(
          field.name, ": an entry holds one time field, this one also has ",
          found->name));
    }
    found = &field;
  }
  return found;
}

// An elastic wait's event type: a string, "unknown" when absent (as the
// library reads it).
absl::Status FillWaitType(const Json& payload, MlgmMark* mark) {
  const Json* type = Find(payload, "elastic_wait_event_type");
  if (type == nullptr) {
    mark->name = "unknown";
    return absl::OkStatus();
  }
  if (!type->is_string() || type->get<std::string>().empty()) {
    return Bad("elastic_wait_event_type", "must be a non-empty string", *type);
  }
  mark->name = type->get<std::string>();
  return absl::OkStatus();
}

// A slice-count record's total_slices (absent: 1; at least 1, as the
// library reads it) and available_slices (absent: 0).
absl::Status FillSlices(const Json& payload, MlgmMark* mark) {
  mark->total_slices = 1;
  if (const Json* total = Find(payload, "total_slices")) {
    absl::StatusOr<int64_t> n = Step(*total, "total_slices");
    if (!n.ok()) return n.status();
    mark->total_slices = std::max<int64_t>(*n, 1);
  }
  if (const Json* available = Find(payload, "available_slices")) {
    absl::StatusOr<int64_t> n = Step(*available, "available_slices");
    if (!n.ok()) return n.status();
    mark->available_slices = *n;
  }
  return absl::OkStatus();
}

// Fills the step or custom event name a recorder entry of `field` needs.
absl::Status FillDetails(const Json& payload, const TimeField& field,
                         MlgmMark* mark) {
  if (field.kind == Kind::kSlices) return FillSlices(payload, mark);
  if (field.span == Span::kElasticWait) return FillWaitType(payload, mark);
  if (field.kind == Kind::kStepStart) {
    const Json* step = Find(payload, "step_count");
    if (step == nullptr) return Bad("step_count", "missing", Json());
    absl::StatusOr<int64_t> n = Step(*step, "step_count");
    if (!n.ok()) return n.status();
    mark->step = *n;
  } else if (field.span == Span::kCustom) {
    const Json* type = Find(payload, "custom_badput_event_type");
    if (type == nullptr || !type->is_string() ||
        type->get<std::string>().empty()) {
      return Bad("custom_badput_event_type", "must be a non-empty string",
                 type ? *type : Json());
    }
    mark->name = type->get<std::string>();
  }
  return absl::OkStatus();
}

absl::StatusOr<MlgmMark> ParseRecorderEntry(const Json& payload,
                                            const TimeField& field) {
  MlgmMark mark;
  mark.kind = field.kind;
  mark.span = field.span;
  absl::StatusOr<int64_t> t = Seconds(*Find(payload, field.name), field.name);
  if (!t.ok()) return t.status();
  mark.time_ns = *t;
  absl::Status details = FillDetails(payload, field, &mark);
  if (!details.ok()) return details;
  return mark;
}

// The names of an Orbax record's start and duration fields.
struct RecordFields {
  Span span;
  const char* start;
  const char* duration;
};

absl::StatusOr<RecordFields> RecordFieldsOf(const Json& event_type) {
  std::string type =
      event_type.is_string() ? event_type.get<std::string>() : "";
  if (type == "save") {
    return RecordFields{Span::kSave, "checkpoint_manager_blocking_start_time",
                        "checkpoint_manager_blocking_duration_secs"};
  }
  if (type == "restore" || type == "emergency_restore") {
    return RecordFields{Span::kRestore, "checkpoint_manager_start_time",
                        "checkpoint_manager_duration_secs"};
  }
  return Bad("event_type", "must be save, restore or emergency_restore",
             event_type);
}

// The record's start: its own start field, else the LogEntry timestamp
// (when Orbax logged it, at the end) minus its duration.
absl::StatusOr<int64_t> RecordStart(const Json& payload,
                                    const RecordFields& fields,
                                    std::optional<int64_t> logged_ns,
                                    int64_t duration_ns) {
  const Json* start = Find(payload, fields.start);
  if (start != nullptr) return Seconds(*start, fields.start);
  if (!logged_ns) {
    return absl::InvalidArgumentError(
        absl::StrCat(fields.start,
                     ": missing, and no LogEntry timestamp to date the "
                     "record by"));
  }
  return *logged_ns - duration_ns;
}

absl::StatusOr<std::vector<MlgmMark>> ParseCheckpointRecord(
    const Json& payload, std::optional<int64_t> logged_ns) {
  absl::StatusOr<RecordFields> fields =
      RecordFieldsOf(*Find(payload, "event_type"));
  if (!fields.ok()) return fields.status();
  const Json* step = Find(payload, "step");
  if (step == nullptr) return Bad("step", "missing", Json());
  absl::StatusOr<int64_t> n = Step(*step, "step");
  if (!n.ok()) return n.status();
  absl::StatusOr<double> d =
      Duration(Find(payload, fields->duration), fields->duration);
  if (!d.ok()) return d.status();
  int64_t d_ns = std::llround(*d * 1e6) * 1000;
  absl::StatusOr<int64_t> start =
      RecordStart(payload, *fields, logged_ns, d_ns);
  if (!start.ok()) return start.status();
  MlgmMark begin{*start, Kind::kBegin, fields->span, "", *n, ""};
  MlgmMark end = begin;
  end.kind = Kind::kEnd;
  end.time_ns = *start + d_ns;
  return std::vector<MlgmMark>{begin, end};
}

absl::Status UnknownEntry(const Json& payload) {
  std::vector<std::string> keys;
  for (auto it = payload.begin(); it != payload.end(); ++it) {
    keys.push_back(it.key());
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "entry: not a goodput or checkpoint entry (no step_start_time, "
      "job_start_time, ... or event_type); its fields: ",
      keys.empty() ? "none" : absl::StrJoin(keys, ", ")));
}

// The LogEntry `timestamp` of a wrapped entry, if it has a valid one.
absl::StatusOr<std::optional<int64_t>> LoggedTime(const Json& entry) {
  const Json* ts = Find(entry, "timestamp");
  if (ts == nullptr) return std::optional<int64_t>();
  absl::StatusOr<int64_t> t = ts->is_string()
                                  ? ParseRfc3339(ts->get<std::string>())
                                  : absl::InvalidArgumentError("");
  if (!t.ok()) return Bad("timestamp", "must be an RFC 3339 string", *ts);
  return std::optional<int64_t>(*t);
}

absl::StatusOr<std::vector<MlgmMark>> ParsePayload(
    const Json& payload, std::optional<int64_t> logged_ns) {
  absl::StatusOr<const TimeField*> field = FindTimeField(payload);
  if (!field.ok()) return field.status();
  if (*field != nullptr) {
    absl::StatusOr<MlgmMark> mark = ParseRecorderEntry(payload, **field);
    if (!mark.ok()) return mark.status();
    return std::vector<MlgmMark>{*mark};
  }
  if (Find(payload, "event_type") != nullptr) {
    return ParseCheckpointRecord(payload, logged_ns);
  }
  return UnknownEntry(payload);
}

absl::StatusOr<std::string> JobName(const Json& payload) {
  const Json* name = Find(payload, "job_name");
  if (name == nullptr) return std::string();
  if (!name->is_string() || name->get<std::string>().empty()) {
    return Bad("job_name", "must be a non-empty string", *name);
  }
  return name->get<std::string>();
}

}  // namespace

absl::StatusOr<std::vector<MlgmMark>> ParseMlgmEntry(const Json& entry) {
  if (!entry.is_object()) return Bad("entry", "must be a JSON object", entry);
  const Json* wrapped = Find(entry, "jsonPayload");
  if (wrapped != nullptr && !wrapped->is_object()) {
    return Bad("jsonPayload", "must be a JSON object", *wrapped);
  }
  const Json& payload = wrapped ? *wrapped : entry;
  absl::StatusOr<std::optional<int64_t>> logged =
      wrapped ? LoggedTime(entry) : std::optional<int64_t>();
  if (!logged.ok()) return logged.status();
  absl::StatusOr<std::string> job = JobName(payload);
  if (!job.ok()) return job.status();
  absl::StatusOr<std::vector<MlgmMark>> marks = ParsePayload(payload, *logged);
  if (!marks.ok()) return marks.status();
  for (MlgmMark& mark : *marks) mark.job_name = *job;
  return marks;
}

}  // namespace goodput::importer
