#include "util/version.h"

#include "absl/strings/str_cat.h"
#include "util/build_info.h"

namespace goodput {

std::string VersionLine(absl::string_view program) {
  absl::string_view commit = GOODPUT_GIT_COMMIT;
  return absl::StrCat(
      program, " ", GOODPUT_VERSION,
      commit.empty() ? "" : absl::StrCat(" (commit ", commit, ")"));
}

}  // namespace goodput
