#include "server/metrics_exporter.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "util/prometheus_text.h"

namespace goodput::server {
namespace {

constexpr char kText[] = "text/plain; charset=utf-8";

}  // namespace

absl::StatusOr<std::unique_ptr<MetricsExporter>> MetricsExporter::Start(
    const std::string& address, CollectFn collect,
    std::shared_ptr<const BasicAuth> auth, ProbeFn probe, Logger log) {
  std::unique_ptr<MetricsExporter> e(new MetricsExporter(
      std::move(collect), std::move(probe), std::move(log)));
  auto http = HttpServer::Start(
      address,
      [p = e.get()](absl::string_view method, absl::string_view path) {
        return p->Handle(method, path);
      },
      std::move(auth), {"/healthz", "/readyz"});
  if (!http.ok()) {
    return absl::UnavailableError(
        absl::StrCat("--metrics_address: cannot serve metrics on ", address,
                     ": ", http.status().message()));
  }
  e->http_ = *std::move(http);
  return e;
}

HttpResponse MetricsExporter::Handle(absl::string_view method,
                                     absl::string_view path) const {
  if (method != "GET") return {405, kText, "only GET\n"};
  if (path == "/metrics") return Metrics();
  if ((path == "/healthz" || path == "/readyz") && probe_) return probe_(path);
  return {404, kText, "not found: try /metrics, /healthz or /readyz\n"};
}

HttpResponse MetricsExporter::Metrics() const {
  absl::StatusOr<std::vector<core::MetricFamilyData>> families = collect_();
  if (!families.ok()) {
    return {503, kText, absl::StrCat(families.status().message(), "\n")};
  }
  absl::StatusOr<std::string> text = PrometheusText(*families);
  if (!text.ok()) {
    log_.Error(
        absl::StrCat("metrics scrape failed: ", text.status().message()));
    return {500, kText, "metrics scrape failed\n"};
  }
  return {200, kPrometheusTextType, *std::move(text)};
}

}  // namespace goodput::server
