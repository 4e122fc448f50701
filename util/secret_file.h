// The one reader of secret files (TLS keys and certificates, bearer tokens,
// basic-auth password files, --auth_tokens): the whole file, read once;
// errors name the flag and the path. No gRPC here, so basic auth and token
// files do not pull gRPC in to read a file. Thread-safe (a free function).
#ifndef GOODPUT_UTIL_SECRET_FILE_H_
#define GOODPUT_UTIL_SECRET_FILE_H_

#include <string>

#include "absl/status/statusor.h"

namespace goodput {

// The contents of `path`; InvalidArgument "`flag`: cannot read `path`:
// <errno text>" or "`flag`: `path` is empty".
absl::StatusOr<std::string> ReadSecretFile(const std::string& flag,
                                           const std::string& path);

}  // namespace goodput

#endif  // GOODPUT_UTIL_SECRET_FILE_H_
