#include "agent/log.h"

#include <unistd.h>

#include <string>

#include "absl/strings/str_cat.h"

namespace goodput::agent {

void LogLine(absl::string_view message) {
  std::string line = absl::StrCat("goodput-agent: ", message, "\n");
  const char* p = line.data();
  size_t left = line.size();
  while (left > 0) {
    ssize_t n = ::write(STDERR_FILENO, p, left);
    if (n <= 0) return;  // nowhere to report a failing stderr
    p += n;
    left -= static_cast<size_t>(n);
  }
}

}  // namespace goodput::agent
