#include "report/drilldown_json.h"

#include <optional>

#include "core/category.h"
#include "report/report_json.h"
#include "util/time_format.h"

namespace goodput::report {
namespace {

using Json = nlohmann::ordered_json;

double Seconds(int64_t ns) { return static_cast<double>(ns) / 1e9; }

Json NullableTime(const std::optional<int64_t>& ns) {
  return ns ? Json(FormatRfc3339(*ns)) : Json(nullptr);
}

Json NullableInt(const std::optional<int64_t>& v) {
  return v ? Json(*v) : Json(nullptr);
}

Json Share(double part, double total) {
  return total > 0 ? Json(part / total) : Json(nullptr);
}

// [{"category", `unit`: amount / scale, "share"}], largest first.
template <typename Amounts>
Json BadputList(const Amounts& amounts, double total, const char* unit,
                double scale) {
  // Shares of the counted time: excluded time is left out.
  total -= static_cast<double>(amounts[core::Index(core::Category::kExcluded)]);
  Json out = Json::array();
  for (const auto& [category, amount] : core::BadputByCategory(amounts)) {
    out.push_back({{"category", core::CategoryName(category)},
                   {unit, amount / scale},
                   {"share", Share(amount, total)}});
  }
  return out;
}

// A job object plus its lost chip-hours.
Json RankedJob(const core::JobReport& job) {
  Json out = JobReportToJson(job);
  out["lost_chip_hours"] = core::LostChipSeconds(job) / 3600;
  return out;
}

Json FilterToJson(const core::JobFilter& filter) {
  Json segments = Json::object();
  for (const auto& [dimension, value] : filter.segments) {
    segments[dimension] = value;
  }
  return {{"segments", segments},
          {"state", filter.state ? Json(core::JobStateName(*filter.state))
                                 : Json(nullptr)},
          {"limit", filter.limit > 0 ? Json(filter.limit) : Json(nullptr)}};
}

// One window: its bounds, seconds and ratios (keys as in a job object).
Json WindowToJson(const core::JobWindow& w) {
  Json job = JobReportToJson(w.report);
  Json out = {{"window", w.name}, {"since", NullableTime(w.since_ns)}};
  for (const char* key :
       {"seconds", "custom_seconds", "goodput", "sg", "rg", "pg", "mpg"}) {
    out[key] = job[key];
  }
  return out;
}

Json EntryToJson(const core::TimelineEntry& e) {
  if (e.kind == core::TimelineEntry::Kind::kMark) {
    return {{"time", FormatRfc3339(e.start_ns)},
            {"attempt", e.attempt},
            {"mark", e.what}};
  }
  return {{"start", FormatRfc3339(e.start_ns)},
          {"end", FormatRfc3339(e.end_ns)},
          {"seconds", Seconds(e.end_ns - e.start_ns)},
          {"attempt", e.attempt},
          {"span", e.what},
          {"first_step", NullableInt(e.first_step)},
          {"last_step", NullableInt(e.last_step)},
          {"checkpoints", e.checkpoints},
          {"last_checkpoint", NullableInt(e.last_checkpoint)},
          {"ongoing", e.ongoing}};
}

}  // namespace

nlohmann::ordered_json JobsToJson(const core::JobsView& view,
                                  const core::JobFilter& filter) {
  Json out = {{"as_of", FormatRfc3339(view.as_of_ns)},
              {"since", NullableTime(view.since_ns)},
              {"filter", FilterToJson(filter)},
              {"matched", view.matched},
              {"jobs", Json::array()}};
  for (const auto& job : view.jobs) out["jobs"].push_back(RankedJob(job));
  return out;
}

namespace {

// Issue 18 part 1: the job's step times, or null.
Json StepTimeToJson(const std::optional<core::StepTimeSummary>& st) {
  if (!st) return nullptr;
  return {{"baseline",
           {{"median_seconds", st->baseline_median_s},
            {"mad_seconds", st->baseline_mad_s},
            {"steps", st->baseline_steps}}},
          {"recent",
           {{"p50_seconds", st->recent_p50_s}, {"steps", st->recent_steps}}},
          {"ratio", st->ratio ? Json(*st->ratio) : Json(nullptr)}};
}

}  // namespace

nlohmann::ordered_json JobViewToJson(const core::JobView& view) {
  const core::JobReport& job = view.job;
  Json out = {{"as_of", FormatRfc3339(view.as_of_ns)}, {"job", RankedJob(job)}};
  out["badput"] =
      BadputList(job.nanos, static_cast<double>(job.total_ns), "seconds", 1e9);
  out["windows"] = Json::array();
  for (const auto& w : view.windows) out["windows"].push_back(WindowToJson(w));
  out["timeline"] = Json::array();
  for (const auto& e : view.timeline) out["timeline"].push_back(EntryToJson(e));
  out["timeline_omitted"] = view.timeline_omitted;
  out["note"] = view.note.empty() ? Json(nullptr) : Json(view.note);
  out["checkpoint_advice"] =
      CheckpointAdviceToJson(core::JobViewCheckpointAdvice(view));
  out["step_time"] = StepTimeToJson(job.step_time);
  return out;
}

nlohmann::ordered_json FleetViewToJson(const core::FleetView& view) {
  Json out = {{"as_of", FormatRfc3339(view.as_of_ns)},
              {"since", NullableTime(view.since_ns)},
              {"by", view.by},
              {"fleet", TotalsToJson(view.fleet)}};
  out["badput"] = BadputList(view.fleet.chip_seconds,
                             view.fleet.total_chip_seconds, "chip_hours", 3600);
  out["segments"] = Json::object();
  for (const auto& [value, totals] : view.segments) {
    out["segments"][value] = TotalsToJson(totals);
  }
  out["worst_jobs"] = Json::array();
  for (const auto& job : view.worst_jobs) {
    out["worst_jobs"].push_back(RankedJob(job));
  }
  return out;
}

absl::StatusOr<std::string> WriteJobsJson(const core::JobsView& view,
                                          const core::JobFilter& filter) {
  return DumpJson(JobsToJson(view, filter));
}

absl::StatusOr<std::string> WriteJobViewJson(const core::JobView& view) {
  return DumpJson(JobViewToJson(view));
}

absl::StatusOr<std::string> WriteFleetViewJson(const core::FleetView& view) {
  return DumpJson(FleetViewToJson(view));
}

}  // namespace goodput::report
