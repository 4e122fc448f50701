#ifndef GOODPUT_UTIL_GRPC_STATUS_H_
#define GOODPUT_UTIL_GRPC_STATUS_H_

#include "absl/status/status.h"
#include "grpcpp/support/status.h"

namespace goodput {

// The one translation between absl::Status and grpc::Status (both ways);
// codes map one to one.
grpc::Status ToGrpc(const absl::Status& s);
absl::Status FromGrpc(const grpc::Status& s);

}  // namespace goodput

#endif  // GOODPUT_UTIL_GRPC_STATUS_H_
