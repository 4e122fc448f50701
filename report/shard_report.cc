#include "report/shard_report.h"

#include <algorithm>
#include <map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "core/category.h"
#include "core/config.h"
#include "core/drilldown.h"
#include "core/fleet_report.h"
#include "core/job_report_proto.h"

namespace goodput::report {

v1::ShardReport ToShardReport(const core::FleetReport& report) {
  v1::ShardReport out;
  for (const core::JobReport& job : report.jobs)
    *out.add_jobs() = core::JobReportToProto(job);
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
    for (const v1::JobReport& in : shard.report.jobs()) {
      auto [it, added] = owner.emplace(in.job_id(), &shard.address);
      if (!added) {
        return absl::FailedPreconditionError(absl::StrCat(
            "job '", in.job_id(), "' is on two shards, ", *it->second, " and ",
            shard.address, ": do all agents have the same --server list?"));
      }
      absl::StatusOr<core::JobReport> job = core::JobReportFromProto(in);
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
