#ifndef GOODPUT_UTIL_VERSION_H_
#define GOODPUT_UTIL_VERSION_H_

#include <string>

#include "absl/strings/string_view.h"

namespace goodput {

// What --version prints for `program`, from the build: the project version
// (CMake's project(goodput VERSION ...), which Bazel reads too) and the git
// commit when the build knew it, e.g. "goodputd 0.1.0 (commit 97ac50d1e2f3)"
// or "goodputd 0.1.0". Pure; thread-safe.
std::string VersionLine(absl::string_view program);

}  // namespace goodput

#endif  // GOODPUT_UTIL_VERSION_H_
