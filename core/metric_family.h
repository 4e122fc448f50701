#ifndef GOODPUT_CORE_METRIC_FAMILY_H_
#define GOODPUT_CORE_METRIC_FAMILY_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace goodput::core {

enum class MetricKind { kCounter, kGauge, kHistogram };

using MetricLabels = std::vector<std::pair<std::string, std::string>>;

// One series of a family: a counter or gauge value, or a histogram.
struct MetricSample {
  MetricLabels labels;
  double value = 0;                  // counter, gauge
  std::vector<uint64_t> cumulative;  // histogram: count <= each bound
  uint64_t count = 0;                // histogram
  double sum = 0;                    // histogram
};

// A metric family as plain data, independent of any Prometheus library
// (the server's exporter translates it). Plain value.
struct MetricFamilyData {
  std::string name, help;
  MetricKind kind = MetricKind::kGauge;
  std::vector<double> bounds;  // histogram bucket upper bounds
  std::vector<MetricSample> samples;
};

// A family with no samples yet.
inline MetricFamilyData NewFamily(std::string name, std::string help,
                                  MetricKind kind) {
  MetricFamilyData f;
  f.name = std::move(name);
  f.help = std::move(help);
  f.kind = kind;
  return f;
}

// Appends a counter or gauge sample.
inline void AddSample(MetricFamilyData* f, MetricLabels labels, double value) {
  MetricSample s;
  s.labels = std::move(labels);
  s.value = value;
  f->samples.push_back(std::move(s));
}

}  // namespace goodput::core

#endif  // GOODPUT_CORE_METRIC_FAMILY_H_
