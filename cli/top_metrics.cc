#include "cli/top_metrics.h"

#include <netdb.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace goodput::cli {
namespace {

// "name{labels} value" -> adds value to (*out)[key] when the line is
// `metric` with `label` (or any labels when `label` is empty).
void AddIf(absl::string_view line, absl::string_view metric,
           absl::string_view label, const std::string& key, bool count,
           std::map<std::string, double>* out) {
  if (!absl::StartsWith(line, metric)) return;
  const absl::string_view rest = line.substr(metric.size());
  if (!rest.empty() && rest[0] != '{' && rest[0] != ' ') return;
  if (!label.empty() && !absl::StrContains(rest, label)) return;
  const size_t space = rest.rfind(' ');
  double value = 0;
  if (space == absl::string_view::npos ||
      !absl::SimpleAtod(rest.substr(space + 1), &value)) {
    return;
  }
  (*out)[key] += count ? 1 : value;
}

struct Url {
  std::string host, port, path;
};

absl::StatusOr<Url> ParseUrl(const std::string& url) {
  absl::string_view rest = url;
  if (!absl::ConsumePrefix(&rest, "http://")) {
    return absl::InvalidArgumentError("want http://HOST:PORT/PATH, got " + url);
  }
  Url u;
  const size_t slash = rest.find('/');
  const absl::string_view hostport = rest.substr(0, slash);
  u.path =
      slash == absl::string_view::npos ? "/" : std::string(rest.substr(slash));
  const size_t colon = hostport.rfind(':');
  if (colon == absl::string_view::npos) {
    return absl::InvalidArgumentError("no port in " + url);
  }
  u.host = std::string(hostport.substr(0, colon));
  u.port = std::string(hostport.substr(colon + 1));
  return u;
}

absl::StatusOr<int> Dial(const Url& u, int timeout_ms) {
  addrinfo hints{}, *found = nullptr;
  hints.ai_socktype = SOCK_STREAM;
  if (getaddrinfo(u.host.c_str(), u.port.c_str(), &hints, &found) != 0) {
    return absl::UnavailableError("cannot resolve " + u.host);
  }
  int fd = socket(found->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  timeval tv{timeout_ms / 1000, (timeout_ms % 1000) * 1000};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
  const bool ok =
      fd >= 0 && connect(fd, found->ai_addr, found->ai_addrlen) == 0;
  freeaddrinfo(found);
  if (!ok) {
    if (fd >= 0) close(fd);
    return absl::UnavailableError("cannot connect");
  }
  return fd;
}

}  // namespace

std::map<std::string, double> IngestCounters(absl::string_view text) {
  std::map<std::string, double> out;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (line.empty() || line[0] == '#') continue;
    AddIf(line, "goodput_ingest_events_total", "result=\"accepted\"",
          "events accepted", false, &out);
    AddIf(line, "goodput_ingest_events_total", "result=\"rejected\"",
          "events rejected", false, &out);
    AddIf(line, "goodput_ingest_batches_total", "result=\"duplicate\"",
          "batches duplicate", false, &out);
    AddIf(line, "goodput_agent_last_seen_timestamp_seconds", "", "agents", true,
          &out);
  }
  return out;
}

absl::StatusOr<std::string> HttpGet(const std::string& url, int timeout_ms) {
  absl::StatusOr<Url> u = ParseUrl(url);
  if (!u.ok()) return u.status();
  absl::StatusOr<int> fd = Dial(*u, timeout_ms);
  if (!fd.ok())
    return absl::UnavailableError(
        absl::StrCat(url, ": ", fd.status().message()));
  const std::string request =
      absl::StrCat("GET ", u->path, " HTTP/1.0\r\nHost: ", u->host, "\r\n\r\n");
  std::string response;
  bool sent = send(*fd, request.data(), request.size(), MSG_NOSIGNAL) ==
              static_cast<ssize_t>(request.size());
  char buffer[16384];
  for (ssize_t n; sent && (n = recv(*fd, buffer, sizeof(buffer), 0)) > 0;) {
    response.append(buffer, static_cast<size_t>(n));
  }
  close(*fd);
  const size_t body = response.find("\r\n\r\n");
  if (!absl::StartsWith(response, "HTTP/1.") || body == std::string::npos ||
      response.substr(9, 3) != "200") {
    return absl::UnavailableError(url + ": no HTTP 200 answer");
  }
  return response.substr(body + 4);
}

}  // namespace goodput::cli
