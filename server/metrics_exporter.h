#ifndef GOODPUT_SERVER_METRICS_EXPORTER_H_
#define GOODPUT_SERVER_METRICS_EXPORTER_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/metric_family.h"
#include "util/basic_auth.h"

namespace prometheus {
class Exposer;
class Collectable;
}  // namespace prometheus

namespace goodput::server {

// The Prometheus pull endpoint (prometheus-cpp): serves /metrics on
// `address` (port 0 picks one) and, on every scrape, calls `collect` and
// translates its plain families into prometheus-cpp's. The one adapter to
// prometheus-cpp: its exceptions are caught here and become a Status (at
// Start) or an empty scrape plus a log line (at Collect). With `auth`,
// /metrics needs HTTP basic auth (prometheus-cpp's RegisterAuth): a scrape
// without a listed user and password gets 401 and no metrics. Owns the HTTP
// server and shares `auth`; `collect` must stay callable until this is
// destroyed. Thread-safe (scrapes run on civetweb's threads).
class MetricsExporter {
 public:
  using CollectFn = std::function<std::vector<core::MetricFamilyData>()>;

  static absl::StatusOr<std::unique_ptr<MetricsExporter>> Start(
      const std::string& address, CollectFn collect,
      std::shared_ptr<const BasicAuth> auth = nullptr);
  ~MetricsExporter();

  int port() const { return port_; }

 private:
  MetricsExporter() = default;

  std::unique_ptr<prometheus::Exposer> exposer_;
  std::shared_ptr<prometheus::Collectable> collectable_;
  int port_ = 0;
};

}  // namespace goodput::server

#endif  // GOODPUT_SERVER_METRICS_EXPORTER_H_
