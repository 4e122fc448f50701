#include "report/report_json.h"

#include <exception>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/badput_cost.h"
#include "core/category.h"
#include "proto/event.pb.h"
#include "util/time_format.h"

namespace goodput::report {
namespace {

using Json = nlohmann::ordered_json;

Json Nullable(const std::optional<double>& v) {
  return v ? Json(*v) : Json(nullptr);
}

Json Nullable(const std::optional<int64_t>& v) {
  return v ? Json(*v) : Json(nullptr);
}

double Seconds(int64_t ns) { return static_cast<double>(ns) / 1e9; }

// {"total", "queued", ..., "lost"} of one job, in seconds.
Json JobSeconds(const core::JobReport& job) {
  Json out = Json::object();
  out["total"] = Seconds(job.total_ns);
  for (int i = 0; i < core::kNumCategories; ++i) {
    out[core::CategoryName(static_cast<core::Category>(i))] =
        Seconds(job.nanos[i]);
  }
  return out;
}

// The same categories of a set of jobs, in chip-seconds.
Json ChipSeconds(const core::Totals& totals) {
  Json out = Json::object();
  out["total"] = totals.total_chip_seconds;
  for (int i = 0; i < core::kNumCategories; ++i) {
    out[core::CategoryName(static_cast<core::Category>(i))] =
        totals.chip_seconds[i];
  }
  return out;
}

// Issue 18: {"queued": x, ..., "lost": x}, or null when unknown.
Json ByCategory(const std::optional<core::CategoryChipSeconds>& values) {
  if (!values) return nullptr;
  Json out = Json::object();
  for (int i = 0; i < core::kNumCategories; ++i) {
    out[core::CategoryName(static_cast<core::Category>(i))] = (*values)[i];
  }
  return out;
}

void AddRatios(const core::Ratios& r, Json* out) {
  (*out)["goodput"] = Nullable(r.goodput);
  (*out)["sg"] = Nullable(r.sg);
  (*out)["rg"] = Nullable(r.rg);
  (*out)["pg"] = Nullable(r.pg);
  (*out)["mpg"] = Nullable(r.mpg);
}

// job_id ... state: what the job is.
Json JobIdentity(const core::JobReport& job) {
  Json out = Json::object();
  out["job_id"] = job.job_id;
  out["chips"] = job.chips > 0 ? Json(job.chips) : Json(nullptr);
  out["accelerator"] = job.accelerator;
  out["workload"] = v1::JobSubmitted::Workload_Name(job.workload);
  out["framework"] = job.framework;
  out["labels"] = Json::object();
  for (const auto& [key, value] : job.labels) out["labels"][key] = value;
  out["state"] = core::JobStateName(job.state);
  return out;
}

Json SegmentsToJson(const core::FleetReport& report) {
  Json out = Json::object();
  for (const auto& [dimension, values] : report.segments) {
    Json& dim = out[dimension] = Json::object();
    for (const auto& [value, totals] : values)
      dim[value] = TotalsToJson(totals);
  }
  return out;
}

// Issue 18: `job`'s advice, with its accelerator segment's rate.
std::optional<core::CheckpointAdvice> JobAdvice(const core::FleetReport& report,
                                                const core::JobReport& job) {
  const auto dim = report.segments.find("accelerator");
  const std::string value =
      job.accelerator.empty() ? "unknown" : job.accelerator;
  if (dim == report.segments.end()) return core::AdviseJob(job, 0);
  const auto seg = dim->second.find(value);
  if (seg == dim->second.end()) return core::AdviseJob(job, 0);
  return core::AdviseJobInSegment(job, seg->second.checkpoint);
}

}  // namespace

nlohmann::ordered_json JobReportToJson(const core::JobReport& job) {
  Json out = JobIdentity(job);
  out["seconds"] = JobSeconds(job);
  out["custom_seconds"] = Json::object();
  for (const auto& [name, ns] : job.custom_nanos) {
    out["custom_seconds"][name] = Seconds(ns);
  }
  out["at_risk_seconds"] = Seconds(job.at_risk_ns);
  out["ideal_seconds"] = job.ideal_seconds;
  AddRatios(core::JobRatios(job), &out);
  out["steps"] = {{"last", Nullable(job.last_step)},
                  {"last_checkpoint", Nullable(job.last_checkpoint)},
                  {"lost", job.lost_steps}};
  out["interruptions"] = job.interruptions;
  out["checkpoints"] = job.checkpoints;
  // Rule 14: null for a job that is not elastic.
  const std::optional<core::ElasticMeasures> elastic = core::JobElastic(job);
  out["min_chips"] = Nullable(job.min_chips);
  out["degraded_chip_seconds"] =
      elastic ? Json(elastic->degraded_chip_seconds) : Json(nullptr);
  out["slice_efficiency"] =
      elastic ? Nullable(elastic->slice_efficiency) : Json(nullptr);
  out["cost_usd"] = ByCategory(core::JobCostUsd(job));
  out["energy_kwh"] = ByCategory(core::JobEnergyKwh(job));
  return out;
}

nlohmann::ordered_json TotalsToJson(const core::Totals& totals) {
  core::TotalsRatios ratios = core::ComputeRatios(totals);
  Json out = Json::object();
  out["chip_seconds"] = ChipSeconds(totals);
  AddRatios(ratios.ratios, &out);
  out["sg_capacity"] = Nullable(ratios.sg_capacity);
  out["mpg_capacity"] = Nullable(ratios.mpg_capacity);
  // Rule 14: over the set's elastic jobs (0 and null with none).
  const core::ElasticMeasures elastic = core::TotalsElastic(totals);
  out["degraded_chip_seconds"] = elastic.degraded_chip_seconds;
  out["slice_efficiency"] = Nullable(elastic.slice_efficiency);
  out["jobs"] = totals.jobs;
  out["jobs_without_chips"] = totals.jobs_without_chips;
  out["cost_usd"] = ByCategory(totals.cost_usd);
  out["energy_kwh"] = ByCategory(totals.energy_kwh);
  out["unpriced_chip_seconds"] = totals.unpriced_chip_seconds;
  out["unpowered_chip_seconds"] = totals.unpowered_chip_seconds;
  out["training_interruptions_per_chip_hour"] =
      3600 * core::InterruptionsPerChipSecond(totals.checkpoint);
  out["checkpoint_advice"] =
      CheckpointAdviceToJson(core::AdviseSet(totals.checkpoint));
  return out;
}

nlohmann::ordered_json CheckpointAdviceToJson(
    const std::optional<core::CheckpointAdvice>& a) {
  if (!a) return nullptr;
  return {{"mtbi_seconds", a->mtbi_seconds},
          {"mtbi_from", a->mtbi_from_segment ? "segment" : "job"},
          {"save_seconds", a->save_seconds},
          {"restart_seconds", a->restart_seconds},
          {"advised_interval_seconds", a->advised_interval_seconds},
          {"actual_interval_seconds", Nullable(a->actual_interval_seconds)},
          {"expected_lost_checkpoint_share",
           {{"advised", a->expected_share_at_advised},
            {"actual", Nullable(a->expected_share_at_actual)}}}};
}

nlohmann::ordered_json ReportToJson(const core::FleetReport& report) {
  Json out = Json::object();
  out["as_of"] = FormatRfc3339(report.as_of_ns);
  out["since"] =
      report.since_ns ? Json(FormatRfc3339(*report.since_ns)) : Json(nullptr);
  out["jobs"] = Json::array();
  for (const auto& job : report.jobs) {
    out["jobs"].push_back(JobReportToJson(job));
    out["jobs"].back()["checkpoint_advice"] =
        CheckpointAdviceToJson(JobAdvice(report, job));
  }
  out["fleet"] = TotalsToJson(report.fleet);
  out["segments"] = SegmentsToJson(report);
  return out;
}

absl::StatusOr<std::string> DumpJson(const nlohmann::ordered_json& json) {
  try {
    return json.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
  } catch (const std::exception& e) {
    return absl::InternalError(absl::StrCat("writing JSON: ", e.what()));
  }
}

absl::StatusOr<std::string> WriteReportJson(const core::FleetReport& report) {
  return DumpJson(ReportToJson(report));
}

}  // namespace goodput::report
