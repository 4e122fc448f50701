#ifndef GOODPUT_UTIL_GRPC_STATUS_H_
#define GOODPUT_UTIL_GRPC_STATUS_H_

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "grpcpp/support/status.h"

namespace goodput {

// The one translation between absl::Status and grpc::Status (both ways);
// codes map one to one. FromGrpc adds TlsMismatchHint to the message of a
// failed connection that looks like a TLS mismatch.
grpc::Status ToGrpc(const absl::Status& s);
absl::Status FromGrpc(const grpc::Status& s);

// gRPC reports a client without TLS talking to a TLS server as only
// "Socket closed", and a TLS client talking to a plaintext server as an
// "Ssl handshake failed ... wrong version number": for those messages, a
// hint naming which side's TLS flag is wrong and the flags on each side
// (starting with "; "); "" for any other message.
std::string TlsMismatchHint(absl::string_view message);

}  // namespace goodput

#endif  // GOODPUT_UTIL_GRPC_STATUS_H_
