#include "util/secret_file.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"

namespace goodput {

absl::StatusOr<std::string> ReadSecretFile(const std::string& flag,
                                           const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return absl::InvalidArgumentError(
        absl::StrCat(flag, ": cannot read ", path, ": ", std::strerror(errno)));
  }
  std::ostringstream contents;
  contents << in.rdbuf();
  if (contents.str().empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(flag, ": ", path, " is empty"));
  }
  return contents.str();
}

}  // namespace goodput
