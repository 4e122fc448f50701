// goodputd's TLS, token, metrics auth and limit flags (docs/security.md),
// registered on goodputd's FlagParser and applied to GoodputdOptions in one
// place so goodputd_main stays short. Plain values; not thread-safe.
#ifndef GOODPUT_SERVER_SECURITY_FLAGS_H_
#define GOODPUT_SERVER_SECURITY_FLAGS_H_

#include <optional>
#include <string>

#include "absl/status/status.h"
#include "server/goodputd.h"
#include "util/flags.h"

namespace goodput::server {

struct SecurityFlags {
  std::optional<std::string> tls_cert, tls_key, tls_client_ca, auth_tokens,
      metrics_basic_auth_file;
  std::optional<std::string> max_jobs, max_labels, max_string_bytes,
      max_batch_events, max_batch_bytes, max_agent_rate, max_streams,
      max_concurrent_queries, query_nice, max_ingest_streams,
      stream_idle_timeout;
  // Agent identities and value bounds (docs/security.md).
  std::optional<std::string> max_agent_id_bytes, agent_takeover_after,
      max_sequence_jump, agent_series_ttl, max_event_age, max_chips, max_flops,
      max_bytes, max_step;
};

// Registers every flag of SecurityFlags on `parser`, which must not
// outlive `flags`.
void AddSecurityFlags(FlagParser* parser, SecurityFlags* flags);

// Sets the given flags in `options`; an error names the flag and value.
absl::Status ApplySecurityFlags(const SecurityFlags& flags,
                                GoodputdOptions* options);

}  // namespace goodput::server

#endif  // GOODPUT_SERVER_SECURITY_FLAGS_H_
