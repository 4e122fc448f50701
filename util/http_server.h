// HttpServer: a minimal HTTP/1.0 server for the agent's and goodputd's
// /metrics, /healthz and /readyz (prometheus-cpp's Exposer pulls in civetweb
// and cannot serve them). One thread serves one connection at a time: read a
// request of at most 8 KiB, call the handler, write the response, close. Each
// socket read or write gives up after 2 s, so a stuck client delays scrapes by
// at most that and cannot block the agent. Owns its socket and thread; the
// handler is called on that thread. With a BasicAuth, a request without a
// matching "Authorization: Basic" header gets 401 and never reaches the
// handler, except on the listed open paths (health probes). Thread-safe
// (Stop from any thread).
#ifndef GOODPUT_UTIL_HTTP_SERVER_H_
#define GOODPUT_UTIL_HTTP_SERVER_H_

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "util/basic_auth.h"

namespace goodput {

struct HttpResponse {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
  std::string headers;  // extra header lines, each ending in "\r\n"
};

class HttpServer {
 public:
  // Answers one request; `path` has no query string.
  using Handler = std::function<HttpResponse(absl::string_view method,
                                             absl::string_view path)>;

  // Listens on `address` ("HOST:PORT", "[::1]:PORT"; an empty host means
  // 127.0.0.1; port 0 picks one). `auth` (may be null) guards every path
  // but those in `open_paths` (e.g. "/healthz" for a kubelet's probe).
  static absl::StatusOr<std::unique_ptr<HttpServer>> Start(
      absl::string_view address, Handler handler,
      std::shared_ptr<const BasicAuth> auth = nullptr,
      std::vector<std::string> open_paths = {});
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  int port() const { return port_; }
  void Stop();  // idempotent

 private:
  HttpServer(int listen_fd, int wake_read, int wake_write, int port,
             Handler handler, std::shared_ptr<const BasicAuth> auth,
             std::vector<std::string> open_paths);
  // Whether the request `head` for `path` may be served.
  bool Authorized(absl::string_view head, absl::string_view path) const;
  void Loop();
  void Serve(int fd);

  const int listen_fd_;
  const int wake_read_;
  const int wake_write_;
  const int port_;
  const Handler handler_;
  const std::shared_ptr<const BasicAuth> auth_;
  const std::vector<std::string> open_paths_;
  std::atomic<bool> stopping_{false};
  std::thread thread_;
};

}  // namespace goodput

#endif  // GOODPUT_UTIL_HTTP_SERVER_H_
