#include "util/prometheus_text.h"

#include <exception>
#include <limits>

#include "absl/strings/str_cat.h"
#include "prometheus/metric_family.h"
#include "prometheus/text_serializer.h"

namespace goodput {
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

}  // namespace

absl::StatusOr<std::string> PrometheusText(
    const std::vector<core::MetricFamilyData>& families) {
  try {
    return prometheus::TextSerializer().Serialize(Translate(families));
  } catch (const std::exception& e) {
    return absl::InternalError(absl::StrCat(
        "prometheus-cpp could not render the metrics: ", e.what()));
  }
}

}  // namespace goodput
