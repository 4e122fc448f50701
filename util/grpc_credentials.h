// The one place where goodputd, goodput-agent and goodputctl turn their TLS
// and token flags into gRPC credentials (docs/security.md). Files are read
// once, when the credentials are built; errors name the flag and the path.
// Free functions over plain values; thread-safe.
#ifndef GOODPUT_UTIL_GRPC_CREDENTIALS_H_
#define GOODPUT_UTIL_GRPC_CREDENTIALS_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "grpcpp/security/auth_metadata_processor.h"
#include "grpcpp/security/credentials.h"
#include "grpcpp/security/server_credentials.h"

namespace goodput {

// goodputd's side. Empty cert and key = plaintext.
struct ServerTlsFlags {
  std::string cert;       // --tls_cert: PEM certificate chain
  std::string key;        // --tls_key: PEM private key
  std::string client_ca;  // --tls_client_ca: require client certs it signed
};

// The agent's and goodputctl's side. Empty ca = plaintext.
struct ClientTlsFlags {
  std::string ca;           // --tls_ca: PEM roots that signed the server's cert
  std::string cert;         // --tls_cert: client certificate (mutual TLS)
  std::string key;          // --tls_key: its private key
  std::string server_name;  // --tls_server_name: expected name, if not HOST
  std::string token_file;   // --auth_token_file: bearer token, one line
};

// TLS (or mutual TLS with client_ca) when cert and key are set, else
// insecure. `processor`, if not null, checks every call's metadata; it
// needs TLS (gRPC cannot run one on plaintext).
absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> MakeServerCredentials(
    const ServerTlsFlags& flags,
    std::shared_ptr<grpc::AuthMetadataProcessor> processor);

// TLS when ca is set (plus a client certificate with cert and key), else
// insecure; a token file adds "authorization: Bearer TOKEN" to every call
// and needs TLS, so a token never travels in clear text.
absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>>
MakeChannelCredentials(const ClientTlsFlags& flags);

// Sets the channel's expected server name (--tls_server_name) in `args`.
void ApplyTlsChannelArgs(const ClientTlsFlags& flags,
                         grpc::ChannelArguments* args);

}  // namespace goodput

#endif  // GOODPUT_UTIL_GRPC_CREDENTIALS_H_
