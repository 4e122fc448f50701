#include "util/grpc_credentials.h"

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "grpcpp/support/channel_arguments.h"
#include "util/secret_file.h"

namespace goodput {
namespace {

// Both set or both empty; "--tls_cert"/"--tls_key" name the one missing.
absl::Status CheckPair(const std::string& cert, const std::string& key) {
  if (cert.empty() == key.empty()) return absl::OkStatus();
  return absl::InvalidArgumentError(
      cert.empty() ? "--tls_cert: required with --tls_key"
                   : "--tls_key: required with --tls_cert");
}

absl::StatusOr<grpc::SslServerCredentialsOptions::PemKeyCertPair> ReadPair(
    const std::string& cert, const std::string& key) {
  auto cert_pem = ReadSecretFile("--tls_cert", cert);
  if (!cert_pem.ok()) return cert_pem.status();
  auto key_pem = ReadSecretFile("--tls_key", key);
  if (!key_pem.ok()) return key_pem.status();
  return grpc::SslServerCredentialsOptions::PemKeyCertPair{*key_pem, *cert_pem};
}

absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> SslChannel(
    const ClientTlsFlags& flags) {
  grpc::SslCredentialsOptions ssl;
  auto ca = ReadSecretFile("--tls_ca", flags.ca);
  if (!ca.ok()) return ca.status();
  ssl.pem_root_certs = *ca;
  if (!flags.cert.empty()) {
    auto pair = ReadPair(flags.cert, flags.key);
    if (!pair.ok()) return pair.status();
    ssl.pem_cert_chain = pair->cert_chain;
    ssl.pem_private_key = pair->private_key;
  }
  return grpc::SslCredentials(ssl);
}

}  // namespace

absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> MakeServerCredentials(
    const ServerTlsFlags& flags,
    std::shared_ptr<grpc::AuthMetadataProcessor> processor) {
  if (absl::Status s = CheckPair(flags.cert, flags.key); !s.ok()) return s;
  if (flags.cert.empty()) {
    if (!flags.client_ca.empty()) {
      return absl::InvalidArgumentError(
          "--tls_client_ca: needs --tls_cert and --tls_key");
    }
    if (processor != nullptr) {
      return absl::InvalidArgumentError(
          "--auth_tokens: needs --tls_cert and --tls_key (tokens are never "
          "accepted in clear text)");
    }
    return grpc::InsecureServerCredentials();
  }
  grpc::SslServerCredentialsOptions ssl;
  auto pair = ReadPair(flags.cert, flags.key);
  if (!pair.ok()) return pair.status();
  ssl.pem_key_cert_pairs.push_back(*pair);
  if (!flags.client_ca.empty()) {
    auto ca = ReadSecretFile("--tls_client_ca", flags.client_ca);
    if (!ca.ok()) return ca.status();
    ssl.pem_root_certs = *ca;
    ssl.client_certificate_request =
        GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY;
  }
  std::shared_ptr<grpc::ServerCredentials> creds =
      grpc::SslServerCredentials(ssl);
  if (processor != nullptr) creds->SetAuthMetadataProcessor(processor);
  return creds;
}

absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>>
MakeChannelCredentials(const ClientTlsFlags& flags) {
  if (absl::Status s = CheckPair(flags.cert, flags.key); !s.ok()) return s;
  if (flags.ca.empty()) {
    if (!flags.cert.empty() || !flags.token_file.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          flags.cert.empty() ? "--auth_token_file" : "--tls_cert",
          ": needs --tls_ca (credentials are never sent in clear text)"));
    }
    return grpc::InsecureChannelCredentials();
  }
  auto channel = SslChannel(flags);
  if (!channel.ok() || flags.token_file.empty()) return channel;
  auto token = ReadSecretFile("--auth_token_file", flags.token_file);
  if (!token.ok()) return token.status();
  std::string bearer(absl::StripAsciiWhitespace(*token));
  if (bearer.empty() || bearer.find_first_of(" \t\r\n") != std::string::npos) {
    return absl::InvalidArgumentError(
        absl::StrCat("--auth_token_file: ", flags.token_file,
                     " must hold one token without spaces"));
  }
  return grpc::CompositeChannelCredentials(
      *channel, grpc::AccessTokenCredentials(bearer));
}

void ApplyTlsChannelArgs(const ClientTlsFlags& flags,
                         grpc::ChannelArguments* args) {
  if (!flags.server_name.empty()) {
    args->SetSslTargetNameOverride(flags.server_name);
  }
}

}  // namespace goodput
