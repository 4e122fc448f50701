#include "importer/import_mlgm_json.h"

#include <cstdint>
#include <string>

#include "nlohmann/json.hpp"
#include "util/proto_time.h"
#include "util/time_format.h"

namespace goodput::importer {
namespace {

using Json = nlohmann::ordered_json;

Json Submitted(const v1::JobSubmitted& s) {
  Json out = Json::object();
  out["chips"] = s.chips();
  if (!s.accelerator().empty()) out["accelerator"] = s.accelerator();
  out["workload"] = v1::JobSubmitted::Workload_Name(s.workload());
  if (s.has_min_chips()) out["min_chips"] = s.min_chips();
  return out;
}

Json ActivityJson(const v1::Activity& a) {
  Json out = Json::object();
  out["kind"] = v1::Activity::Kind_Name(a.kind());
  if (!a.name().empty()) out["name"] = a.name();
  if (a.has_step()) out["step"] = a.step();
  return out;
}

// A JOB exclusion (--exclude).
Json ExclusionJson(const v1::Exclusion& x) {
  Json out = Json::object();
  out["until"] = FormatRfc3339(TimestampToNanos(x.until()));
  out["reason"] = x.reason();
  out["scope"] = v1::Exclusion::Scope_Name(x.scope());
  return out;
}

// The body's key and value (a reference into the descriptor pool or a
// literal, so the key outlives the call).
std::pair<const char*, Json> Body(const v1::Event& e) {
  switch (e.body_case()) {
    case v1::Event::kJobSubmitted:
      return {"job_submitted", Submitted(e.job_submitted())};
    case v1::Event::kActivity:
      return {"activity", ActivityJson(e.activity())};
    case v1::Event::kAllocation:  // elastic slice counts
      return {"allocation", Json{{"chips", e.allocation().chips()}}};
    case v1::Event::kStep:
      return {"step", Json{{"step", e.step().step()}}};
    case v1::Event::kCheckpoint:
      return {"checkpoint", Json{{"step", e.checkpoint().step()}}};
    case v1::Event::kExclusion:
      return {"exclusion", ExclusionJson(e.exclusion())};
    case v1::Event::kJobEnded:
      return {"job_ended", Json{{"outcome", v1::JobEnded::Outcome_Name(
                                                e.job_ended().outcome())}}};
    default:
      break;
  }
  const auto* field = e.GetDescriptor()->FindFieldByNumber(e.body_case());
  return {field ? field->name().c_str() : "started", Json::object()};
}

}  // namespace

std::string EventJsonLine(const v1::Event& event) {
  Json line = Json::object();
  line["time"] = FormatRfc3339(TimestampToNanos(event.time()));
  line["job_id"] = event.job_id();
  if (!event.attempt().empty()) line["attempt"] = event.attempt();
  auto [key, body] = Body(event);
  line[key] = body;
  return line.dump();
}

}  // namespace goodput::importer
