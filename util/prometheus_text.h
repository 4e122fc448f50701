// The one adapter from plain metric families (core/metric_family.h) to the
// Prometheus text exposition format 0.0.4, through prometheus-cpp's
// TextSerializer; goodputd's and goodput-agent's /metrics both render with
// it. Families with no samples are left out. prometheus-cpp's exceptions
// become an Internal status here. Free functions; thread-safe.
#ifndef GOODPUT_UTIL_PROMETHEUS_TEXT_H_
#define GOODPUT_UTIL_PROMETHEUS_TEXT_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/metric_family.h"

namespace goodput {

// The content type of what PrometheusText returns.
inline constexpr char kPrometheusTextType[] =
    "text/plain; version=0.0.4; charset=utf-8";

absl::StatusOr<std::string> PrometheusText(
    const std::vector<core::MetricFamilyData>& families);

}  // namespace goodput

#endif  // GOODPUT_UTIL_PROMETHEUS_TEXT_H_
