#include "server/ended_job_totals.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "core/job_report_proto.h"

namespace goodput::server {
namespace {

// Adds `sign` times the summed fields of `r` to `*sum`.
void Accumulate(const core::JobReport& r, int64_t sign, core::JobReport* sum) {
  for (size_t c = 0; c < r.nanos.size(); ++c)
    sum->nanos[c] += sign * r.nanos[c];
  for (const auto& [name, ns] : r.custom_nanos) {
    sum->custom_nanos[name] += sign * ns;
  }
  sum->total_ns += sign * r.total_ns;
  sum->at_risk_ns += sign * r.at_risk_ns;
  sum->ideal_seconds += static_cast<double>(sign) * r.ideal_seconds;
  sum->costed_productive_ns += sign * r.costed_productive_ns;
  sum->last_step = sum->last_step.value_or(0) +
                   sign * std::max<int64_t>(0, r.last_step.value_or(0));
  sum->lost_steps += sign * r.lost_steps;
  sum->interruptions += sign * r.interruptions;
  sum->duplicates += sign * r.duplicates;
  sum->notices += sign * r.notices;
  sum->checkpoints += sign * r.checkpoints;
  // Rule 14: an elastic group sums its jobs' allocation-weighted time.
  for (size_t c = 0; c < r.chip_seconds.size(); ++c) {
    sum->chip_seconds[c] += static_cast<double>(sign) * r.chip_seconds[c];
  }
  sum->costed_productive_chip_seconds +=
      static_cast<double>(sign) * r.costed_productive_chip_seconds;
}

// Length-prefixed, so that no two label sets share a key.
void AppendField(const std::string& s, std::string* key) {
  absl::StrAppend(key, s.size(), ":", s);
}

}  // namespace

std::string EndedJobTotals::KeyOf(const core::JobReport& r) {
  std::string key;
  AppendField(r.accelerator, &key);
  AppendField(absl::StrCat(static_cast<int>(r.workload)), &key);
  AppendField(r.framework, &key);
  AppendField(absl::StrCat(r.chips), &key);
  // Elastic jobs (rule 14) never share a group with fixed-size ones.
  AppendField(r.min_chips ? absl::StrCat(*r.min_chips) : "", &key);
  for (const auto& [name, value] : r.labels) {
    AppendField(name, &key);
    AppendField(value, &key);
  }
  return key;
}

EndedJobTotals::Group& EndedJobTotals::GroupOf(const core::JobReport& r,
                                               int64_t ended_ns) {
  auto [it, inserted] = groups_.try_emplace(KeyOf(r));
  Group& g = it->second;
  if (inserted) {
    g.totals.job_id = absl::StrCat("(", groups_.size(), " evicted)");
    g.totals.chips = r.chips;
    g.totals.min_chips = r.min_chips;
    g.totals.accelerator = r.accelerator;
    g.totals.workload = r.workload;
    g.totals.framework = r.framework;
    g.totals.labels = r.labels;
    g.totals.state = core::JobStateKind::kEnded;
  }
  g.newest_ended_ns = std::max(g.newest_ended_ns, ended_ns);
  return g;
}

void EndedJobTotals::Add(const core::JobReport& report, int64_t ended_ns) {
  Group& g = GroupOf(report, ended_ns);
  Accumulate(report, 1, &g.totals);
  ++g.jobs;
  ++jobs_;
}

void EndedJobTotals::Revise(const core::JobReport& old,
                            const core::JobReport& now, int64_t ended_ns) {
  Group& g = GroupOf(old, ended_ns);
  Accumulate(old, -1, &g.totals);
  Accumulate(now, 1, &g.totals);
}

void EndedJobTotals::ForEach(
    const std::function<void(const Group&)>& fn) const {
  for (const auto& [key, group] : groups_) fn(group);
}

internal::v1::StoredEvictedTotals EndedJobTotals::ToRecord(
    int64_t applied_through_ns) const {
  internal::v1::StoredEvictedTotals out;
  out.set_version(1);
  out.set_jobs(jobs_);
  out.set_applied_through_ns(applied_through_ns);
  for (const auto& [key, g] : groups_) {
    internal::v1::StoredEvictedTotals::Group* r = out.add_groups();
    *r->mutable_totals() = core::JobReportToProto(g.totals);
    r->set_jobs(g.jobs);
    r->set_newest_ended_ns(g.newest_ended_ns);
  }
  return out;
}

absl::StatusOr<EndedJobTotals> EndedJobTotals::FromRecord(
    const internal::v1::StoredEvictedTotals& record) {
  if (record.version() != 1) {
    return absl::DataLossError(absl::StrCat("evicted totals: version ",
                                            record.version(), " is not 1"));
  }
  EndedJobTotals out;
  out.jobs_ = record.jobs();
  for (const auto& r : record.groups()) {
    absl::StatusOr<core::JobReport> totals =
        core::JobReportFromProto(r.totals());
    if (!totals.ok()) {
      return absl::DataLossError(
          absl::StrCat("evicted totals: ", totals.status().message()));
    }
    Group& g = out.groups_[KeyOf(*totals)];
    g.totals = *std::move(totals);
    g.jobs = r.jobs();
    g.newest_ended_ns = r.newest_ended_ns();
  }
  return out;
}

}  // namespace goodput::server
