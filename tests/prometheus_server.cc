#include "tests/prometheus_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>

namespace goodput::testing {

std::unique_ptr<PrometheusServer> PrometheusServer::Start(
    const std::string& binary, const std::string& dir,
    const std::string& config_yaml, double timeout_s, std::string* error) {
  std::ofstream(dir + "/prometheus.yml") << config_yaml;
  const int port = FreeLoopbackPort();
  const std::string log = dir + "/prometheus.log";
  auto process = std::make_unique<Subprocess>(
      std::vector<std::string>{
          binary, "--config.file=" + dir + "/prometheus.yml",
          "--storage.tsdb.path=" + dir + "/tsdb",
          "--web.listen-address=127.0.0.1:" + std::to_string(port)},
      log);
  std::unique_ptr<PrometheusServer> server(
      new PrometheusServer(port, std::move(process)));
  const bool ready = Eventually(
      [&] {
        return HttpGet(port, "/-/ready").find("Ready") != std::string::npos;
      },
      timeout_s);
  if (ready) return server;
  *error =
      "prometheus not ready on port " + std::to_string(port) + "; see " + log;
  return nullptr;
}

PrometheusServer::~PrometheusServer() {
  process_->Kill(SIGTERM);
  process_->WaitFor(10);
}

std::string PrometheusServer::url() const {
  return "http://127.0.0.1:" + std::to_string(port_);
}

nlohmann::json PrometheusServer::GetJson(
    const std::string& path_and_query) const {
  return nlohmann::json::parse(HttpGet(port_, path_and_query), nullptr,
                               /*allow_exceptions=*/false);
}

nlohmann::json PrometheusServer::Query(const std::string& expr) const {
  nlohmann::json body = GetJson("/api/v1/query?query=" + UrlEncode(expr));
  if (!body.is_object() || body.value("status", "") != "success") return {};
  return body["data"]["result"];
}

double PrometheusServer::Value(const std::string& expr) const {
  const nlohmann::json result = Query(expr);
  if (!result.is_array() || result.size() != 1) {
    return std::numeric_limits<double>::quiet_NaN();
  }
  return std::stod(result[0]["value"][1].get<std::string>());
}

std::string UrlEncode(const std::string& text) {
  std::string out;
  for (unsigned char c : text) {
    if (isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      char hex[4];
      std::snprintf(hex, sizeof(hex), "%%%02X", c);
      out += hex;
    }
  }
  return out;
}

int FreeLoopbackPort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  int port = -1;
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
    port = ntohs(addr.sin_port);
  }
  close(fd);
  return port;
}

}  // namespace goodput::testing
