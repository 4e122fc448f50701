// The goodputctl side of sharding (docs/scaling.md): with a --server list
// of several goodputd shards, `report`, `jobs`, `fleet` and `top` ask every
// shard for its ShardReport (Query.Report with shard_data), as of one
// instant, and merge them (cli/shard_report.h) into the report one server
// holding every event would give; `job ID` asks the shard that owns the
// job. Stateless functions; each call opens its own channels.
#ifndef GOODPUT_CLI_SHARD_QUERY_H_
#define GOODPUT_CLI_SHARD_QUERY_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "cli/command.h"
#include "cli/tls_flags.h"
#include "core/report.h"
#include "proto/service.pb.h"
#include "util/shard_map.h"

namespace goodput::cli {

// The shard list of --server when it has more than one entry; nullopt for
// one entry (the plain single-server path); an error for a bad list.
absl::StatusOr<std::optional<ShardMap>> ShardList(
    const CommandContext& context);

// Every shard's report as of `as_of_ns` (required: one instant for all),
// since `since_ns`, merged. An unreachable shard fails the whole call,
// naming it: a report without one shard's jobs would be wrong, not partial.
absl::StatusOr<core::FleetReport> FetchMergedReport(
    const ShardMap& shards, const TlsFlagValues& tls, int64_t as_of_ns,
    std::optional<int64_t> since_ns);

// The merged report for a request's as_of (default: now) and since.
absl::StatusOr<core::FleetReport> FetchMergedReport(
    const ShardMap& shards, const TlsFlagValues& tls,
    const v1::ReportRequest& request);

// Prints the merged report of `request` (its table, or JSON with `json`).
int PrintMergedReport(const ShardMap& shards, const v1::ReportRequest& request,
                      bool json, const std::string& prefix,
                      CommandContext& context);

// Prints `jobs` over the merged report.
int PrintMergedJobs(const ShardMap& shards, const v1::JobsRequest& request,
                    bool json, const std::string& prefix,
                    CommandContext& context);

// Prints `fleet` over the merged report.
int PrintMergedFleet(const ShardMap& shards, const v1::FleetRequest& request,
                     bool json, const std::string& prefix,
                     CommandContext& context);

}  // namespace goodput::cli

#endif  // GOODPUT_CLI_SHARD_QUERY_H_
