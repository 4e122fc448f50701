#include "util/basic_auth.h"

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "util/secret_file.h"

namespace goodput {

bool ConstantTimeEquals(absl::string_view a, absl::string_view b) {
  if (a.size() != b.size()) return false;
  unsigned char diff = 0;
  for (size_t i = 0; i < a.size(); ++i) diff |= a[i] ^ b[i];
  return diff == 0;
}

absl::StatusOr<std::shared_ptr<const BasicAuth>> BasicAuth::Load(
    const std::string& flag, const std::string& path) {
  auto contents = ReadSecretFile(flag, path);
  if (!contents.ok()) return contents.status();
  auto auth = Parse(*contents);
  if (!auth.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(flag, ": ", path, ": ", auth.status().message()));
  }
  return auth;
}

absl::StatusOr<std::shared_ptr<const BasicAuth>> BasicAuth::Parse(
    absl::string_view contents) {
  auto auth = std::shared_ptr<BasicAuth>(new BasicAuth());
  int number = 0;
  for (absl::string_view line : absl::StrSplit(contents, '\n')) {
    ++number;
    line = absl::StripAsciiWhitespace(line);
    if (line.empty() || line[0] == '#') continue;
    const size_t colon = line.find(':');
    if (colon == 0 || colon == absl::string_view::npos ||
        colon + 1 == line.size()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "line ", number, ": want user:password (both non-empty)"));
    }
    auth->passwords_[std::string(line.substr(0, colon))] =
        std::string(line.substr(colon + 1));
  }
  if (auth->passwords_.empty()) {
    return absl::InvalidArgumentError("no user:password line");
  }
  return std::shared_ptr<const BasicAuth>(std::move(auth));
}

bool BasicAuth::Check(const std::string& user,
                      const std::string& password) const {
  auto it = passwords_.find(user);
  return it != passwords_.end() && ConstantTimeEquals(it->second, password);
}

bool BasicAuth::CheckHeader(absl::string_view header) const {
  header = absl::StripAsciiWhitespace(header);
  if (header.size() < 6 ||
      !absl::EqualsIgnoreCase(header.substr(0, 6), "Basic ")) {
    return false;
  }
  std::string decoded;
  if (!absl::Base64Unescape(absl::StripAsciiWhitespace(header.substr(6)),
                            &decoded)) {
    return false;
  }
  const size_t colon = decoded.find(':');
  if (colon == std::string::npos) return false;
  return Check(decoded.substr(0, colon), decoded.substr(colon + 1));
}

}  // namespace goodput
