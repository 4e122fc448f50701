#ifndef GOODPUT_CLI_TOP_VIEW_H_
#define GOODPUT_CLI_TOP_VIEW_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "absl/status/statusor.h"

namespace goodput::cli {

// What `goodputctl top` shows besides the report. Plain data.
struct TopContext {
  std::string server;       // goodputd's gRPC address
  std::string metrics_url;  // printed for Prometheus / curl
  int64_t interval_ns = 2'000'000'000;
  size_t worst_jobs = 10;  // rows in the worst-jobs table
  // Counters scraped from metrics_url (e.g. "events accepted"), in order;
  // nullopt when it could not be read.
  std::optional<std::map<std::string, double>> counters;
};

// Renders one screen of `goodputctl top` from a report object (SPEC
// section 4 JSON, as the Query.Report RPC returns it): a title with the
// server, as-of and metrics URL; the fleet's MPG/SG/RG/PG and goodput
// (and capacity SG/MPG when known), jobs by state; the badput breakdown
// (chip-hours and share of all chip-hours, largest first); the worst jobs
// by badput (lost included) chip-hours; and the ingest counters. Errors
// name what is missing from the JSON. Stateless, thread-safe.
absl::StatusOr<std::string> RenderTop(const std::string& report_json,
                                      const TopContext& context);

}  // namespace goodput::cli

#endif  // GOODPUT_CLI_TOP_VIEW_H_
