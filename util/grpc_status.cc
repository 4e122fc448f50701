#include "util/grpc_status.h"

#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"

namespace goodput {

grpc::Status ToGrpc(const absl::Status& s) {
  if (s.ok()) return grpc::Status::OK;
  return grpc::Status(static_cast<grpc::StatusCode>(s.code()),
                      std::string(s.message()));
}

absl::Status FromGrpc(const grpc::Status& s) {
  if (s.ok()) return absl::OkStatus();
  return absl::Status(static_cast<absl::StatusCode>(s.error_code()),
                      s.error_message() + TlsMismatchHint(s.error_message()));
}

std::string TlsMismatchHint(absl::string_view message) {
  if (absl::StrContains(message, "Ssl handshake failed") &&
      absl::StrContains(absl::AsciiStrToLower(message),
                        "wrong version number")) {
    return "; hint: this side uses TLS (--tls_ca) but the server does not: "
           "start goodputd with --tls_cert and --tls_key, or drop --tls_ca, "
           "--tls_cert and --tls_key here (docs/security.md)";
  }
  if (absl::StrContains(message, "Socket closed")) {
    return "; hint: the server may use TLS while this side does not: give "
           "this side --tls_ca (and --tls_cert, --tls_key if goodputd has "
           "--tls_client_ca), or start goodputd without --tls_cert and "
           "--tls_key (docs/security.md)";
  }
  return "";
}

}  // namespace goodput
