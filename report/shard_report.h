// The machine form of one shard's report (v1::ShardReport) and the merge
// of several shards' into one core::FleetReport, and the merges of the
// drill-down views of several shards. goodputd writes the form (streamed
// by Query.Report); goodputctl merges, also the answers of a single server
// (a shard list of one): it concatenates the
// jobs (disjoint: each job lives on the shard of its job_id), sums the
// capacity (disjoint: each host's heartbeats live on its capacity shard),
// or takes it once from cluster instances (each applies every heartbeat),
// and aggregates with
// core::BuildFleetReport, the function replay and goodputd use, so the
// merged report equals the report of one server holding every event.
// Stateless, thread-safe functions.
#ifndef GOODPUT_REPORT_SHARD_REPORT_H_
#define GOODPUT_REPORT_SHARD_REPORT_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/drilldown.h"
#include "core/report.h"
#include "proto/service.pb.h"

namespace goodput::report {

// `report`'s jobs and capacity (the accelerator segments' capacity).
v1::ShardReport ToShardReport(const core::FleetReport& report);
// ToShardReport's capacity alone, into `*out`.
void CapacityToProto(const core::FleetReport& report,
                     google::protobuf::Map<std::string, double>* out);

// How the shards' capacities combine: added up (each covers its own hosts)
// or taken once (each covers every host).
enum class CapacityMerge { kSum, kOnce };

// The merge of the capacities of a list of shards (`addresses`, in list
// order) from what each says it covers (`capacity_hosts`, ShardReport's):
// kSum when entry I of N entries says "I/N" (goodputd --shard=I/N) or the
// list has one entry; kOnce when every entry says "all" (cluster mode);
// else FailedPrecondition naming the first entry that does not fit and
// the flag that fixes it, since a sum or a max would then be wrong.
absl::StatusOr<CapacityMerge> CapacityMergeOf(
    const std::vector<std::string>& addresses,
    const std::vector<std::string>& capacity_hosts);

// One shard's answer and the address it came from (for errors).
struct ShardAnswer {
  std::string address;
  v1::ShardReport report;
};

// The report of all `shards` as of `as_of_ns` over [since_ns, as_of_ns]:
// FailedPrecondition naming the job and both shards if a job is on two
// (agents disagree on the shard list); InvalidArgument for a malformed
// shard job; CapacityMergeOf's error. Capacity: CapacityMergeOf's merge.
absl::StatusOr<core::FleetReport> MergeShardReports(
    const std::vector<ShardAnswer>& shards, int64_t as_of_ns,
    std::optional<int64_t> since_ns);

// The `jobs` view of all shards from each shard's view under the same
// `filter`: the jobs merged in the filter's order, cut to its limit, and
// the matched counts summed. A shard's list already holds its first
// `limit` jobs, so the merge equals the view of one server. As-of and
// since are the first view's. An empty list gives an empty view.
core::JobsView MergeJobsViews(const std::vector<core::JobsView>& shards,
                              const core::JobFilter& filter);

// The `fleet` view of all shards from each shard's view of the same
// dimension: totals summed per set (capacity merged as `capacity`), the
// `worst` jobs of all. Equal to one server's up to floating-point rounding
// of the sums.
core::FleetView MergeFleetViews(const std::vector<core::FleetView>& shards,
                                size_t worst, CapacityMerge capacity);

// The summary of all shards: totals summed (then ratios and badput from
// the sums), jobs by state summed, the `worst` (0 = 10) jobs of all, the
// ingest counters summed but `agents` and `last_agent_seen`, the largest
// of any shard (an agent may send to every shard), the capacity merged as
// `capacity`. One summary is kept as it is. InvalidArgument for a
// malformed one.
absl::StatusOr<v1::SummaryResponse> MergeSummaries(
    const std::vector<v1::SummaryResponse>& shards, size_t worst,
    CapacityMerge capacity);

// Adds `from`'s sums and counts to `to`; the capacity is added (kSum) or
// taken from `from` if `to` has none (kOnce).
void AddTotals(const core::Totals& from, core::Totals* to,
               CapacityMerge capacity);

// The filter of a Query.Jobs request (goodputd's and goodputctl's over a
// shard list): InvalidArgument naming a bad state, a bad dimension, then a
// bad sort.
absl::StatusOr<core::JobFilter> JobFilterFromRequest(
    const v1::JobsRequest& request);

}  // namespace goodput::report

#endif  // GOODPUT_REPORT_SHARD_REPORT_H_
