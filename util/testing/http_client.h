// A blocking HTTP/1.0 test client for the servers' /metrics, /healthz and
// /readyz (util/http_server.h): one request per connection to 127.0.0.1.
// Free functions, no state; thread-safe.
#ifndef GOODPUT_UTIL_TESTING_HTTP_CLIENT_H_
#define GOODPUT_UTIL_TESTING_HTTP_CLIENT_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace goodput::testing {

struct HttpResult {
  int status = 0;
  std::string body;
};

// Sends `request` verbatim to 127.0.0.1:`port` and parses the answer.
absl::StatusOr<HttpResult> HttpRequest(int port, absl::string_view request);
// GET `path` (may carry a query string).
absl::StatusOr<HttpResult> HttpGet(int port, absl::string_view path);

}  // namespace goodput::testing

#endif  // GOODPUT_UTIL_TESTING_HTTP_CLIENT_H_
