#include "report/shard_report.h"

#include <algorithm>
#include <map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "core/category.h"
#include "core/checkpoint_advice.h"
#include "core/config.h"
#include "core/drilldown.h"
#include "core/fleet_report.h"
#include "core/job_report_proto.h"
#include "report/query_proto.h"

namespace goodput::report {

v1::ShardReport ToShardReport(const core::FleetReport& report) {
  v1::ShardReport out;
  for (const core::JobReport& job : report.jobs)
    core::JobReportToProto(job, out.add_jobs());
  CapacityToProto(report, out.mutable_capacity_chip_seconds());
  return out;
}

void CapacityToProto(const core::FleetReport& report,
                     google::protobuf::Map<std::string, double>* out) {
  auto it = report.segments.find("accelerator");
  if (it == report.segments.end()) return;
  for (const auto& [accelerator, totals] : it->second) {
    if (totals.capacity_chip_seconds) {
      (*out)[accelerator] = *totals.capacity_chip_seconds;
    }
  }
}

absl::StatusOr<CapacityMerge> CapacityMergeOf(
    const std::vector<std::string>& addresses,
    const std::vector<std::string>& capacity_hosts) {
  const size_t n = addresses.size();
  if (n <= 1) return CapacityMerge::kSum;
  if (std::all_of(capacity_hosts.begin(), capacity_hosts.end(),
                  [](const std::string& h) { return h == "all"; })) {
    return CapacityMerge::kOnce;
  }
  for (size_t i = 0; i < n; ++i) {
    const std::string want = absl::StrCat(i, "/", n);
    if (capacity_hosts[i] == want) continue;
    return absl::FailedPreconditionError(absl::StrCat(
        addresses[i], " (entry ", i + 1, " of the ", n,
        "-shard list) keeps the heartbeats of hosts \"", capacity_hosts[i],
        "\", not of shard ", want,
        ": start each shard with --shard=I/N, I its entry (from 0) and N "
        "the list's length (docs/scaling.md)"));
  }
  return CapacityMerge::kSum;
}

namespace {

// The shards' capacities merged as `how`.
std::map<std::string, double> MergeCapacity(
    const std::vector<ShardAnswer>& shards, CapacityMerge how) {
  std::map<std::string, double> capacity;
  for (const ShardAnswer& shard : shards) {
    for (const auto& [accelerator, v] : shard.report.capacity_chip_seconds()) {
      capacity[accelerator] += v;
    }
    if (how == CapacityMerge::kOnce) break;
  }
  return capacity;
}

}  // namespace

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
  std::vector<std::string> addresses, hosts;
  for (const ShardAnswer& shard : shards) {
    addresses.push_back(shard.address);
    hosts.push_back(shard.report.capacity_hosts());
  }
  absl::StatusOr<CapacityMerge> how = CapacityMergeOf(addresses, hosts);
  if (!how.ok()) return how.status();
  core::Config config;
  if (since_ns) config.since_ns = *since_ns;
  return core::BuildFleetReport(config, as_of_ns, std::move(jobs),
                                MergeCapacity(shards, *how));
}

core::JobsView MergeJobsViews(const std::vector<core::JobsView>& shards,
                              const core::JobFilter& filter) {
  core::JobsView out;
  if (shards.empty()) return out;
  out.as_of_ns = shards[0].as_of_ns;
  out.since_ns = shards[0].since_ns;
  std::vector<const core::JobReport*> jobs;
  for (const core::JobsView& shard : shards) {
    out.matched += shard.matched;
    for (const core::JobReport& job : shard.jobs) jobs.push_back(&job);
  }
  out.jobs = core::TopJobs(filter.sort, std::move(jobs), filter.limit);
  return out;
}

void AddTotals(const core::Totals& from, core::Totals* to,
               CapacityMerge capacity) {
  for (int i = 0; i < core::kNumCategories; ++i) {
    to->chip_seconds[i] += from.chip_seconds[i];
    to->cost_usd[i] += from.cost_usd[i];
    to->energy_kwh[i] += from.energy_kwh[i];
  }
  to->unpriced_chip_seconds += from.unpriced_chip_seconds;
  to->unpowered_chip_seconds += from.unpowered_chip_seconds;
  to->total_chip_seconds += from.total_chip_seconds;
  to->ideal_chip_seconds += from.ideal_chip_seconds;
  to->costed_productive_chip_seconds += from.costed_productive_chip_seconds;
  if (capacity == CapacityMerge::kSum && from.capacity_chip_seconds) {
    to->capacity_chip_seconds =
        to->capacity_chip_seconds.value_or(0) + *from.capacity_chip_seconds;
  } else if (!to->capacity_chip_seconds) {
    to->capacity_chip_seconds = from.capacity_chip_seconds;
  }
  to->jobs += from.jobs;
  to->jobs_without_chips += from.jobs_without_chips;
  core::AddCheckpointSums(from.checkpoint, &to->checkpoint);
}

core::FleetView MergeFleetViews(const std::vector<core::FleetView>& shards,
                                size_t worst, CapacityMerge capacity) {
  if (shards.size() == 1) return shards[0];
  core::FleetView out;
  if (shards.empty()) return out;
  out.as_of_ns = shards[0].as_of_ns;
  out.since_ns = shards[0].since_ns;
  out.by = shards[0].by;
  std::vector<const core::JobReport*> jobs;
  for (const core::FleetView& shard : shards) {
    AddTotals(shard.fleet, &out.fleet, capacity);
    for (const auto& [value, totals] : shard.segments) {
      AddTotals(totals, &out.segments[value], capacity);
    }
    for (const core::JobReport& job : shard.worst_jobs) jobs.push_back(&job);
  }
  if (worst > 0)
    out.worst_jobs = core::TopJobs(core::JobSort::kLost, jobs, worst);
  return out;
}

namespace {

// Sums the counters of `from` into `to`; agents and last seen: the largest.
void AddCounters(const v1::IngestCounters& from, v1::IngestCounters* to) {
  to->set_batches(to->batches() + from.batches());
  to->set_duplicate_batches(to->duplicate_batches() + from.duplicate_batches());
  to->set_accepted_events(to->accepted_events() + from.accepted_events());
  to->set_rejected_events(to->rejected_events() + from.rejected_events());
  to->set_failed_batches(to->failed_batches() + from.failed_batches());
  to->set_agents(std::max(to->agents(), from.agents()));
  if (from.has_last_agent_seen() &&
      (!to->has_last_agent_seen() ||
       to->last_agent_seen().seconds() < from.last_agent_seen().seconds())) {
    *to->mutable_last_agent_seen() = from.last_agent_seen();
  }
}

// The worst jobs of every summary, the `worst` most lost first.
absl::Status MergeWorst(const std::vector<v1::SummaryResponse>& shards,
                        size_t worst, v1::SummaryResponse* out) {
  std::vector<core::JobReport> jobs;
  for (const v1::SummaryResponse& shard : shards) {
    for (const v1::JobReport& in : shard.worst_jobs()) {
      absl::StatusOr<core::JobReport> job = core::JobReportFromProto(in);
      if (!job.ok()) return job.status();
      jobs.push_back(*std::move(job));
    }
  }
  std::vector<const core::JobReport*> all;
  for (const core::JobReport& job : jobs) all.push_back(&job);
  for (const core::JobReport& job :
       core::TopJobs(core::JobSort::kLost, std::move(all), worst)) {
    core::JobReportToProto(job, out->add_worst_jobs());
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<v1::SummaryResponse> MergeSummaries(
    const std::vector<v1::SummaryResponse>& shards, size_t worst,
    CapacityMerge capacity) {
  if (shards.size() == 1) return shards[0];
  core::Totals sums;
  v1::SummaryResponse out;
  if (!shards.empty()) *out.mutable_as_of() = shards[0].as_of();
  for (const v1::SummaryResponse& shard : shards) {
    absl::StatusOr<core::Totals> totals = TotalsFromProto(shard.fleet());
    if (!totals.ok()) return totals.status();
    AddTotals(*totals, &sums, capacity);
    for (const auto& [state, n] : shard.jobs_by_state()) {
      (*out.mutable_jobs_by_state())[state] += n;
    }
    AddCounters(shard.ingest(), out.mutable_ingest());
  }
  SummarizeTotals(sums, &out);
  absl::Status s = MergeWorst(shards, worst == 0 ? 10 : worst, &out);
  if (!s.ok()) return s;
  return out;
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
  absl::StatusOr<core::JobSort> sort = core::ParseJobSort(request.sort());
  if (!sort.ok()) return sort.status();
  filter.sort = *sort;
  return filter;
}

}  // namespace goodput::report
