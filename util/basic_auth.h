// BasicAuth: the users allowed to read a metrics endpoint
// (--metrics_basic_auth_file, lines "user:password"; '#' starts a comment).
// Used by the agent's /metrics (agent/http_server) and meant for goodputd's
// prometheus-cpp Exposer:
//   exposer.RegisterAuth([auth](const std::string& u, const std::string& p) {
//     return auth->Check(u, p); }, "goodputd");
// Immutable after Load; thread-safe.
#ifndef GOODPUT_UTIL_BASIC_AUTH_H_
#define GOODPUT_UTIL_BASIC_AUTH_H_

#include <map>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace goodput {

// Same bytes, in time that depends only on the lengths (secrets compare).
bool ConstantTimeEquals(absl::string_view a, absl::string_view b);

class BasicAuth {
 public:
  // Reads `path`; an error names `flag`, the path and the bad line.
  static absl::StatusOr<std::shared_ptr<const BasicAuth>> Load(
      const std::string& flag, const std::string& path);
  // From file contents (tests).
  static absl::StatusOr<std::shared_ptr<const BasicAuth>> Parse(
      absl::string_view contents);

  // The user exists and the password matches (constant-time compare).
  bool Check(const std::string& user, const std::string& password) const;
  // `header` is an Authorization header value: "Basic base64(user:pass)".
  bool CheckHeader(absl::string_view header) const;

 private:
  std::map<std::string, std::string> passwords_;
};

}  // namespace goodput

#endif  // GOODPUT_UTIL_BASIC_AUTH_H_
