// goodputctl's global TLS and token flags (docs/security.md), as optional
// strings filled by its FlagParser; remote commands turn them into gRPC
// credentials with util/grpc_credentials.h. Plain data; not thread-safe.
#ifndef GOODPUT_CLI_TLS_FLAGS_H_
#define GOODPUT_CLI_TLS_FLAGS_H_

#include <optional>
#include <string>

#include "util/flags.h"

namespace goodput::cli {

struct TlsFlagValues {
  std::optional<std::string> ca, cert, key, server_name, token_file;
};

// Registers --tls_ca, --tls_cert, --tls_key, --tls_server_name and
// --auth_token_file on `parser`, which must not outlive `values`.
void AddTlsFlags(FlagParser* parser, TlsFlagValues* values);

}  // namespace goodput::cli

#endif  // GOODPUT_CLI_TLS_FLAGS_H_
