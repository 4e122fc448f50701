#include "util/testing/http_client.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "absl/strings/numbers.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace goodput::testing {
namespace {

bool SendAll(int fd, absl::string_view data) {
  while (!data.empty()) {
    ssize_t n = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

absl::StatusOr<int> ConnectLoopback(int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return absl::ErrnoToStatus(errno, "socket");
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    absl::Status s = absl::ErrnoToStatus(errno, "connect");
    ::close(fd);
    return s;
  }
  return fd;
}

}  // namespace

absl::StatusOr<HttpResult> HttpRequest(int port, absl::string_view request) {
  absl::StatusOr<int> fd = ConnectLoopback(port);
  if (!fd.ok()) return fd.status();
  std::string response;
  if (SendAll(*fd, request)) {
    // A complete request is left open for writing: Go servers (Prometheus)
    // cancel a request whose client half-closes. An incomplete one is
    // closed so the server sees its end.
    if (!absl::EndsWith(request, "\r\n\r\n")) ::shutdown(*fd, SHUT_WR);
    char buf[4096];
    ssize_t n;
    while ((n = ::recv(*fd, buf, sizeof(buf), 0)) > 0) {
      response.append(buf, static_cast<size_t>(n));
    }
  }
  ::close(*fd);
  HttpResult result;
  // "HTTP/1.0 200 OK\r\n...\r\n\r\nbody"
  const size_t body = response.find("\r\n\r\n");
  if (response.size() < 12 || body == std::string::npos ||
      !absl::SimpleAtoi(response.substr(9, 3), &result.status)) {
    return absl::DataLossError(absl::StrCat("bad response: ", response));
  }
  result.body = response.substr(body + 4);
  return result;
}

absl::StatusOr<HttpResult> HttpGet(int port, absl::string_view path) {
  return HttpRequest(port, absl::StrCat("GET ", path, " HTTP/1.0\r\n\r\n"));
}

}  // namespace goodput::testing
