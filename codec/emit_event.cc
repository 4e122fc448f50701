#include "codec/emit_event.h"

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "codec/line_decoder.h"
#include "nlohmann/json.hpp"
#include "util/time_format.h"

namespace goodput::codec {
namespace {

using google::protobuf::Descriptor;
using google::protobuf::FieldDescriptor;

const FieldDescriptor* BodyField(absl::string_view kind) {
  const FieldDescriptor* f =
      v1::Event::descriptor()->FindFieldByName(std::string(kind));
  if (f == nullptr || f->containing_oneof() == nullptr) return nullptr;
  return f;
}

std::string FieldNames(const Descriptor* d) {
  std::vector<std::string> names;
  for (int i = 0; i < d->field_count(); ++i) {
    names.push_back(d->field(i)->name());
  }
  if (d->FindFieldByName("labels") != nullptr) names.push_back("label");
  return names.empty() ? "none" : absl::StrJoin(names, ", ");
}

absl::Status Bad(absl::string_view field, absl::string_view want,
                 absl::string_view value) {
  return absl::InvalidArgumentError(
      absl::StrCat("--", field, ": must be ", want, ", got \"", value, "\""));
}

// `value` as the JSON value of a scalar field of type `f`.
absl::StatusOr<nlohmann::json> JsonValue(const FieldDescriptor* f,
                                         const std::string& value) {
  switch (f->cpp_type()) {
    case FieldDescriptor::CPPTYPE_INT64: {
      int64_t n;
      if (!absl::SimpleAtoi(value, &n))
        return Bad(f->name(), "an integer", value);
      return nlohmann::json(n);
    }
    case FieldDescriptor::CPPTYPE_DOUBLE: {
      double d;
      if (!absl::SimpleAtod(value, &d))
        return Bad(f->name(), "a number", value);
      return nlohmann::json(d);
    }
    case FieldDescriptor::CPPTYPE_BOOL:
      if (value.empty() || value == "true") return nlohmann::json(true);
      if (value == "false") return nlohmann::json(false);
      return Bad(f->name(), "true or false", value);
    case FieldDescriptor::CPPTYPE_ENUM:
      return nlohmann::json(absl::AsciiStrToUpper(value));
    default:
      return nlohmann::json(value);
  }
}

absl::Status AddLabel(const std::string& value, nlohmann::json* body) {
  size_t eq = value.find('=');
  if (eq == std::string::npos || eq == 0) {
    return Bad("label", "KEY=VALUE", value);
  }
  (*body)["labels"][value.substr(0, eq)] = value.substr(eq + 1);
  return absl::OkStatus();
}

bool IsTimestamp(const FieldDescriptor* f) {
  return f->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE &&
         f->message_type()->full_name() == "google.protobuf.Timestamp";
}

// A time field (exclusion.until): RFC 3339.
absl::Status AddTime(const FieldDescriptor* f, const std::string& value,
                     nlohmann::json* body) {
  absl::StatusOr<int64_t> t = ParseRfc3339(value);
  if (!t.ok()) return Bad(f->name(), "RFC 3339", value);
  (*body)[f->name()] = FormatRfc3339(*t);
  return absl::OkStatus();
}

// A repeated string field (exclusion.hosts): comma-separated values, and
// the flag may repeat.
absl::Status AddStrings(const FieldDescriptor* f, const std::string& value,
                        nlohmann::json* body) {
  for (absl::string_view v : absl::StrSplit(value, ',', absl::SkipEmpty())) {
    (*body)[f->name()].push_back(std::string(v));
  }
  return absl::OkStatus();
}

absl::Status AddBodyField(const Descriptor* d, const std::string& name,
                          const std::string& value, nlohmann::json* body) {
  if (name == "label" && d->FindFieldByName("labels") != nullptr) {
    return AddLabel(value, body);
  }
  const FieldDescriptor* f = d->FindFieldByName(name);
  if (f != nullptr && IsTimestamp(f) && !f->is_repeated()) {
    return AddTime(f, value, body);
  }
  if (f != nullptr && f->is_repeated() && !f->is_map() &&
      f->cpp_type() == FieldDescriptor::CPPTYPE_STRING) {
    return AddStrings(f, value, body);
  }
  if (f == nullptr || f->is_map() || f->is_repeated() ||
      f->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
    return absl::InvalidArgumentError(
        absl::StrCat("--", name, ": not a field of ", d->name(),
                     " (fields: ", FieldNames(d), ")"));
  }
  absl::StatusOr<nlohmann::json> v = JsonValue(f, value);
  if (!v.ok()) return v.status();
  (*body)[name] = *std::move(v);
  return absl::OkStatus();
}

absl::StatusOr<nlohmann::json> EventJson(const FieldDescriptor* kind,
                                         const EmitFields& fields,
                                         int64_t now_ns) {
  nlohmann::json event = nlohmann::json::object();
  nlohmann::json body = nlohmann::json::object();
  event["time"] = FormatRfc3339(now_ns);
  for (const auto& [name, value] : fields) {
    if (name == "job_id" || name == "host" || name == "attempt") {
      event[name] = value;
    } else if (name == "time") {
      absl::StatusOr<int64_t> t = ParseRfc3339(value);
      if (!t.ok()) return Bad("time", "RFC 3339", value);
      event["time"] = FormatRfc3339(*t);
    } else {
      absl::Status s = AddBodyField(kind->message_type(), name, value, &body);
      if (!s.ok()) return s;
    }
  }
  if (kind->name() == "job_submitted" && !body.contains("workload")) {
    body["workload"] = "TRAINING";  // the validator wants one
  }
  event[kind->name()] = body;
  return event;
}

}  // namespace

std::vector<std::string> EmitKinds() {
  std::vector<std::string> kinds;
  const Descriptor* d = v1::Event::descriptor();
  for (int i = 0; i < d->field_count(); ++i) {
    if (d->field(i)->containing_oneof() != nullptr) {
      kinds.push_back(d->field(i)->name());
    }
  }
  return kinds;
}

absl::StatusOr<v1::Event> BuildEvent(absl::string_view kind,
                                     const EmitFields& fields, int64_t now_ns) {
  const FieldDescriptor* body = BodyField(kind);
  if (body == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("KIND: must be one of ", absl::StrJoin(EmitKinds(), ", "),
                     ", got \"", kind, "\""));
  }
  absl::StatusOr<nlohmann::json> json = EventJson(body, fields, now_ns);
  if (!json.ok()) return json.status();
  codec::ValidationLimits limits;
  limits.now_ns = now_ns;
  codec::LineDecoder decoder(limits);
  v1::Event event;
  absl::Status s = decoder.DecodeLine(json->dump(), &event);
  if (!s.ok()) return s;
  return event;
}

}  // namespace goodput::codec
