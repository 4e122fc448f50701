#ifndef GOODPUT_SERVER_METRICS_SOURCE_H_
#define GOODPUT_SERVER_METRICS_SOURCE_H_

#include <vector>

#include "absl/synchronization/mutex.h"
#include "core/config.h"
#include "core/fleet_metrics.h"
#include "core/metric_family.h"
#include "server/ingest_limits.h"
#include "server/ingestor.h"
#include "server/token_auth.h"
#include "util/clock.h"

namespace goodput::server {

// Everything goodputd exports (docs/metrics.md), as plain families: on each
// Collect it takes the live state's recognized time into core::FleetMetrics
// under the ingest lock (one pass over the jobs; the ingest path itself
// does no metrics work), then adds ingest health, limit and auth refusals.
// Does not own the ingestor, clock, limits or tokens (either may be null),
// which must outlive it; `config` too. Thread-safe.
class MetricsSource {
 public:
  MetricsSource(const core::Config* config, core::MetricsOptions options,
                Ingestor* ingestor, Clock* clock,
                const IngestLimits* limits = nullptr,
                const TokenAuth* tokens = nullptr);

  std::vector<core::MetricFamilyData> Collect();

 private:
  Ingestor* ingestor_;
  Clock* clock_;
  const IngestLimits* limits_;
  const TokenAuth* tokens_;
  absl::Mutex mu_;
  core::FleetMetrics fleet_ ABSL_GUARDED_BY(mu_);
};

}  // namespace goodput::server

#endif  // GOODPUT_SERVER_METRICS_SOURCE_H_
