#ifndef GOODPUT_CLI_TOP_VIEW_H_
#define GOODPUT_CLI_TOP_VIEW_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "proto/service.pb.h"

namespace goodput::cli {

// What `goodputctl top` shows besides the summary. Plain data.
struct TopContext {
  std::string server;       // goodputd's gRPC address
  std::string metrics_url;  // printed for Prometheus / curl
  int64_t interval_ns = 2'000'000'000;
  size_t worst_jobs = 10;  // rows in the worst-jobs table
  // Ingest counters (e.g. "events accepted"), in order; nullopt when the
  // server did not give them.
  std::optional<std::map<std::string, double>> counters;
};

// The ingest counters `top` shows, by name, from Query.Summary's: "agents",
// "batches duplicate", "events accepted", "events rejected".
std::map<std::string, double> IngestCounters(const v1::IngestCounters& in);

// Renders one screen of `goodputctl top` from a Query.Summary answer: a
// title with the server, as-of and metrics URL; the fleet's MPG/SG/RG/PG
// and goodput (and capacity SG/MPG when known), jobs by state; the badput
// breakdown (chip-hours and share of all chip-hours, largest first); the
// worst jobs by badput (lost included) chip-hours; and the ingest
// counters. An error names a malformed job or totals. Stateless,
// thread-safe.
absl::StatusOr<std::string> RenderTop(const v1::SummaryResponse& summary,
                                      const TopContext& context);

}  // namespace goodput::cli

#endif  // GOODPUT_CLI_TOP_VIEW_H_
