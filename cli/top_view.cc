#include "cli/top_view.h"

#include <optional>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/category.h"
#include "core/drilldown.h"
#include "core/job_report_proto.h"
#include "core/report.h"
#include "util/proto_time.h"
#include "util/time_format.h"

namespace goodput::cli {
namespace {

constexpr const char* kStates[] = {"RUNNING", "QUEUED", "RECOVERING", "ENDED"};

std::string Ratio(const std::optional<double>& v) {
  return v ? absl::StrFormat("%.3f", *v) : "-";
}

std::string Percent(const std::optional<double>& v) {
  return v ? absl::StrFormat("%.1f%%", 100 * *v) : "-";
}

template <typename Message>
std::optional<double> Field(const Message& m, bool (Message::*has)() const,
                            double (Message::*get)() const) {
  if (!(m.*has)()) return std::nullopt;
  return (m.*get)();
}

void AppendFleet(const v1::SummaryResponse& summary, std::string* out) {
  const v1::Ratios& r = summary.ratios();
  int64_t jobs = 0;
  for (const auto& [state, n] : summary.jobs_by_state()) jobs += n;
  absl::StrAppendFormat(out, "FLEET  %d jobs:", jobs);
  for (const char* s : kStates) {
    auto it = summary.jobs_by_state().find(s);
    absl::StrAppendFormat(
        out, " %d %s", it == summary.jobs_by_state().end() ? 0 : it->second, s);
  }
  absl::StrAppendFormat(out, "   %.1f chip-hours\n",
                        summary.fleet().total_chip_seconds() / 3600);
  using R = v1::Ratios;
  absl::StrAppendFormat(out, "  MPG %s   SG %s   RG %s   PG %s   goodput %s",
                        Ratio(Field(r, &R::has_mpg, &R::mpg)),
                        Ratio(Field(r, &R::has_sg, &R::sg)),
                        Ratio(Field(r, &R::has_rg, &R::rg)),
                        Ratio(Field(r, &R::has_pg, &R::pg)),
                        Percent(Field(r, &R::has_goodput, &R::goodput)));
  if (r.has_sg_capacity()) {
    absl::StrAppendFormat(
        out, "   capacity: SG %s MPG %s", Ratio(r.sg_capacity()),
        Ratio(Field(r, &R::has_mpg_capacity, &R::mpg_capacity)));
  }
  out->append("\n\n");
}

void AppendBadput(const v1::SummaryResponse& summary, std::string* out) {
  const double total = summary.fleet().total_chip_seconds();
  absl::StrAppendFormat(out, "%-12s %12s %7s\n", "BADPUT", "chip-hours",
                        "share");
  for (const v1::CategoryAmount& a : summary.badput()) {
    absl::StrAppendFormat(out, "  %-10s %12.1f %6.1f%%\n", a.category(),
                          a.chip_seconds() / 3600,
                          total > 0 ? 100 * a.chip_seconds() / total : 0.0);
  }
  out->append("\n");
}

// One row of the worst jobs: badput and lost chip-hours, the largest
// badput category and its share of the job's lifetime.
std::string WorstRow(const core::JobReport& job) {
  const double chips = static_cast<double>(job.chips);
  const double badput_h = core::LostChipSeconds(job) / 3600;
  const double lost_h =
      chips * job.nanos[core::Index(core::Category::kLost)] / 1e9 / 3600;
  std::string top = "-";
  const auto badput = core::BadputByCategory(job.nanos);
  if (!badput.empty()) {
    top = absl::StrFormat(
        "%s %.1f%%", core::CategoryName(badput[0].first),
        job.total_ns > 0
            ? 100 * badput[0].second / static_cast<double>(job.total_ns)
            : 0.0);
  }
  const core::Ratios r = core::JobRatios(job);
  return absl::StrFormat(
      "%-16s %6d %-10s %-8s %-14s %9.1f %8.1f %7s %6s  %s\n",
      job.job_id.substr(0, 16), job.chips, core::JobStateName(job.state),
      job.accelerator.substr(0, 8),
      v1::JobSubmitted::Workload_Name(job.workload).substr(0, 14), badput_h,
      lost_h, Percent(r.goodput), Ratio(r.mpg), top);
}

absl::Status AppendWorst(const v1::SummaryResponse& summary, size_t limit,
                         std::string* out) {
  absl::StrAppendFormat(out, "%-16s %6s %-10s %-8s %-14s %9s %8s %7s %6s  %s\n",
                        "WORST JOBS", "CHIPS", "STATE", "ACCEL", "WORKLOAD",
                        "BADPUT ch", "LOST ch", "GOODPUT", "MPG", "TOP BADPUT");
  for (int i = 0; i < summary.worst_jobs_size() && i < static_cast<int>(limit);
       ++i) {
    absl::StatusOr<core::JobReport> job =
        core::JobReportFromProto(summary.worst_jobs(i));
    if (!job.ok()) return job.status();
    out->append(WorstRow(*job));
  }
  return absl::OkStatus();
}

void AppendCounters(const TopContext& context, std::string* out) {
  out->append("\nINGEST ");
  if (!context.counters) {
    out->append(" (counters not available)\n");
    return;
  }
  for (const auto& [name, value] : *context.counters) {
    absl::StrAppendFormat(out, "  %s %.0f", name, value);
  }
  out->append("\n");
}

}  // namespace

std::map<std::string, double> IngestCounters(const v1::IngestCounters& in) {
  return {{"agents", static_cast<double>(in.agents())},
          {"batches duplicate", static_cast<double>(in.duplicate_batches())},
          {"events accepted", static_cast<double>(in.accepted_events())},
          {"events rejected", static_cast<double>(in.rejected_events())}};
}

absl::StatusOr<std::string> RenderTop(const v1::SummaryResponse& summary,
                                      const TopContext& context) {
  std::string out = absl::StrFormat(
      "goodput top  %s  as of %s  every %gs  (Ctrl-C quits)\nmetrics: %s\n\n",
      context.server, FormatRfc3339(TimestampToNanos(summary.as_of())),
      context.interval_ns / 1e9,
      context.metrics_url.empty() ? "-" : context.metrics_url);
  AppendFleet(summary, &out);
  AppendBadput(summary, &out);
  if (absl::Status s = AppendWorst(summary, context.worst_jobs, &out);
      !s.ok()) {
    return s;
  }
  AppendCounters(context, &out);
  return out;
}

}  // namespace goodput::cli
