#include "report/query_proto.h"

#include <iterator>
#include <optional>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/category.h"
#include "core/job_report_proto.h"
#include "util/proto_time.h"

namespace goodput::report {
namespace {

std::optional<int64_t> OptionalTime(bool has,
                                    const google::protobuf::Timestamp& t) {
  if (!has) return std::nullopt;
  return TimestampToNanos(t);
}

// Converts every job of `in` into `out`; the first bad one's error.
absl::Status JobsFromProto(
    const google::protobuf::RepeatedPtrField<v1::JobReport>& in,
    std::vector<core::JobReport>* out) {
  out->reserve(in.size());
  for (const v1::JobReport& job : in) {
    absl::StatusOr<core::JobReport> j = core::JobReportFromProto(job);
    if (!j.ok()) return j.status();
    out->push_back(*std::move(j));
  }
  return absl::OkStatus();
}

void JobsToProto(const std::vector<core::JobReport>& in,
                 google::protobuf::RepeatedPtrField<v1::JobReport>* out) {
  out->Reserve(static_cast<int>(in.size()));
  for (const core::JobReport& job : in) core::JobReportToProto(job, out->Add());
}

void SetOptional(const std::optional<double>& v,
                 void (v1::Ratios::*set)(double), v1::Ratios* out) {
  if (v) (out->*set)(*v);
}

// Issue 18's sums; a server that predates them sends none (zero).
void CostFromProto(const v1::Totals& in, core::Totals* out) {
  for (int i = 0; i < core::kNumCategories; ++i) {
    if (i < in.category_cost_usd_size()) {
      out->cost_usd[i] = in.category_cost_usd(i);
    }
    if (i < in.category_energy_kwh_size()) {
      out->energy_kwh[i] = in.category_energy_kwh(i);
    }
  }
  out->unpriced_chip_seconds = in.unpriced_chip_seconds();
  out->unpowered_chip_seconds = in.unpowered_chip_seconds();
}

// Issue 18, checkpoint advice's sums.
void CheckpointSumsFromProto(const v1::CheckpointSums& in,
                             core::CheckpointSums* out) {
  out->run_seconds = in.run_seconds();
  out->run_chip_seconds = in.run_chip_seconds();
  out->checkpoint_seconds = in.checkpoint_seconds();
  out->restart_seconds = in.restart_seconds();
  out->interruptions = in.interruptions();
  out->checkpoints = in.checkpoints();
}

void CheckpointSumsToProto(const core::CheckpointSums& in,
                           v1::CheckpointSums* out) {
  out->set_run_seconds(in.run_seconds);
  out->set_run_chip_seconds(in.run_chip_seconds);
  out->set_checkpoint_seconds(in.checkpoint_seconds);
  out->set_restart_seconds(in.restart_seconds);
  out->set_interruptions(in.interruptions);
  out->set_checkpoints(in.checkpoints);
}

}  // namespace

v1::Totals TotalsToProto(const core::Totals& totals) {
  v1::Totals out;
  for (double s : totals.chip_seconds) out.add_category_chip_seconds(s);
  out.set_total_chip_seconds(totals.total_chip_seconds);
  out.set_ideal_chip_seconds(totals.ideal_chip_seconds);
  out.set_costed_productive_chip_seconds(totals.costed_productive_chip_seconds);
  if (totals.capacity_chip_seconds) {
    out.set_capacity_chip_seconds(*totals.capacity_chip_seconds);
  }
  out.set_jobs(totals.jobs);
  out.set_jobs_without_chips(totals.jobs_without_chips);
  for (double usd : totals.cost_usd) out.add_category_cost_usd(usd);
  for (double kwh : totals.energy_kwh) out.add_category_energy_kwh(kwh);
  out.set_unpriced_chip_seconds(totals.unpriced_chip_seconds);
  out.set_unpowered_chip_seconds(totals.unpowered_chip_seconds);
  CheckpointSumsToProto(totals.checkpoint, out.mutable_checkpoint());
  return out;
}

absl::StatusOr<core::Totals> TotalsFromProto(const v1::Totals& in) {
  if (in.category_chip_seconds_size() != core::kNumCategories) {
    return absl::InvalidArgumentError(absl::StrCat(
        "totals: category_chip_seconds: want ", core::kNumCategories,
        " values, got ", in.category_chip_seconds_size()));
  }
  core::Totals out;
  for (int i = 0; i < core::kNumCategories; ++i) {
    out.chip_seconds[i] = in.category_chip_seconds(i);
  }
  out.total_chip_seconds = in.total_chip_seconds();
  out.ideal_chip_seconds = in.ideal_chip_seconds();
  out.costed_productive_chip_seconds = in.costed_productive_chip_seconds();
  if (in.has_capacity_chip_seconds()) {
    out.capacity_chip_seconds = in.capacity_chip_seconds();
  }
  out.jobs = in.jobs();
  out.jobs_without_chips = in.jobs_without_chips();
  CostFromProto(in, &out);
  CheckpointSumsFromProto(in.checkpoint(), &out.checkpoint);
  return out;
}

v1::TimelineEntry TimelineEntryToProto(const core::TimelineEntry& entry) {
  v1::TimelineEntry out;
  out.set_kind(entry.kind == core::TimelineEntry::Kind::kMark
                   ? v1::TimelineEntry::MARK
                   : v1::TimelineEntry::SPAN);
  *out.mutable_start() = NanosToTimestamp(entry.start_ns);
  *out.mutable_end() = NanosToTimestamp(entry.end_ns);
  out.set_attempt(entry.attempt);
  out.set_what(entry.what);
  if (entry.first_step) out.set_first_step(*entry.first_step);
  if (entry.last_step) out.set_last_step(*entry.last_step);
  out.set_checkpoints(entry.checkpoints);
  if (entry.last_checkpoint) out.set_last_checkpoint(*entry.last_checkpoint);
  out.set_ongoing(entry.ongoing);
  return out;
}

core::TimelineEntry TimelineEntryFromProto(const v1::TimelineEntry& in) {
  core::TimelineEntry out;
  out.kind = in.kind() == v1::TimelineEntry::MARK
                 ? core::TimelineEntry::Kind::kMark
                 : core::TimelineEntry::Kind::kSpan;
  out.start_ns = TimestampToNanos(in.start());
  out.end_ns = TimestampToNanos(in.end());
  out.attempt = in.attempt();
  out.what = in.what();
  if (in.has_first_step()) out.first_step = in.first_step();
  if (in.has_last_step()) out.last_step = in.last_step();
  out.checkpoints = in.checkpoints();
  if (in.has_last_checkpoint()) out.last_checkpoint = in.last_checkpoint();
  out.ongoing = in.ongoing();
  return out;
}

v1::JobsResponse JobsViewToProto(const core::JobsView& view) {
  v1::JobsResponse out;
  *out.mutable_as_of() = NanosToTimestamp(view.as_of_ns);
  if (view.since_ns) *out.mutable_since() = NanosToTimestamp(*view.since_ns);
  JobsToProto(view.jobs, out.mutable_jobs());
  out.set_matched(view.matched);
  return out;
}

absl::StatusOr<core::JobsView> JobsViewFromProto(const v1::JobsResponse& in) {
  core::JobsView out;
  out.as_of_ns = TimestampToNanos(in.as_of());
  out.since_ns = OptionalTime(in.has_since(), in.since());
  if (absl::Status s = JobsFromProto(in.jobs(), &out.jobs); !s.ok()) return s;
  out.matched = in.matched();
  return out;
}

v1::JobResponse JobViewToProto(const core::JobView& view) {
  v1::JobResponse out;
  *out.mutable_as_of() = NanosToTimestamp(view.as_of_ns);
  core::JobReportToProto(view.job, out.mutable_job());
  for (const core::JobWindow& w : view.windows) {
    v1::JobWindow* window = out.add_windows();
    window->set_name(w.name);
    if (w.since_ns) *window->mutable_since() = NanosToTimestamp(*w.since_ns);
    core::JobReportToProto(w.report, window->mutable_report());
  }
  for (const core::TimelineEntry& e : view.timeline) {
    *out.add_timeline() = TimelineEntryToProto(e);
  }
  out.set_timeline_omitted(view.timeline_omitted);
  out.set_note(view.note);
  out.set_segment_interruptions_per_chip_second(
      view.segment_interruptions_per_chip_second);
  return out;
}

absl::StatusOr<core::JobView> JobViewFromProto(const v1::JobResponse& in) {
  core::JobView out;
  out.as_of_ns = TimestampToNanos(in.as_of());
  absl::StatusOr<core::JobReport> job = core::JobReportFromProto(in.job());
  if (!job.ok()) return job.status();
  out.job = *std::move(job);
  for (const v1::JobWindow& w : in.windows()) {
    absl::StatusOr<core::JobReport> r = core::JobReportFromProto(w.report());
    if (!r.ok()) return r.status();
    out.windows.push_back(
        {w.name(), OptionalTime(w.has_since(), w.since()), *std::move(r)});
  }
  for (const v1::TimelineEntry& e : in.timeline()) {
    out.timeline.push_back(TimelineEntryFromProto(e));
  }
  out.timeline_omitted = in.timeline_omitted();
  out.note = in.note();
  out.segment_interruptions_per_chip_second =
      in.segment_interruptions_per_chip_second();
  return out;
}

v1::FleetResponse FleetViewToProto(const core::FleetView& view) {
  v1::FleetResponse out;
  *out.mutable_as_of() = NanosToTimestamp(view.as_of_ns);
  if (view.since_ns) *out.mutable_since() = NanosToTimestamp(*view.since_ns);
  *out.mutable_fleet() = TotalsToProto(view.fleet);
  out.set_by(view.by);
  for (const auto& [value, totals] : view.segments) {
    (*out.mutable_segments())[value] = TotalsToProto(totals);
  }
  JobsToProto(view.worst_jobs, out.mutable_worst_jobs());
  return out;
}

absl::StatusOr<core::FleetView> FleetViewFromProto(
    const v1::FleetResponse& in) {
  core::FleetView out;
  out.as_of_ns = TimestampToNanos(in.as_of());
  out.since_ns = OptionalTime(in.has_since(), in.since());
  absl::StatusOr<core::Totals> fleet = TotalsFromProto(in.fleet());
  if (!fleet.ok()) return fleet.status();
  out.fleet = *fleet;
  out.by = in.by();
  for (const auto& [value, totals] : in.segments()) {
    absl::StatusOr<core::Totals> t = TotalsFromProto(totals);
    if (!t.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("segments['", value, "']: ", t.status().message()));
    }
    out.segments[value] = *t;
  }
  absl::Status s = JobsFromProto(in.worst_jobs(), &out.worst_jobs);
  if (!s.ok()) return s;
  return out;
}

v1::Ratios RatiosToProto(const core::TotalsRatios& ratios) {
  v1::Ratios out;
  const core::Ratios& r = ratios.ratios;
  SetOptional(r.goodput, &v1::Ratios::set_goodput, &out);
  SetOptional(r.sg, &v1::Ratios::set_sg, &out);
  SetOptional(r.rg, &v1::Ratios::set_rg, &out);
  SetOptional(r.pg, &v1::Ratios::set_pg, &out);
  SetOptional(r.mpg, &v1::Ratios::set_mpg, &out);
  SetOptional(ratios.sg_capacity, &v1::Ratios::set_sg_capacity, &out);
  SetOptional(ratios.mpg_capacity, &v1::Ratios::set_mpg_capacity, &out);
  return out;
}

void SummarizeTotals(const core::Totals& totals, v1::SummaryResponse* out) {
  *out->mutable_fleet() = TotalsToProto(totals);
  *out->mutable_ratios() = RatiosToProto(core::ComputeRatios(totals));
  for (const auto& [category, chip_seconds] :
       core::BadputByCategory(totals.chip_seconds)) {
    v1::CategoryAmount* a = out->add_badput();
    a->set_category(core::CategoryName(category));
    a->set_chip_seconds(chip_seconds);
  }
}

namespace {

// Query.Summary's jobs by state of `jobs` into `*out`: every state, zeros
// included. Counted by kind, then named: no map lookup per job.
void CountStates(const std::vector<core::JobReport>& jobs,
                 google::protobuf::Map<std::string, int64_t>* out) {
  constexpr core::JobStateKind kStates[] = {
      core::JobStateKind::kQueued, core::JobStateKind::kRunning,
      core::JobStateKind::kRecovering, core::JobStateKind::kEnded};
  static_assert(static_cast<size_t>(core::JobStateKind::kEnded) + 1 ==
                std::size(kStates));
  int64_t count[std::size(kStates)] = {};
  for (const core::JobReport& job : jobs) {
    ++count[static_cast<size_t>(job.state)];
  }
  for (core::JobStateKind s : kStates) {
    (*out)[core::JobStateName(s)] = count[static_cast<size_t>(s)];
  }
}

}  // namespace

v1::SummaryResponse SummaryFromReport(const core::FleetReport& report,
                                      size_t worst) {
  v1::SummaryResponse out;
  *out.mutable_as_of() = NanosToTimestamp(report.as_of_ns);
  SummarizeTotals(report.fleet, &out);
  CountStates(report.jobs, out.mutable_jobs_by_state());
  core::JobFilter filter;
  filter.limit = worst;
  JobsToProto(core::RankJobs(core::Config(), report, filter).jobs,
              out.mutable_worst_jobs());
  return out;
}

}  // namespace goodput::report
