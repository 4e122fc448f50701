// Throwaway certificates for TLS tests, made with the openssl CLI (Debian's
// openssl package) in a directory the caller owns: a CA that signs a
// server certificate for 127.0.0.1/localhost and a client certificate, and
// a rogue CA with its own client certificate. Plain data; not thread-safe.
#ifndef GOODPUT_TESTS_TEST_PKI_H_
#define GOODPUT_TESTS_TEST_PKI_H_

#include <string>

#include "absl/status/statusor.h"

namespace goodput::testing {

struct TestPki {
  std::string ca, server_cert, server_key, client_cert, client_key;
  std::string rogue_ca, rogue_cert, rogue_key;  // signed by rogue_ca

  // Writes every file into `dir` (which must exist); an error quotes the
  // failed openssl command.
  static absl::StatusOr<TestPki> Generate(const std::string& dir);
};

}  // namespace goodput::testing

#endif  // GOODPUT_TESTS_TEST_PKI_H_
