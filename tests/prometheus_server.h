#ifndef GOODPUT_TESTS_PROMETHEUS_SERVER_H_
#define GOODPUT_TESTS_PROMETHEUS_SERVER_H_

#include <memory>
#include <string>

#include "nlohmann/json.hpp"
#include "tests/subprocess.h"

namespace goodput::testing {

// A real Prometheus server (the `prometheus` binary) for end-to-end tests,
// on a free loopback port, with its config, TSDB and log under `dir`, and a
// client for its HTTP API. Owns the process: SIGTERM (then SIGKILL) when
// destroyed. Not thread-safe.
class PrometheusServer {
 public:
  // Writes `config_yaml` to dir/prometheus.yml, starts `binary` on it and
  // waits up to `timeout_s` for /-/ready. nullptr and `*error` on failure.
  static std::unique_ptr<PrometheusServer> Start(const std::string& binary,
                                                 const std::string& dir,
                                                 const std::string& config_yaml,
                                                 double timeout_s,
                                                 std::string* error);
  ~PrometheusServer();

  std::string url() const;
  // GET `path_and_query` (already encoded) as JSON; null when unreachable
  // or not JSON.
  nlohmann::json GetJson(const std::string& path_and_query) const;
  // `data.result` of the instant query `expr`; null when it failed.
  nlohmann::json Query(const std::string& expr) const;
  // The value of `expr` when it has exactly one series, else NaN.
  double Value(const std::string& expr) const;

 private:
  PrometheusServer(int port, std::unique_ptr<Subprocess> process)
      : port_(port), process_(std::move(process)) {}

  int port_;
  std::unique_ptr<Subprocess> process_;
};

// `text` percent-encoded for a URL query value.
std::string UrlEncode(const std::string& text);

// A TCP port on 127.0.0.1 that was free a moment ago, or -1.
int FreeLoopbackPort();

}  // namespace goodput::testing

#endif  // GOODPUT_TESTS_PROMETHEUS_SERVER_H_
