#ifndef GOODPUT_UTIL_UUID_H_
#define GOODPUT_UTIL_UUID_H_

#include <string>

#include "absl/status/statusor.h"

namespace goodput {

// A random (version 4) UUID from /dev/urandom, e.g.
// "3f2b8c1e-9a4d-4e6f-8b2a-1c3d5e7f9a0b".
absl::StatusOr<std::string> RandomUuid();

}  // namespace goodput

#endif  // GOODPUT_UTIL_UUID_H_
