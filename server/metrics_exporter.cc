#include "server/metrics_exporter.h"

#include <exception>
#include <limits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "prometheus/metric_family.h"
#include "prometheus/text_serializer.h"

namespace goodput::server {
namespace {

prometheus::MetricType TypeOf(core::MetricKind kind) {
  switch (kind) {
    case core::MetricKind::kCounter:
      return prometheus::MetricType::Counter;
    case core::MetricKind::kHistogram:
      return prometheus::MetricType::Histogram;
    default:
      return prometheus::MetricType::Gauge;
  }
}

prometheus::ClientMetric Translate(const core::MetricFamilyData& f,
                                   const core::MetricSample& s) {
  prometheus::ClientMetric m;
  for (const auto& [name, value] : s.labels) m.label.push_back({name, value});
  m.counter.value = s.value;
  m.gauge.value = s.value;
  m.histogram.sample_count = s.count;
  m.histogram.sample_sum = s.sum;
  for (size_t i = 0; i < f.bounds.size() && i < s.cumulative.size(); ++i) {
    m.histogram.bucket.push_back({s.cumulative[i], f.bounds[i]});
  }
  if (f.kind == core::MetricKind::kHistogram) {
    m.histogram.bucket.push_back(
        {s.count, std::numeric_limits<double>::infinity()});
  }
  return m;
}

// Families with no samples are left out of the scrape.
std::vector<prometheus::MetricFamily> Translate(
    const std::vector<core::MetricFamilyData>& families) {
  std::vector<prometheus::MetricFamily> out;
  out.reserve(families.size());
  for (const core::MetricFamilyData& f : families) {
    if (f.samples.empty()) continue;
    prometheus::MetricFamily& p = out.emplace_back();
    p.name = f.name;
    p.help = f.help;
    p.type = TypeOf(f.kind);
    p.metric.reserve(f.samples.size());
    for (const core::MetricSample& s : f.samples) {
      p.metric.push_back(Translate(f, s));
    }
  }
  return out;
}

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
  try {
    absl::StatusOr<std::vector<core::MetricFamilyData>> families = collect_();
    if (!families.ok()) {
      return {503, kText, absl::StrCat(families.status().message(), "\n")};
    }
    return {200, "text/plain; version=0.0.4; charset=utf-8",
            prometheus::TextSerializer().Serialize(Translate(*families))};
  } catch (const std::exception& e) {
    log_.Error(absl::StrCat("metrics scrape failed: ", e.what()));
    return {500, kText, "metrics scrape failed\n"};
  }
}

}  // namespace goodput::server
