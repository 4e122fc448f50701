#ifndef GOODPUT_SERVER_METRICS_EXPORTER_H_
#define GOODPUT_SERVER_METRICS_EXPORTER_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/metric_family.h"
#include "util/basic_auth.h"
#include "util/http_server.h"
#include "util/logger.h"

namespace goodput::server {

// goodputd's HTTP endpoint on --metrics_address (util/http_server.h, port 0
// picks one): GET /metrics calls `collect` and renders its plain families in
// the Prometheus text format (util/prometheus_text.h; its errors become a
// 500 and a log line), or
// answers 503 with the status's message when `collect` fails (e.g. still
// recovering); GET /healthz and /readyz call `probe`. With `auth`, /metrics
// needs HTTP basic auth (a scrape without a listed user and password gets
// 401 and no metrics); the probes never do, so a kubelet can ask. Owns the
// HTTP server and shares `auth`; `collect` and `probe` must stay callable
// until this is destroyed. Thread-safe (requests run on the server's
// thread).
class MetricsExporter {
 public:
  using CollectFn =
      std::function<absl::StatusOr<std::vector<core::MetricFamilyData>>()>;
  // Answers GET /healthz or /readyz (`path`).
  using ProbeFn = std::function<HttpResponse(absl::string_view path)>;

  // A null `probe` answers the probe paths 404.
  static absl::StatusOr<std::unique_ptr<MetricsExporter>> Start(
      const std::string& address, CollectFn collect,
      std::shared_ptr<const BasicAuth> auth = nullptr, ProbeFn probe = nullptr,
      Logger log = Logger("goodputd"));

  int port() const { return http_->port(); }

 private:
  MetricsExporter(CollectFn collect, ProbeFn probe, Logger log)
      : collect_(std::move(collect)),
        probe_(std::move(probe)),
        log_(std::move(log)) {}
  HttpResponse Handle(absl::string_view method, absl::string_view path) const;
  HttpResponse Metrics() const;

  const CollectFn collect_;
  const ProbeFn probe_;
  const Logger log_;
  std::unique_ptr<HttpServer> http_;  // last: stops before the rest goes
};

}  // namespace goodput::server

#endif  // GOODPUT_SERVER_METRICS_EXPORTER_H_
