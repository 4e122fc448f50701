#include "report/shard_report.h"

#include <algorithm>
#include <map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "core/category.h"
#include "core/config.h"
#include "core/drilldown.h"
#include "core/fleet_report.h"

namespace goodput::report {
namespace {

void IdentityToProto(const core::JobReport& job, v1::ShardJob* out) {
  out->set_job_id(job.job_id);
  out->set_chips(job.chips);
  out->set_accelerator(job.accelerator);
  out->set_workload(job.workload);
  out->set_framework(job.framework);
  for (const auto& [key, value] : job.labels)
    (*out->mutable_labels())[key] = value;
  out->set_state(core::JobStateName(job.state));
}

void JobToProto(const core::JobReport& job, v1::ShardJob* out) {
  IdentityToProto(job, out);
  out->set_total_ns(job.total_ns);
  for (int64_t ns : job.nanos) out->add_category_ns(ns);
  for (const auto& [name, ns] : job.custom_nanos)
    (*out->mutable_custom_ns())[name] = ns;
  out->set_at_risk_ns(job.at_risk_ns);
  out->set_ideal_seconds(job.ideal_seconds);
  out->set_costed_productive_ns(job.costed_productive_ns);
  if (job.last_step) out->set_last_step(*job.last_step);
  if (job.last_checkpoint) out->set_last_checkpoint(*job.last_checkpoint);
  out->set_lost_steps(job.lost_steps);
  out->set_interruptions(job.interruptions);
  out->set_duplicates(job.duplicates);
  out->set_notices(job.notices);
}

absl::StatusOr<core::JobReport> JobFromProto(const v1::ShardJob& in) {
  absl::StatusOr<core::JobStateKind> state = core::ParseJobState(in.state());
  if (!state.ok()) return state.status();
  if (in.category_ns_size() != core::kNumCategories) {
    return absl::InvalidArgumentError(absl::StrCat(
        "job '", in.job_id(), "': category_ns: want ", core::kNumCategories,
        " values, got ", in.category_ns_size()));
  }
  core::JobReport job;
  job.job_id = in.job_id();
  job.chips = in.chips();
  job.accelerator = in.accelerator();
  job.workload = in.workload();
  job.framework = in.framework();
  job.labels.insert(in.labels().begin(), in.labels().end());
  job.state = *state;
  job.total_ns = in.total_ns();
  for (int c = 0; c < core::kNumCategories; ++c)
    job.nanos[c] = in.category_ns(c);
  job.custom_nanos.insert(in.custom_ns().begin(), in.custom_ns().end());
  job.at_risk_ns = in.at_risk_ns();
  job.ideal_seconds = in.ideal_seconds();
  job.costed_productive_ns = in.costed_productive_ns();
  if (in.has_last_step()) job.last_step = in.last_step();
  if (in.has_last_checkpoint()) job.last_checkpoint = in.last_checkpoint();
  job.lost_steps = in.lost_steps();
  job.interruptions = in.interruptions();
  job.duplicates = in.duplicates();
  job.notices = in.notices();
  return job;
}

}  // namespace

v1::ShardReport ToShardReport(const core::FleetReport& report) {
  v1::ShardReport out;
  for (const core::JobReport& job : report.jobs)
    JobToProto(job, out.add_jobs());
  auto it = report.segments.find("accelerator");
  if (it == report.segments.end()) return out;
  for (const auto& [accelerator, totals] : it->second) {
    if (totals.capacity_chip_seconds) {
      (*out.mutable_capacity_chip_seconds())[accelerator] =
          *totals.capacity_chip_seconds;
    }
  }
  return out;
}

absl::StatusOr<core::FleetReport> MergeShardReports(
    const std::vector<ShardAnswer>& shards, int64_t as_of_ns,
    std::optional<int64_t> since_ns) {
  std::vector<core::JobReport> jobs;
  std::map<std::string, const std::string*> owner;  // job_id -> address
  for (const ShardAnswer& shard : shards) {
    for (const v1::ShardJob& in : shard.report.jobs()) {
      auto [it, added] = owner.emplace(in.job_id(), &shard.address);
      if (!added) {
        return absl::FailedPreconditionError(absl::StrCat(
            "job '", in.job_id(), "' is on two shards, ", *it->second, " and ",
            shard.address, ": do all agents have the same --server list?"));
      }
      absl::StatusOr<core::JobReport> job = JobFromProto(in);
      if (!job.ok()) {
        return absl::InvalidArgumentError(
            absl::StrCat(shard.address, ": ", job.status().message()));
      }
      jobs.push_back(*std::move(job));
    }
  }
  std::map<std::string, double> capacity;
  if (!shards.empty()) {
    const auto& c = shards[0].report.capacity_chip_seconds();
    capacity.insert(c.begin(), c.end());
  }
  core::Config config;
  if (since_ns) config.since_ns = *since_ns;
  return core::BuildFleetReport(config, as_of_ns, std::move(jobs), capacity);
}

absl::StatusOr<core::JobFilter> JobFilterFromRequest(
    const v1::JobsRequest& request) {
  core::JobFilter filter;
  if (!request.state().empty()) {
    absl::StatusOr<core::JobStateKind> state =
        core::ParseJobState(request.state());
    if (!state.ok()) return state.status();
    filter.state = *state;
  }
  for (const auto& [dimension, value] : request.segments()) {
    if (absl::Status s = core::CheckDimension(dimension); !s.ok()) return s;
    filter.segments.emplace_back(dimension, value);
  }
  std::sort(filter.segments.begin(), filter.segments.end());
  filter.limit = request.limit();
  return filter;
}

}  // namespace goodput::report
