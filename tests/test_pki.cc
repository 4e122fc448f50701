#include "tests/test_pki.h"

#include <fstream>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "tests/subprocess.h"

namespace goodput::testing {
namespace {

// EC keys: fast to make, and gRPC's TLS takes them.
const std::vector<std::string> kNewKey = {
    "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"};

absl::Status Run(const std::string& dir, std::vector<std::string> argv) {
  argv.insert(argv.begin(), "/usr/bin/openssl");
  std::string out;
  if (RunCapture(argv, dir + "/openssl.log", &out) != 0) {
    return absl::InternalError(absl::StrCat(
        absl::StrJoin(argv, " "), " failed; see ", dir, "/openssl.log"));
  }
  return absl::OkStatus();
}

absl::Status MakeCa(const std::string& dir, const std::string& name) {
  std::vector<std::string> argv = {"req", "-x509"};
  argv.insert(argv.end(), kNewKey.begin(), kNewKey.end());
  argv.insert(argv.end(), {"-keyout", dir + "/" + name + ".key", "-out",
                           dir + "/" + name + ".pem", "-days", "2", "-subj",
                           "/CN=" + name});
  return Run(dir, argv);
}

// A key and a certificate `name`.pem signed by `ca`, with `extensions`.
absl::Status MakeLeaf(const std::string& dir, const std::string& ca,
                      const std::string& name, const std::string& extensions) {
  const std::string base = dir + "/" + name;
  std::ofstream(base + ".ext") << extensions << "\n";
  std::vector<std::string> req = {"req"};
  req.insert(req.end(), kNewKey.begin(), kNewKey.end());
  req.insert(req.end(), {"-keyout", base + ".key", "-out", base + ".csr",
                         "-subj", "/CN=" + name});
  if (absl::Status s = Run(dir, req); !s.ok()) return s;
  return Run(dir, {"x509", "-req", "-in", base + ".csr", "-CA",
                   dir + "/" + ca + ".pem", "-CAkey", dir + "/" + ca + ".key",
                   "-CAcreateserial", "-out", base + ".pem", "-days", "2",
                   "-extfile", base + ".ext"});
}

}  // namespace

absl::StatusOr<TestPki> TestPki::Generate(const std::string& dir) {
  for (absl::Status s :
       {MakeCa(dir, "ca"), MakeCa(dir, "rogue-ca"),
        MakeLeaf(dir, "ca", "server",
                 "subjectAltName=IP:127.0.0.1,DNS:localhost"),
        MakeLeaf(dir, "ca", "client", "extendedKeyUsage=clientAuth"),
        MakeLeaf(dir, "rogue-ca", "rogue", "extendedKeyUsage=clientAuth")}) {
    if (!s.ok()) return s;
  }
  const std::string d = dir + "/";
  return TestPki{d + "ca.pem",     d + "server.pem", d + "server.key",
                 d + "client.pem", d + "client.key", d + "rogue-ca.pem",
                 d + "rogue.pem",  d + "rogue.key"};
}

}  // namespace goodput::testing
