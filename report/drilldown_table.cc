#include "report/drilldown_table.h"

#include <algorithm>
#include <optional>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/time.h"
#include "core/badput_cost.h"
#include "core/checkpoint_advice.h"
#include "report/report_table.h"
#include "report/table_cells.h"
#include "util/time_format.h"

namespace goodput::report {
namespace {

std::string AsOf(int64_t as_of_ns, const std::optional<int64_t>& since_ns) {
  std::string out = absl::StrCat("as of ", FormatRfc3339(as_of_ns));
  if (since_ns) absl::StrAppend(&out, " since ", FormatRfc3339(*since_ns));
  return out;
}

std::string Chips(int64_t chips) {
  return chips > 0 ? absl::StrCat(chips) : "-";
}

std::string Clock(int64_t ns, const char* format) {
  return absl::FormatTime(format, absl::FromUnixNanos(ns), absl::UTCTimeZone());
}

std::string FilterText(const core::JobFilter& filter) {
  std::vector<std::string> parts;
  for (const auto& [dimension, value] : filter.segments) {
    parts.push_back(absl::StrCat(dimension, "=", value));
  }
  if (filter.state) {
    parts.push_back(absl::StrCat("state=", core::JobStateName(*filter.state)));
  }
  return parts.empty() ? "none" : absl::StrJoin(parts, ", ");
}

int IdWidth(const std::vector<core::JobReport>& jobs) {
  size_t width = 3;  // "JOB"
  for (const auto& job : jobs) width = std::max(width, job.job_id.size());
  return static_cast<int>(width);
}

constexpr char kRatioHeader[] = "%8s %6s %6s %6s %6s";

std::string RatioCells(const core::Ratios& r) {
  return absl::StrFormat(kRatioHeader, FormatPercent(r.goodput),
                         FormatRatio(r.sg), FormatRatio(r.rg),
                         FormatRatio(r.pg), FormatRatio(r.mpg));
}

std::string RatioHeader() {
  return absl::StrFormat(kRatioHeader, "GOODPUT", "SG", "RG", "PG", "MPG");
}

std::string JobsRow(const core::JobReport& job, int width) {
  return absl::StrFormat(
      "%-*s %6s  %-12s %-14s %-10s %9s %14s %s  %s\n", width, job.job_id,
      Chips(job.chips), job.accelerator.empty() ? "-" : job.accelerator,
      v1::JobSubmitted::Workload_Name(job.workload),
      core::JobStateName(job.state), FormatHms(job.total_ns),
      FormatChipHours(core::LostChipSeconds(job)),
      RatioCells(core::JobRatios(job)),
      TopBadput(job.nanos, static_cast<double>(job.total_ns)));
}

}  // namespace

// How the jobs table is ordered, for its title.
const char* OrderText(core::JobSort sort) {
  switch (sort) {
    case core::JobSort::kLost:
      return "ranked by lost chip-hours (badput x chips)";
    case core::JobSort::kJobId:
      return "sorted by job id";
    case core::JobSort::kChips:
      return "sorted by chips, most first";
    case core::JobSort::kMpg:
      return "sorted by MPG, lowest first (undefined last)";
    case core::JobSort::kAtRisk:
      return "sorted by at-risk time, most first";
  }
  return "";
}

std::string FormatJobsTable(const core::JobsView& view,
                            const core::JobFilter& filter) {
  const int width = IdWidth(view.jobs);
  std::string out = absl::StrFormat(
      "jobs %s, %s\n"
      "%d shown of %d matching; filters: %s\n\n",
      AsOf(view.as_of_ns, view.since_ns), OrderText(filter.sort),
      view.jobs.size(), view.matched, FilterText(filter));
  absl::StrAppendFormat(&out, "%-*s %6s  %-12s %-14s %-10s %9s %14s %s  %s\n",
                        width, "JOB", "CHIPS", "ACCELERATOR", "WORKLOAD",
                        "STATE", "LIFETIME", "LOST", RatioHeader(),
                        "TOP BADPUT");
  for (const auto& job : view.jobs) out += JobsRow(job, width);
  if (view.jobs.empty()) return out + "(no jobs)\n";
  return out +
         absl::StrCat("\nnext: goodputctl job ", view.jobs[0].job_id, "\n");
}

namespace {

std::string JobHeader(const core::JobView& view) {
  const core::JobReport& job = view.job;
  std::vector<std::string> labels;
  for (const auto& [k, v] : job.labels) labels.push_back(k + "=" + v);
  return absl::StrFormat(
      "job %s %s\n  %s chips  accelerator %s  %s  framework %s  labels %s  "
      "state %s\n  lost %s of %s (badput x chips)\n\n",
      job.job_id, AsOf(view.as_of_ns, std::nullopt), Chips(job.chips),
      job.accelerator.empty() ? "-" : job.accelerator,
      v1::JobSubmitted::Workload_Name(job.workload),
      job.framework.empty() ? "-" : job.framework,
      labels.empty() ? "-" : absl::StrJoin(labels, ","),
      core::JobStateName(job.state),
      FormatChipHours(core::LostChipSeconds(job)),
      FormatChipHours(static_cast<double>(job.total_ns) * job.chips / 1e9));
}

std::string WindowsTable(const core::JobView& view) {
  std::string out =
      absl::StrFormat("%-6s %-24s %9s %s  %s\n", "WINDOW", "SINCE", "LIFETIME",
                      RatioHeader(), "TOP BADPUT");
  for (const core::JobWindow& w : view.windows) {
    const core::JobReport& r = w.report;
    absl::StrAppendFormat(&out, "%-6s %-24s %9s %s  %s\n", w.name,
                          w.since_ns ? FormatRfc3339(*w.since_ns) : "-",
                          FormatHms(r.total_ns), RatioCells(core::JobRatios(r)),
                          TopBadput(r.nanos, static_cast<double>(r.total_ns)));
  }
  return out;
}

// Issue 18: "$12.34" and "5.6 kWh" of category `c`, or "-" when unknown.
std::string Dollars(const std::optional<core::CategoryChipSeconds>& usd,
                    core::Category c) {
  return usd ? absl::StrFormat("$%.2f", (*usd)[core::Index(c)]) : "-";
}
std::string Kwh(const std::optional<core::CategoryChipSeconds>& kwh,
                core::Category c) {
  return kwh ? absl::StrFormat("%.1f kWh", (*kwh)[core::Index(c)]) : "-";
}

std::string BreakdownTable(const core::JobReport& job) {
  std::string out =
      "\nWHERE THE TIME WENT (all time; badput largest first)\n"
      "CATEGORY      TIME       SHARE         COST       ENERGY\n";
  const double total = static_cast<double>(job.total_ns);
  const auto usd = core::JobCostUsd(job);
  const auto kwh = core::JobEnergyKwh(job);
  auto row = [&](core::Category c, double ns) {
    absl::StrAppendFormat(
        &out, "%-12s %9s %7s %12s %12s\n", core::CategoryName(c),
        FormatHms(static_cast<int64_t>(ns)),
        FormatPercent(total > 0 ? std::optional(ns / total) : std::nullopt),
        Dollars(usd, c), Kwh(kwh, c));
  };
  for (const auto& [c, ns] : core::BadputByCategory(job.nanos)) row(c, ns);
  row(core::Category::kProductive,
      static_cast<double>(job.nanos[core::Index(core::Category::kProductive)]));
  for (const auto& [name, ns] : job.custom_nanos) {
    absl::StrAppendFormat(&out, "  custom %s: %s\n", name, FormatHms(ns));
  }
  return out;
}

std::string Progress(const core::JobReport& job) {
  auto step = [](const std::optional<int64_t>& s) {
    return s ? absl::StrCat(*s) : std::string("-");
  };
  return absl::StrFormat(
      "\nat risk: %s of productive time not yet durable\n"
      "steps: last %s, last checkpoint %s, lost completions %d\n"
      "interruptions: %d (notices %d)\n",
      FormatHms(job.at_risk_ns), step(job.last_step), step(job.last_checkpoint),
      job.lost_steps, job.interruptions, job.notices);
}

// Issue 18 part 1: one line of step times, or nothing.
std::string StepTimeText(const core::JobReport& job) {
  if (!job.step_time) return "";
  const core::StepTimeSummary& st = *job.step_time;
  std::string out = absl::StrFormat(
      "step time: recent %.3g s (p50 of %d steps), baseline %.3g s "
      "(median of %d steps, MAD %.3g s)",
      st.recent_p50_s, st.recent_steps, st.baseline_median_s, st.baseline_steps,
      st.baseline_mad_s);
  if (st.ratio) absl::StrAppendFormat(&out, ", ratio %.2f", *st.ratio);
  return out + "\n";
}

std::string SpanDetail(const core::TimelineEntry& e) {
  std::vector<std::string> parts;
  if (e.first_step) {
    parts.push_back(
        *e.first_step == *e.last_step
            ? absl::StrCat("step ", *e.first_step)
            : absl::StrCat("steps ", *e.first_step, "-", *e.last_step));
  }
  if (e.checkpoints > 0) {
    parts.push_back(absl::StrCat(e.checkpoints, " checkpoint",
                                 e.checkpoints == 1 ? "" : "s", " (last ",
                                 *e.last_checkpoint, ")"));
  }
  std::string out = absl::StrJoin(parts, ", ");
  if (e.ongoing) absl::StrAppend(&out, out.empty() ? "" : " ", "(ongoing)");
  return out;
}

std::string TimelineLine(const core::TimelineEntry& e) {
  const std::string attempt = e.attempt.empty() ? "-" : e.attempt;
  if (e.kind == core::TimelineEntry::Kind::kMark) {
    return absl::StrFormat("  %-17s  %-10s ! %s\n",
                           Clock(e.start_ns, "%H:%M:%S"), attempt, e.what);
  }
  std::string line = absl::StrFormat(
      "  %s-%s  %-10s   %-18s %9s  %s", Clock(e.start_ns, "%H:%M:%S"),
      Clock(e.end_ns, "%H:%M:%S"), attempt, e.what,
      FormatShortDuration(e.end_ns - e.start_ns), SpanDetail(e));
  line.erase(line.find_last_not_of(' ') + 1);
  return line + "\n";
}

std::string TimelineText(const core::JobView& view) {
  std::string out = "\nTIMELINE (UTC; ! marks an instant)\n";
  if (view.timeline_omitted > 0) {
    absl::StrAppend(&out, "  ... ", view.timeline_omitted,
                    " earlier entries\n");
  }
  std::string day;
  for (const core::TimelineEntry& e : view.timeline) {
    std::string d = Clock(e.start_ns, "%Y-%m-%d");
    if (d != day) absl::StrAppend(&out, (day = d), "\n");
    out += TimelineLine(e);
  }
  return out;
}

}  // namespace

namespace {

// Issue 18 part 2: one line of checkpoint advice, or nothing.
std::string AdviceText(const core::JobView& view) {
  const std::optional<core::CheckpointAdvice> a =
      core::JobViewCheckpointAdvice(view);
  if (!a) return "";
  std::string out = absl::StrFormat(
      "checkpoint advice: save every %.1f min (Young/Daly sqrt(2 C M): "
      "M %.2f h between interruptions%s, C %.0f s per save; restarts R %.0f "
      "s); expected lost + checkpoint %.1f%% of running time",
      a->advised_interval_seconds / 60, a->mtbi_seconds / 3600,
      a->mtbi_from_segment ? " (its accelerator's rate)" : "", a->save_seconds,
      a->restart_seconds, 100 * a->expected_share_at_advised);
  if (a->actual_interval_seconds) {
    absl::StrAppendFormat(&out, ", %.1f%% now (every %.1f min)",
                          100 * *a->expected_share_at_actual,
                          *a->actual_interval_seconds / 60);
  }
  return out + "\n";
}

}  // namespace

std::string FormatJobViewTable(const core::JobView& view) {
  if (!view.note.empty()) {  // all time only
    return JobHeader(view) + "note: " + view.note + "\n" +
           BreakdownTable(view.job) + Progress(view.job) +
           StepTimeText(view.job);
  }
  return JobHeader(view) + WindowsTable(view) + BreakdownTable(view.job) +
         Progress(view.job) + StepTimeText(view.job) + AdviceText(view) +
         TimelineText(view);
}

namespace {

double TotalsLostChipSeconds(const core::Totals& t) {
  return t.total_chip_seconds -
         t.chip_seconds[core::Index(core::Category::kProductive)];
}

std::string FleetBadput(const core::Totals& fleet) {
  std::string out =
      "\nWHERE THE CHIP-TIME WENT (badput largest first)\n"
      "CATEGORY             CHIP-TIME   SHARE         COST       ENERGY\n";
  const double total = fleet.total_chip_seconds;
  for (const auto& [c, chip_seconds] :
       core::BadputByCategory(fleet.chip_seconds)) {
    absl::StrAppendFormat(&out, "%-12s %18s %7s %12s %12s\n",
                          core::CategoryName(c), FormatChipHours(chip_seconds),
                          FormatPercent(chip_seconds / total),
                          Dollars(fleet.cost_usd, c), Kwh(fleet.energy_kwh, c));
  }
  if (fleet.unpriced_chip_seconds > 0) {
    absl::StrAppendFormat(&out,
                          "(cost leaves out %s of jobs without a price)\n",
                          FormatChipHours(fleet.unpriced_chip_seconds));
  }
  return out;
}

std::string SegmentsTable(const core::FleetView& view) {
  std::vector<std::pair<std::string, const core::Totals*>> rows;
  size_t width = 5;  // "VALUE"
  for (const auto& [value, totals] : view.segments) {
    rows.emplace_back(value, &totals);
    width = std::max(width, value.size());
  }
  std::stable_sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) {
    return TotalsLostChipSeconds(*a.second) > TotalsLostChipSeconds(*b.second);
  });
  std::string out = absl::StrFormat(
      "\nBY %s (most lost chip-hours first)\n%-*s %5s %16s %16s %s %7s  %s\n",
      absl::AsciiStrToUpper(view.by), static_cast<int>(width), "VALUE", "JOBS",
      "CHIP-TIME", "LOST", RatioHeader(), "MPG_CAP", "TOP BADPUT");
  for (const auto& [value, t] : rows) {
    core::TotalsRatios r = core::ComputeRatios(*t);
    absl::StrAppendFormat(&out, "%-*s %5d %16s %16s %s %7s  %s\n",
                          static_cast<int>(width), value, t->jobs,
                          FormatChipHours(t->total_chip_seconds),
                          FormatChipHours(TotalsLostChipSeconds(*t)),
                          RatioCells(r.ratios), FormatRatio(r.mpg_capacity),
                          TopBadput(t->chip_seconds, t->total_chip_seconds));
  }
  if (rows.empty()) out += "(no segments)\n";
  return out;
}

// Issue 18 part 2: "%.1fm" of `seconds`, or "-".
std::string Minutes(const std::optional<double>& seconds) {
  return seconds ? absl::StrFormat("%.1fm", *seconds / 60) : "-";
}

std::string Share(const std::optional<double>& share) {
  return share ? absl::StrFormat("%.1f%%", 100 * *share) : "-";
}

// Issue 18 part 2: per segment with advice (TRAINING jobs, >= 3
// interruptions, a save), M, C and the advised against the actual
// interval; nothing when no segment has advice.
std::string SegmentAdviceTable(const core::FleetView& view) {
  std::vector<std::pair<std::string, core::CheckpointAdvice>> rows;
  size_t width = 5;  // "VALUE"
  for (const auto& [value, totals] : view.segments) {
    if (auto a = core::AdviseSet(totals.checkpoint)) {
      rows.emplace_back(value, *a);
      width = std::max(width, value.size());
    }
  }
  if (rows.empty()) return "";
  const int w = static_cast<int>(width);
  std::string out = absl::StrFormat(
      "\nCHECKPOINT ADVICE BY %s (TRAINING jobs; Young/Daly sqrt(2 C M))\n"
      "%-*s %8s %7s %9s %9s %8s %8s\n",
      absl::AsciiStrToUpper(view.by), w, "VALUE", "M", "C", "ADVISED", "ACTUAL",
      "LOSS@ADV", "LOSS@ACT");
  for (const auto& [value, a] : rows) {
    absl::StrAppendFormat(
        &out, "%-*s %7.2fh %6.0fs %9s %9s %8s %8s\n", w, value,
        a.mtbi_seconds / 3600, a.save_seconds,
        Minutes(a.advised_interval_seconds), Minutes(a.actual_interval_seconds),
        Share(a.expected_share_at_advised), Share(a.expected_share_at_actual));
  }
  return out;
}

std::string WorstJobs(const core::FleetView& view) {
  if (view.worst_jobs.empty()) return "";
  const int width = IdWidth(view.worst_jobs);
  std::string out = absl::StrFormat(
      "\nWORST JOBS (most lost chip-hours)\n%-*s %6s %14s  %s\n", width, "JOB",
      "CHIPS", "LOST", "TOP BADPUT");
  for (const auto& job : view.worst_jobs) {
    absl::StrAppendFormat(
        &out, "%-*s %6s %14s  %s\n", width, job.job_id, Chips(job.chips),
        FormatChipHours(core::LostChipSeconds(job)),
        TopBadput(job.nanos, static_cast<double>(job.total_ns)));
  }
  return out + absl::StrCat("\nnext: goodputctl job ",
                            view.worst_jobs[0].job_id, "\n");
}

}  // namespace

std::string FormatFleetViewTable(const core::FleetView& view) {
  return absl::StrCat("fleet ", AsOf(view.as_of_ns, view.since_ns), " by ",
                      view.by, "\n\n", FormatFleetLines(view.fleet),
                      FleetBadput(view.fleet), SegmentsTable(view),
                      SegmentAdviceTable(view), WorstJobs(view));
}

}  // namespace goodput::report
