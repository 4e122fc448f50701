#include "util/http_server.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cstring>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace goodput {
namespace {

constexpr size_t kMaxRequestBytes = 8 * 1024;
constexpr int kIoTimeoutSeconds = 2;

absl::Status SplitHostPort(absl::string_view address, std::string* host,
                           std::string* port) {
  const size_t colon = address.rfind(':');
  int port_number = 0;
  if (colon == absl::string_view::npos ||
      !absl::SimpleAtoi(address.substr(colon + 1), &port_number) ||
      port_number < 0 || port_number > 65535) {
    return absl::InvalidArgumentError(
        absl::StrCat("address must be HOST:PORT, got \"", address, "\""));
  }
  absl::string_view h = address.substr(0, colon);
  if (absl::ConsumePrefix(&h, "[")) absl::ConsumeSuffix(&h, "]");
  *host = h.empty() ? "127.0.0.1" : std::string(h);
  *port = absl::StrCat(port_number);
  return absl::OkStatus();
}

absl::StatusOr<int> BindTcp(absl::string_view address, int* bound_port) {
  std::string host, port;
  absl::Status s = SplitHostPort(address, &host, &port);
  if (!s.ok()) return s;
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* res = nullptr;
  if (int rc = ::getaddrinfo(host.c_str(), port.c_str(), &hints, &res)) {
    return absl::InvalidArgumentError(
        absl::StrCat("address ", address, ": ", ::gai_strerror(rc)));
  }
  int fd = ::socket(res->ai_family,
                    res->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  int one = 1;
  if (fd < 0 ||
      ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0 ||
      ::bind(fd, res->ai_addr, res->ai_addrlen) != 0 || ::listen(fd, 64) != 0) {
    s = absl::ErrnoToStatus(errno, absl::StrCat("listen on ", address));
  }
  ::freeaddrinfo(res);
  sockaddr_storage bound{};
  socklen_t len = sizeof(bound);
  if (s.ok() && ::getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &len)) {
    s = absl::ErrnoToStatus(errno, absl::StrCat("getsockname ", address));
  }
  if (!s.ok()) {
    if (fd >= 0) ::close(fd);
    return s;
  }
  *bound_port = ntohs(bound.ss_family == AF_INET6
                          ? reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port
                          : reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
  return fd;
}

const char* Reason(int status) {
  switch (status) {
    case 200:
      return "OK";
    case 400:
      return "Bad Request";
    case 401:
      return "Unauthorized";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 503:
      return "Service Unavailable";
    default:
      return "Error";
  }
}

// Reads until the end of the request head; false on timeout or garbage.
bool ReadHead(int fd, std::string* head) {
  char buf[1024];
  while (head->size() < kMaxRequestBytes) {
    ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return !head->empty();  // HTTP/0.9-ish clients close early
    head->append(buf, static_cast<size_t>(n));
    if (head->find("\r\n\r\n") != std::string::npos ||
        head->find("\n\n") != std::string::npos) {
      return true;
    }
  }
  return true;  // oversized: answer from the request line alone
}

void WriteAll(int fd, absl::string_view data) {
  while (!data.empty()) {
    ssize_t n = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    data.remove_prefix(static_cast<size_t>(n));
  }
}

}  // namespace

absl::StatusOr<std::unique_ptr<HttpServer>> HttpServer::Start(
    absl::string_view address, Handler handler,
    std::shared_ptr<const BasicAuth> auth,
    std::vector<std::string> open_paths) {
  int port = 0;
  auto fd = BindTcp(address, &port);
  if (!fd.ok()) return fd.status();
  int wake[2];
  if (::pipe2(wake, O_NONBLOCK | O_CLOEXEC) != 0) {
    ::close(*fd);
    return absl::ErrnoToStatus(errno, "pipe");
  }
  std::unique_ptr<HttpServer> server(
      new HttpServer(*fd, wake[0], wake[1], port, std::move(handler),
                     std::move(auth), std::move(open_paths)));
  server->thread_ = std::thread([p = server.get()] { p->Loop(); });
  return server;
}

HttpServer::HttpServer(int listen_fd, int wake_read, int wake_write, int port,
                       Handler handler, std::shared_ptr<const BasicAuth> auth,
                       std::vector<std::string> open_paths)
    : listen_fd_(listen_fd),
      wake_read_(wake_read),
      wake_write_(wake_write),
      port_(port),
      handler_(std::move(handler)),
      auth_(std::move(auth)),
      open_paths_(std::move(open_paths)) {}

HttpServer::~HttpServer() { Stop(); }

void HttpServer::Stop() {
  if (stopping_.exchange(true)) return;
  char byte = 0;
  while (::write(wake_write_, &byte, 1) < 0 && errno == EINTR) {
  }
  thread_.join();
  ::close(listen_fd_);
  ::close(wake_read_);
  ::close(wake_write_);
}

void HttpServer::Loop() {
  while (!stopping_) {
    pollfd fds[2] = {{wake_read_, POLLIN, 0}, {listen_fd_, POLLIN, 0}};
    if (::poll(fds, 2, -1) < 0 && errno != EINTR) return;
    if (fds[0].revents != 0 || (fds[1].revents & POLLIN) == 0) continue;
    int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    Serve(fd);
    ::close(fd);
  }
}

void HttpServer::Serve(int fd) {
  timeval timeout{kIoTimeoutSeconds, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof(timeout));
  std::string head;
  if (!ReadHead(fd, &head)) return;
  absl::string_view line = absl::string_view(head).substr(0, head.find('\n'));
  absl::ConsumeSuffix(&line, "\r");
  std::vector<absl::string_view> parts =
      absl::StrSplit(line, ' ', absl::SkipEmpty());
  HttpResponse response;
  if (parts.size() < 2 || parts[1].empty() || parts[1][0] != '/') {
    response = {400, "text/plain; charset=utf-8", "bad request\n"};
  } else if (absl::string_view path = parts[1].substr(0, parts[1].find('?'));
             !Authorized(head, path)) {
    response = {401, "text/plain; charset=utf-8", "unauthorized\n",
                "WWW-Authenticate: Basic realm=\"goodput\"\r\n"};
  } else {
    response = handler_(parts[0], path);
  }
  WriteAll(fd, absl::StrCat("HTTP/1.0 ", response.status, " ",
                            Reason(response.status),
                            "\r\nContent-Type: ", response.content_type,
                            "\r\nContent-Length: ", response.body.size(),
                            "\r\n", response.headers,
                            "Connection: close\r\n\r\n", response.body));
}

bool HttpServer::Authorized(absl::string_view head,
                            absl::string_view path) const {
  if (auth_ == nullptr) return true;
  for (const std::string& open : open_paths_) {
    if (path == open) return true;
  }
  for (absl::string_view line : absl::StrSplit(head, '\n')) {
    const size_t colon = line.find(':');
    if (colon == absl::string_view::npos ||
        !absl::EqualsIgnoreCase(line.substr(0, colon), "authorization")) {
      continue;
    }
    return auth_->CheckHeader(line.substr(colon + 1));
  }
  return false;
}

}  // namespace goodput
