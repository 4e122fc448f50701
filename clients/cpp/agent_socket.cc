#include "clients/cpp/agent_socket.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>

#include "absl/strings/str_cat.h"

namespace goodput::client {
namespace {

std::string FromEnv(const char* name, const char* fallback) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' ? value : fallback;
}

}  // namespace

std::string DefaultAgentSocket() {
  return FromEnv("GOODPUT_SOCKET", kDefaultAgentSocket);
}

std::string DefaultClientSpoolDir() {
  return FromEnv("GOODPUT_SPOOL_DIR", kDefaultClientSpoolDir);
}

AgentSocket::~AgentSocket() { Close(); }

absl::Status AgentSocket::Connect(const std::string& path) {
  Close();
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof(addr.sun_path)) {
    return absl::InvalidArgumentError(
        absl::StrCat("socket: path longer than 107 bytes, got ", path));
  }
  memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  // Non-blocking for the connect: an agent whose backlog is full (every
  // --max_connections busy and the backlog too) answers EAGAIN at once
  // instead of blocking the caller; the caller then spools.
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0 ||
      ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK) != 0) {
    std::string error = strerror(errno);
    if (fd >= 0) ::close(fd);
    return absl::UnavailableError(
        absl::StrCat("cannot connect to the agent at ", path, ": ", error));
  }
  timeval timeout{};
  timeout.tv_sec = 2;  // a stuck agent costs the writer at most 2 s a write
  (void)::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof(timeout));
  fd_ = fd;
  path_ = path;
  return absl::OkStatus();
}

absl::Status AgentSocket::Write(absl::string_view data) {
  if (fd_ < 0) return absl::FailedPreconditionError("socket: not connected");
  while (!data.empty()) {
    ssize_t n = ::send(fd_, data.data(), data.size(), MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int error = errno;
      Close();
      std::string message = absl::StrCat("cannot write to the agent at ", path_,
                                         ": ", strerror(error));
      return error == EPIPE || error == ECONNRESET
                 ? absl::AbortedError(message)
                 : absl::UnavailableError(message);
    }
    data.remove_prefix(static_cast<size_t>(n));
  }
  return absl::OkStatus();
}

absl::StatusOr<bool> AgentSocket::AskAck(absl::Duration timeout) {
  absl::Status s = Write(absl::StrCat(kAckHello, "\n"));
  if (!s.ok()) return s;
  const std::string want = absl::StrCat(kAckHello, "\n");
  std::string got;
  while (got.size() < want.size()) {  // one read, but for a split reply
    absl::StatusOr<std::string> more = Read(timeout);
    if (!more.ok()) return more.status();
    if (more->empty()) return false;  // said nothing: a plain agent
    got += *more;
  }
  return got == want;
}

absl::StatusOr<std::string> AgentSocket::Read(absl::Duration wait) {
  if (fd_ < 0) return absl::FailedPreconditionError("socket: not connected");
  pollfd p{fd_, POLLIN, 0};
  const int ms = static_cast<int>(
      absl::ToInt64Milliseconds(std::max(wait, absl::ZeroDuration())));
  int ready = ::poll(&p, 1, ms);
  if (ready < 0 && errno == EINTR) return std::string();
  if (ready == 0) return std::string();
  char buffer[4096];
  ssize_t n = ::recv(fd_, buffer, sizeof(buffer), MSG_DONTWAIT);
  if (n < 0 && (errno == EAGAIN || errno == EINTR)) return std::string();
  if (n <= 0) {
    std::string why = n == 0 ? "it closed the connection" : strerror(errno);
    Close();
    return absl::UnavailableError(
        absl::StrCat("cannot read from the agent at ", path_, ": ", why));
  }
  return std::string(buffer, static_cast<size_t>(n));
}

void AgentSocket::Close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

}  // namespace goodput::client
