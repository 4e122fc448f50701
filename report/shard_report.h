// The machine form of one shard's report (v1::ShardReport) and the merge
// of several shards' into one core::FleetReport. goodputd writes the form
// (Query.Report with shard_data); goodputctl merges: it concatenates the
// jobs (disjoint: each job lives on the shard of its job_id), takes the
// capacity once (every shard has every heartbeat) and aggregates with
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

// One shard's answer and the address it came from (for errors).
struct ShardAnswer {
  std::string address;
  v1::ShardReport report;
};

// The report of all `shards` as of `as_of_ns` over [since_ns, as_of_ns]:
// FailedPrecondition naming the job and both shards if a job is on two
// (agents disagree on the shard list); InvalidArgument for a malformed
// shard job. Capacity comes from the first shard.
absl::StatusOr<core::FleetReport> MergeShardReports(
    const std::vector<ShardAnswer>& shards, int64_t as_of_ns,
    std::optional<int64_t> since_ns);

// The filter of a Query.Jobs request (goodputd's and goodputctl's over a
// shard list): InvalidArgument naming a bad state, then a bad dimension.
absl::StatusOr<core::JobFilter> JobFilterFromRequest(
    const v1::JobsRequest& request);

}  // namespace goodput::report

#endif  // GOODPUT_REPORT_SHARD_REPORT_H_
