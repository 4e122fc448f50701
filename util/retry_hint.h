// The retry hint of a RESOURCE_EXHAUSTED ingest stream: goodputd puts the
// delay in trailing metadata "goodput-retry-after-ms"; the agent's uplink
// waits at least that long before reconnecting. Stateless; thread-safe.
#ifndef GOODPUT_UTIL_RETRY_HINT_H_
#define GOODPUT_UTIL_RETRY_HINT_H_

#include <optional>

#include "absl/time/time.h"
#include "grpcpp/client_context.h"
#include "grpcpp/server_context.h"

namespace goodput {

inline constexpr char kRetryAfterMetadata[] = "goodput-retry-after-ms";

void SetRetryHint(grpc::ServerContext* context, absl::Duration delay);

// The server's hint, if the finished call carried a valid one.
std::optional<absl::Duration> GetRetryHint(const grpc::ClientContext& context);

}  // namespace goodput

#endif  // GOODPUT_UTIL_RETRY_HINT_H_
