#include "codec/fast_decoder.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <string_view>

#include "codec/reference_decoder.h"
#include "codec/rfc3339.h"
#include "simdjson.h"

namespace goodput {
namespace codec {
namespace {

using simdjson::SUCCESS;
using simdjson::dom::element;
using simdjson::dom::element_type;
using simdjson::dom::object;

// Every reader below returns false when the value is outside the shapes the
// fast path handles exactly like protobuf's JSON parser; the whole line then
// goes to the reference decoder, which accepts or rejects it.

bool ReadInt64Number(element v, int64_t* out) {
  return v.type() == element_type::INT64 && v.get_int64().get(*out) == SUCCESS;
}

// "-?[0-9]{1,18}", as protobuf's JSON printer writes int64: it cannot
// overflow, and protobuf's safe_strto64 reads it the same way.
bool ReadInt64String(std::string_view s, int64_t* out) {
  const bool negative = !s.empty() && s[0] == '-';
  if (negative) s.remove_prefix(1);
  if (s.empty() || s.size() > 18) return false;
  int64_t value = 0;
  for (const char c : s) {
    if (c < '0' || c > '9') return false;
    value = value * 10 + (c - '0');
  }
  *out = negative ? -value : value;
  return true;
}

// An int64 field: a JSON integer or a decimal string.
bool ReadInt64(element v, int64_t* out) {
  std::string_view s;
  if (v.type() == element_type::STRING) {
    return v.get_string().get(s) == SUCCESS && ReadInt64String(s, out);
  }
  return ReadInt64Number(v, out);
}

bool ReadSpecialDouble(std::string_view s, double* out) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  if (s == "NaN") {
    *out = std::numeric_limits<double>::quiet_NaN();
  } else if (s == "Infinity" || s == "-Infinity") {
    *out = s[0] == '-' ? -kInf : kInf;
  } else {
    return false;
  }
  return true;
}

// Integer literals convert like protobuf's (int64 or uint64 cast, so "-0" is
// +0.0); a negative zero from a float literal is left to the reference.
bool ReadDouble(element v, double* out) {
  int64_t i;
  uint64_t u;
  std::string_view s;
  switch (v.type()) {
    case element_type::INT64:
      if (v.get_int64().get(i) != SUCCESS) return false;
      *out = static_cast<double>(i);
      return true;
    case element_type::UINT64:
      if (v.get_uint64().get(u) != SUCCESS) return false;
      *out = static_cast<double>(u);
      return true;
    case element_type::DOUBLE:
      if (v.get_double().get(*out) != SUCCESS) return false;
      return !(*out == 0 && std::signbit(*out));
    case element_type::STRING:
      return v.get_string().get(s) == SUCCESS && ReadSpecialDouble(s, out);
    default:
      return false;
  }
}

// An enum by exact value name, or by number (proto3 keeps unknown numbers).
template <typename E>
bool ReadEnum(element v, bool (*parse)(const std::string&, E*), E* out) {
  int64_t number;
  if (ReadInt64Number(v, &number)) {
    if (number < std::numeric_limits<int32_t>::min() ||
        number > std::numeric_limits<int32_t>::max()) {
      return false;
    }
    *out = static_cast<E>(number);
    return true;
  }
  std::string_view name;
  return v.get_string().get(name) == SUCCESS && parse(std::string(name), out);
}

// --- Field readers, one instantiation per proto field. ---

template <typename Msg, void (Msg::*kSet)(int64_t)>
bool Int64Field(element v, Msg* m) {
  int64_t value;
  if (!ReadInt64(v, &value)) return false;
  (m->*kSet)(value);
  return true;
}

template <typename Msg, void (Msg::*kSet)(double)>
bool DoubleField(element v, Msg* m) {
  double value;
  if (!ReadDouble(v, &value)) return false;
  (m->*kSet)(value);
  return true;
}

template <typename Msg, void (Msg::*kSet)(bool)>
bool BoolField(element v, Msg* m) {
  bool value;
  if (v.type() != element_type::BOOL || v.get_bool().get(value) != SUCCESS) {
    return false;
  }
  (m->*kSet)(value);
  return true;
}

template <typename Msg, std::string* (Msg::*kMutable)()>
bool StringField(element v, Msg* m) {
  std::string_view value;
  if (v.get_string().get(value) != SUCCESS) return false;
  (m->*kMutable)()->assign(value.data(), value.size());
  return true;
}

template <typename Msg, typename E, void (Msg::*kSet)(E),
          bool (*kParse)(const std::string&, E*)>
bool EnumField(element v, Msg* m) {
  E value;
  if (!ReadEnum(v, kParse, &value)) return false;
  (m->*kSet)(value);
  return true;
}

bool LabelsField(element v, v1::JobSubmitted* m) {
  object labels;
  if (v.get_object().get(labels) != SUCCESS) return false;
  auto* map = m->mutable_labels();
  for (const auto& entry : labels) {
    std::string_view value;
    if (entry.value.get_string().get(value) != SUCCESS) return false;
    std::string key(entry.key);
    if (map->count(key) != 0) return false;  // The reference rejects.
    (*map)[key].assign(value.data(), value.size());
  }
  return true;
}

// --- Messages. ---

template <typename Msg>
struct Field {
  std::string_view name;       // As in the .proto.
  std::string_view json_name;  // lowerCamelCase, also accepted.
  bool (*read)(element value, Msg* msg);
};

// `key == name`, comparing the size and the first byte inline before
// calling memcmp: most keys differ from most names there.
bool SameKey(std::string_view key, std::string_view name) {
  return key.size() == name.size() && !key.empty() && key[0] == name[0] &&
         key == name;
}

template <typename Msg, size_t N>
int FindField(const Field<Msg> (&fields)[N], std::string_view key) {
  for (size_t i = 0; i < N; ++i) {
    if (SameKey(key, fields[i].name) || SameKey(key, fields[i].json_name)) {
      return static_cast<int>(i);
    }
  }
  return -1;
}

// Unknown and repeated keys (under either spelling) go to the reference.
template <typename Msg, size_t N>
bool ReadMessage(element v, const Field<Msg> (&fields)[N], Msg* msg) {
  static_assert(N <= 32, "seen-mask is 32 bits");
  object obj;
  if (v.get_object().get(obj) != SUCCESS) return false;
  uint32_t seen = 0;
  for (const auto& entry : obj) {
    const int i = FindField(fields, entry.key);
    if (i < 0 || ((seen >> i) & 1) != 0) return false;
    seen |= uint32_t{1} << i;
    if (!fields[i].read(entry.value, msg)) return false;
  }
  return true;
}

using v1::Activity;
using v1::Allocation;
using v1::Checkpoint;
using v1::Event;
using v1::Heartbeat;
using v1::Interruption;
using v1::JobEnded;
using v1::JobSubmitted;
using v1::Step;

constexpr Field<JobSubmitted> kJobSubmittedFields[] = {
    {"chips", "chips", Int64Field<JobSubmitted, &JobSubmitted::set_chips>},
    {"accelerator", "accelerator",
     StringField<JobSubmitted, &JobSubmitted::mutable_accelerator>},
    {"workload", "workload",
     EnumField<JobSubmitted, JobSubmitted::Workload,
               &JobSubmitted::set_workload, &JobSubmitted::Workload_Parse>},
    {"framework", "framework",
     StringField<JobSubmitted, &JobSubmitted::mutable_framework>},
    {"labels", "labels", LabelsField},
    {"step_flops", "stepFlops",
     DoubleField<JobSubmitted, &JobSubmitted::set_step_flops>},
    {"step_bytes", "stepBytes",
     DoubleField<JobSubmitted, &JobSubmitted::set_step_bytes>},
    {"min_chips", "minChips",
     Int64Field<JobSubmitted, &JobSubmitted::set_min_chips>},
};

constexpr Field<Allocation> kAllocationFields[] = {
    {"chips", "chips", Int64Field<Allocation, &Allocation::set_chips>},
};

constexpr Field<Activity> kActivityFields[] = {
    {"kind", "kind",
     EnumField<Activity, Activity::Kind, &Activity::set_kind,
               &Activity::Kind_Parse>},
    {"name", "name", StringField<Activity, &Activity::mutable_name>},
    {"step", "step", Int64Field<Activity, &Activity::set_step>},
};

constexpr Field<Step> kStepFields[] = {
    {"step", "step", Int64Field<Step, &Step::set_step>},
    {"flops", "flops", DoubleField<Step, &Step::set_flops>},
    {"bytes", "bytes", DoubleField<Step, &Step::set_bytes>},
    {"input_wait_seconds", "inputWaitSeconds",
     DoubleField<Step, &Step::set_input_wait_seconds>},
    {"idle_seconds", "idleSeconds", DoubleField<Step, &Step::set_idle_seconds>},
};

constexpr Field<Checkpoint> kCheckpointFields[] = {
    {"step", "step", Int64Field<Checkpoint, &Checkpoint::set_step>},
};

constexpr Field<Interruption> kInterruptionFields[] = {
    {"reason", "reason",
     EnumField<Interruption, Interruption::Reason, &Interruption::set_reason,
               &Interruption::Reason_Parse>},
    {"notice", "notice", BoolField<Interruption, &Interruption::set_notice>},
};

constexpr Field<JobEnded> kJobEndedFields[] = {
    {"outcome", "outcome",
     EnumField<JobEnded, JobEnded::Outcome, &JobEnded::set_outcome,
               &JobEnded::Outcome_Parse>},
};

constexpr Field<Heartbeat> kHeartbeatFields[] = {
    {"chips", "chips", Int64Field<Heartbeat, &Heartbeat::set_chips>},
    {"accelerator", "accelerator",
     StringField<Heartbeat, &Heartbeat::mutable_accelerator>},
};

// A second body is a oneof conflict: the reference rejects it.
template <auto kMutable, const auto& kFields>
bool BodyField(element v, Event* e) {
  if (e->body_case() != Event::BODY_NOT_SET) return false;
  return ReadMessage(v, kFields, (e->*kMutable)());
}

bool StartedField(element v, Event* e) {
  object obj;
  if (e->body_case() != Event::BODY_NOT_SET ||
      v.get_object().get(obj) != SUCCESS || obj.size() != 0) {
    return false;
  }
  e->mutable_started();
  return true;
}

bool TimeField(element v, Event* e) {
  std::string_view text;
  int64_t seconds;
  int32_t nanos;
  if (v.get_string().get(text) != SUCCESS ||
      !ParseRfc3339Strict(absl::string_view(text.data(), text.size()), &seconds,
                          &nanos)) {
    return false;
  }
  e->mutable_time()->set_seconds(seconds);
  e->mutable_time()->set_nanos(nanos);
  return true;
}

constexpr Field<Event> kEventFields[] = {
    {"time", "time", TimeField},
    {"job_id", "jobId", StringField<Event, &Event::mutable_job_id>},
    {"host", "host", StringField<Event, &Event::mutable_host>},
    {"attempt", "attempt", StringField<Event, &Event::mutable_attempt>},
    {"step", "step", BodyField<&Event::mutable_step, kStepFields>},
    {"activity", "activity",
     BodyField<&Event::mutable_activity, kActivityFields>},
    {"checkpoint", "checkpoint",
     BodyField<&Event::mutable_checkpoint, kCheckpointFields>},
    {"started", "started", StartedField},
    {"allocation", "allocation",
     BodyField<&Event::mutable_allocation, kAllocationFields>},
    {"heartbeat", "heartbeat",
     BodyField<&Event::mutable_heartbeat, kHeartbeatFields>},
    {"interruption", "interruption",
     BodyField<&Event::mutable_interruption, kInterruptionFields>},
    {"job_submitted", "jobSubmitted",
     BodyField<&Event::mutable_job_submitted, kJobSubmittedFields>},
    {"job_ended", "jobEnded",
     BodyField<&Event::mutable_job_ended, kJobEndedFields>},
};

// Longer lines go to the reference, so that one huge line does not leave a
// decoder holding a huge parse buffer.
constexpr size_t kMaxFastLineBytes = size_t{1} << 20;

bool IsJsonSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

// Escapes (the reference knows a few non-JSON ones) and anything but an
// object after JSON whitespace (e.g. a byte order mark) go to the reference.
bool HasPlainShape(absl::string_view line) {
  if (line.size() > kMaxFastLineBytes) return false;
  if (std::memchr(line.data(), '\\', line.size()) != nullptr) return false;
  size_t i = 0;
  while (i < line.size() && IsJsonSpace(line[i])) ++i;
  return i < line.size() && line[i] == '{';
}

}  // namespace

// The simdjson side of FastDecoder.
class FastDecoder::Impl {
 public:
  // True when `line` was fully decoded into `*out` on the fast path.
  bool TryDecode(absl::string_view line, Event* out) {
    if (!HasPlainShape(line)) return false;
    const size_t needed = line.size() + simdjson::SIMDJSON_PADDING;
    if (buffer_.size() < needed) buffer_.resize(needed);
    std::memcpy(&buffer_[0], line.data(), line.size());
    element doc;
    if (parser_.parse(buffer_.data(), line.size(), false).get(doc) != SUCCESS) {
      return false;
    }
    return ReadMessage(doc, kEventFields, out);
  }

 private:
  simdjson::dom::parser parser_;
  std::string buffer_;
};

FastDecoder::FastDecoder() : impl_(std::make_unique<Impl>()) {}

FastDecoder::~FastDecoder() = default;

absl::Status FastDecoder::Decode(absl::string_view line, v1::Event* out) {
  out->Clear();
  if (impl_->TryDecode(line, out)) {
    ++fast_lines_;
    return absl::OkStatus();
  }
  ++fallback_lines_;
  return DecodeEventReferenceInto(line, out);
}

}  // namespace codec
}  // namespace goodput
