#include "server/metrics_exporter.h"

#include <exception>
#include <iostream>
#include <limits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "prometheus/collectable.h"
#include "prometheus/exposer.h"
#include "prometheus/metric_family.h"

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

class Collector : public prometheus::Collectable {
 public:
  explicit Collector(MetricsExporter::CollectFn collect)
      : collect_(std::move(collect)) {}

  std::vector<prometheus::MetricFamily> Collect() const override {
    try {
      return Translate(collect_());
    } catch (const std::exception& e) {
      std::cerr << "goodputd: metrics scrape failed: " << e.what() << "\n";
      return {};
    }
  }

 private:
  MetricsExporter::CollectFn collect_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<MetricsExporter>> MetricsExporter::Start(
    const std::string& address, CollectFn collect,
    std::shared_ptr<const BasicAuth> auth) {
  std::unique_ptr<MetricsExporter> e(new MetricsExporter());
  e->collectable_ = std::make_shared<Collector>(std::move(collect));
  try {
    e->exposer_ = std::make_unique<prometheus::Exposer>(address);
    if (auth != nullptr) {  // before the metrics: none is served without it
      e->exposer_->RegisterAuth(
          [auth](const std::string& user, const std::string& password) {
            return auth->Check(user, password);
          },
          "goodputd");
    }
    e->exposer_->RegisterCollectable(e->collectable_);
    const std::vector<int> ports = e->exposer_->GetListeningPorts();
    e->port_ = ports.empty() ? 0 : ports.front();
  } catch (const std::exception& ex) {
    return absl::UnavailableError(
        absl::StrCat("--metrics_address: cannot serve metrics on ", address,
                     ": ", ex.what()));
  }
  return e;
}

MetricsExporter::~MetricsExporter() {
  // Stop serving before the collector goes away.
  if (exposer_) exposer_->RemoveCollectable(collectable_);
  exposer_.reset();
}

}  // namespace goodput::server
