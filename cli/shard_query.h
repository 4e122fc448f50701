// The query side of goodputctl (docs/scaling.md): one path for one server
// and for a --server list of goodputd shards. A single server is a shard
// list of one. `report`, `jobs`, `fleet` and `top` ask every shard, as of
// one instant, for its answer in machine form (proto/service.proto) and
// merge the answers (report/shard_report.h); `job ID` asks the shard that
// owns the job. The answers are rendered here, with report/'s writers.
// With several servers, each is asked for its own part only (metadata
// goodput-scope: local): a goodputd in cluster mode would otherwise answer
// for the whole fleet (docs/api.md, "Cluster mode"), and the merge would
// count every job once per server.
// Stateless functions; each call opens its own channels.
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

// The shards of --server: the list when it has a comma (an error names a
// bad entry), else a list of the one server as given.
absl::StatusOr<ShardMap> ShardList(const CommandContext& context);

// Every shard's report for `request`, merged. Without an as_of in the
// request, one server's clock decides; several shards are asked as of now
// (one instant for all). An unreachable shard fails the whole call,
// naming it: a report without one shard's jobs would be wrong, not partial.
absl::StatusOr<core::FleetReport> FetchMergedReport(const ShardMap& shards,
                                                    const TlsFlagValues& tls,
                                                    v1::ReportRequest request);

// Query.Summary of every shard, merged (report::MergeSummaries).
absl::StatusOr<v1::SummaryResponse> FetchSummary(const ShardMap& shards,
                                                 const TlsFlagValues& tls,
                                                 v1::SummaryRequest request);

// Each prints the merged answer of `request` (its table, or JSON with
// `json`) and returns the exit code; errors go to context.err after
// `prefix`, naming the shard that failed.
int PrintReport(const ShardMap& shards, const v1::ReportRequest& request,
                bool json, const std::string& prefix, CommandContext& context);
int PrintJobs(const ShardMap& shards, const v1::JobsRequest& request, bool json,
              const std::string& prefix, CommandContext& context);
int PrintJob(const ShardMap& shards, const v1::JobRequest& request, bool json,
             const std::string& prefix, CommandContext& context);
int PrintFleet(const ShardMap& shards, const v1::FleetRequest& request,
               bool json, const std::string& prefix, CommandContext& context);

}  // namespace goodput::cli

#endif  // GOODPUT_CLI_SHARD_QUERY_H_
