#ifndef GOODPUT_CLI_TOP_METRICS_H_
#define GOODPUT_CLI_TOP_METRICS_H_

#include <map>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace goodput::cli {

// The ingest counters `goodputctl top` shows, read from goodputd's
// Prometheus text (docs/metrics.md): "events accepted" and "events
// rejected" (goodput_ingest_events_total by result), "batches duplicate"
// and "agents" (series of goodput_agent_last_seen_timestamp_seconds).
// Counters the text lacks are left out. Stateless, thread-safe.
std::map<std::string, double> IngestCounters(absl::string_view text);

// GET of an http://HOST:PORT/PATH URL (HTTP/1.0, plain TCP), giving up
// after `timeout_ms`; the body of a 200 answer, else an error naming the
// URL. Thread-safe.
absl::StatusOr<std::string> HttpGet(const std::string& url, int timeout_ms);

}  // namespace goodput::cli

#endif  // GOODPUT_CLI_TOP_METRICS_H_
