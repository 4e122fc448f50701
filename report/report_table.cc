#include "report/report_table.h"

#include <algorithm>
#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/category.h"
#include "report/table_cells.h"
#include "util/time_format.h"

namespace goodput::report {
namespace {

std::string Title(const core::FleetReport& report) {
  std::string title =
      absl::StrCat("goodput report as of ", FormatRfc3339(report.as_of_ns));
  if (report.since_ns) {
    absl::StrAppend(&title, " since ", FormatRfc3339(*report.since_ns));
  }
  return title + "\n";
}

size_t JobColumnWidth(const core::FleetReport& report) {
  size_t width = 3;  // "JOB"
  for (const auto& job : report.jobs)
    width = std::max(width, job.job_id.size());
  return width;
}

std::string JobRow(const core::JobReport& job, int width) {
  core::Ratios r = core::JobRatios(job);
  std::string chips = job.chips > 0 ? absl::StrCat(job.chips) : "-";
  return absl::StrFormat(
      "%-*s %6s  %-10s %9s %8s %6s %6s %6s %6s  %s\n", width, job.job_id, chips,
      core::JobStateName(job.state), FormatHms(job.total_ns),
      FormatPercent(r.goodput), FormatRatio(r.sg), FormatRatio(r.rg),
      FormatRatio(r.pg), FormatRatio(r.mpg),
      TopBadput(job.nanos, static_cast<double>(job.total_ns)));
}

}  // namespace

std::string FormatFleetLines(const core::Totals& fleet) {
  core::TotalsRatios r = core::ComputeRatios(fleet);
  std::string out = absl::StrFormat(
      "FLEET  %d job%s (%d without chips)  %.1f chip-hours  goodput %s  "
      "SG %s  RG %s  PG %s  MPG %s  top badput %s\n",
      fleet.jobs, fleet.jobs == 1 ? "" : "s", fleet.jobs_without_chips,
      fleet.total_chip_seconds / 3600, FormatPercent(r.ratios.goodput),
      FormatRatio(r.ratios.sg), FormatRatio(r.ratios.rg),
      FormatRatio(r.ratios.pg), FormatRatio(r.ratios.mpg),
      TopBadput(fleet.chip_seconds, fleet.total_chip_seconds));
  // Exclusions: only when some time was excluded.
  const double excluded =
      fleet.chip_seconds[core::Index(core::Category::kExcluded)];
  if (excluded > 0) {
    absl::StrAppendFormat(
        &out, "EXCLUDED  %.1f chip-hours (left out of every ratio)\n",
        excluded / 3600);
  }
  // Rule 14: only when some elastic job was all-allocated.
  const core::ElasticMeasures elastic = core::TotalsElastic(fleet);
  if (elastic.requested_chip_seconds > 0) {
    absl::StrAppendFormat(
        &out, "ELASTIC  degraded %.1f chip-hours  slice efficiency %s\n",
        elastic.degraded_chip_seconds / 3600,
        FormatRatio(elastic.slice_efficiency));
  }
  if (fleet.capacity_chip_seconds) {
    absl::StrAppendFormat(&out, "CAPACITY  %.1f chip-hours  SG %s  MPG %s\n",
                          *fleet.capacity_chip_seconds / 3600,
                          FormatRatio(r.sg_capacity),
                          FormatRatio(r.mpg_capacity));
  }
  return out;
}

std::string FormatReportTable(const core::FleetReport& report) {
  int width = static_cast<int>(JobColumnWidth(report));
  std::string out = Title(report) + "\n";
  absl::StrAppendFormat(&out, "%-*s %6s  %-10s %9s %8s %6s %6s %6s %6s  %s\n",
                        width, "JOB", "CHIPS", "STATE", "LIFETIME", "GOODPUT",
                        "SG", "RG", "PG", "MPG", "TOP BADPUT");
  for (const auto& job : report.jobs) out += JobRow(job, width);
  if (report.jobs.empty()) out += "(no jobs)\n";
  return out + "\n" + FormatFleetLines(report.fleet);
}

}  // namespace goodput::report
