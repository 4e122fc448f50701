#include "cli/tls_flags.h"

namespace goodput::cli {

void AddTlsFlags(FlagParser* parser, TlsFlagValues* values) {
  parser->AddString("tls_ca", "FILE", &values->ca,
                    "PEM CA of goodputd's certificate: connect with TLS");
  parser->AddString("tls_cert", "FILE", &values->cert,
                    "PEM client certificate (mutual TLS)");
  parser->AddString("tls_key", "FILE", &values->key, "PEM key of --tls_cert");
  parser->AddString("tls_server_name", "NAME", &values->server_name,
                    "name expected in goodputd's certificate (default: HOST)");
  parser->AddString("auth_token_file", "FILE", &values->token_file,
                    "bearer token for goodputd (needs --tls_ca)");
}

}  // namespace goodput::cli
