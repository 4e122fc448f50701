#include "agent/testing/test_util.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace goodput::agent::testing {

TempDir::TempDir() {
  std::string tmpl = "/tmp/gpa-XXXXXX";
  char* made = ::mkdtemp(tmpl.data());
  if (made != nullptr) path_ = made;
}

TempDir::~TempDir() {
  std::error_code ec;
  if (!path_.empty()) std::filesystem::remove_all(path_, ec);
}

std::string TempDir::File(absl::string_view name) const {
  return absl::StrCat(path_, "/", name);
}

absl::StatusOr<int> ConnectUnix(const std::string& path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof(addr.sun_path)) {
    return absl::InvalidArgumentError("path too long");
  }
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return absl::ErrnoToStatus(errno, "socket");
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    absl::Status s = absl::ErrnoToStatus(errno, "connect " + path);
    ::close(fd);
    return s;
  }
  return fd;
}

bool SendAll(int fd, absl::string_view data) {
  while (!data.empty()) {
    ssize_t n = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

std::string StepLine(absl::string_view job_id, int step) {
  return absl::StrFormat(
      "{\"time\":\"2024-06-01T00:00:00Z\",\"job_id\":\"%s\","
      "\"step\":{\"step\":%d}}\n",
      job_id, step);
}

bool WaitFor(const std::function<bool()>& done, absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  while (!done()) {
    if (absl::Now() > deadline) return false;
    absl::SleepFor(absl::Milliseconds(1));
  }
  return true;
}

void RecordingSleeper::Sleep(absl::Duration d) {
  absl::MutexLock lock(&mu_);
  delays_.push_back(d);
  mu_.AwaitWithTimeout(absl::Condition(&interrupted_),
                       std::min(d, absl::Milliseconds(2)));
}

void RecordingSleeper::Interrupt() {
  absl::MutexLock lock(&mu_);
  interrupted_ = true;
}

std::vector<absl::Duration> RecordingSleeper::delays() const {
  absl::MutexLock lock(&mu_);
  return delays_;
}

}  // namespace goodput::agent::testing
