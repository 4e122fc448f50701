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

}  // namespace goodput::core

#endif  // GOODPUT_CORE_METRIC_FAMILY_H_
