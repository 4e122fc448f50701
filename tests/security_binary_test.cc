// The TLS, mutual-TLS and token flags of the real binaries: goodputd with
// --tls_cert/--tls_key/--tls_client_ca/--auth_tokens; goodput-agent and
// goodputctl with --tls_ca/--tls_cert/--tls_key/--auth_token_file. An agent
// or goodputctl with a wrong token is refused and nothing it sent is
// counted; the agent with the right credentials delivers every event and
// the report equals the offline replay of the same file.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/subprocess.h"
#include "tests/test_pki.h"

namespace goodput {
namespace {

using ::goodput::testing::Eventually;
using ::goodput::testing::HttpGet;
using ::goodput::testing::RunCapture;
using ::goodput::testing::Subprocess;
using ::goodput::testing::WaitForLogInt;
using ::goodput::testing::WaitForPort;
using ::goodput::testing::WriteUnixSocket;

constexpr char kAsOf[] = "--as_of=2026-11-22T16:00:00Z";
const std::string kFleet = std::string(GOODPUT_EXAMPLES) + "/fleet.jsonl";

class SecurityBinaryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = "/tmp/secbin_XXXXXX";  // short: a socket lives here
    dir_ = mkdtemp(tmpl.data());
    auto pki = testing::TestPki::Generate(dir_);
    ASSERT_TRUE(pki.ok()) << pki.status();
    pki_ = *pki;
    std::ofstream(dir_ + "/tokens") << "host-a tok-a\n";
    std::ofstream(dir_ + "/tok-a") << "tok-a\n";
    std::ofstream(dir_ + "/tok-wrong") << "tok-x\n";
    const std::string log = dir_ + "/server.log";
    server_ = std::make_unique<Subprocess>(
        std::vector<std::string>{
            GOODPUTD_PATH, "--data_dir=" + dir_ + "/data",
            "--grpc_address=127.0.0.1:0", "--tls_cert=" + pki_.server_cert,
            "--tls_key=" + pki_.server_key, "--tls_client_ca=" + pki_.ca,
            "--auth_tokens=" + dir_ + "/tokens"},
        log);
    port_ = WaitForPort(log, 30);
    ASSERT_GT(port_, 0) << "goodputd did not start; see " << log;
  }
  void TearDown() override {
    agent_.reset();
    server_.reset();
    if (!HasFailure()) std::filesystem::remove_all(dir_);
  }

  // --tls_* and --auth_token_file for a client holding `token_file`.
  std::vector<std::string> ClientFlags(const std::string& token_file) const {
    return {"--tls_ca=" + pki_.ca, "--tls_cert=" + pki_.client_cert,
            "--tls_key=" + pki_.client_key,
            "--auth_token_file=" + dir_ + "/" + token_file};
  }

  // goodputctl GLOBAL_FLAGS... ARGS...; returns stdout, expects `want`.
  std::string Ctl(const std::vector<std::string>& flags,
                  const std::vector<std::string>& args, int want = 0) {
    std::vector<std::string> argv = {
        GOODPUTCTL_PATH, "--server=127.0.0.1:" + std::to_string(port_)};
    argv.insert(argv.end(), flags.begin(), flags.end());
    argv.insert(argv.end(), args.begin(), args.end());
    std::string out;
    EXPECT_EQ(RunCapture(argv, dir_ + "/ctl.log", &out), want)
        << "see " << dir_ << "/ctl.log";
    return out;
  }
  nlohmann::json Report() {
    return nlohmann::json::parse(
        Ctl(ClientFlags("tok-a"), {"report", "--json", kAsOf}));
  }

  // Starts goodput-agent holding `token_file`, with its own spool.
  void StartAgent(const std::string& name, const std::string& token_file) {
    agent_.reset();
    const std::string log = dir_ + "/agent-" + name + ".log";
    std::vector<std::string> argv = {
        AGENT_PATH,
        "--server=127.0.0.1:" + std::to_string(port_),
        "--socket=" + dir_ + "/" + name + ".sock",
        "--spool_dir=" + dir_ + "/spool-" + name,
        "--metrics_address=127.0.0.1:0",
        "--batch_delay=20ms"};
    for (const std::string& f : ClientFlags(token_file)) argv.push_back(f);
    agent_ = std::make_unique<Subprocess>(argv, log);
    metrics_port_ = WaitForLogInt(log, "metrics port ([0-9]+)", 30);
    ASSERT_GT(metrics_port_, 0) << "agent did not start; see " << log;
    std::ifstream in(kFleet);
    std::stringstream text;
    text << in.rdbuf();
    ASSERT_TRUE(WriteUnixSocket(dir_ + "/" + name + ".sock", text.str()));
  }
  double AgentMetric(const std::string& name) {
    std::istringstream in(HttpGet(metrics_port_, "/metrics"));
    std::string line;
    while (std::getline(in, line)) {
      if (line.rfind(name + " ", 0) == 0) {
        return std::stod(line.substr(name.size() + 1));
      }
    }
    return -1;
  }

  std::string dir_;
  testing::TestPki pki_;
  int port_ = 0, metrics_port_ = 0;
  std::unique_ptr<Subprocess> server_, agent_;
};

TEST_F(SecurityBinaryTest, WrongCredentialsAreRefusedRightOnesDeliverAll) {
  // goodputctl: no TLS, then a wrong token; neither stores anything.
  Ctl({}, {"send", kFleet, "--timeout=5s"}, 2);
  Ctl(ClientFlags("tok-wrong"), {"send", kFleet, "--timeout=5s"}, 2);
  // An agent with a wrong token spools, retries and is refused each time.
  StartAgent("wrong", "tok-wrong");
  ASSERT_TRUE(Eventually(
      [&] {
        return AgentMetric("goodput_agent_spooled_events_total") > 0 &&
               AgentMetric("goodput_agent_stream_errors_total") >= 3;
      },
      60))
      << "see " << dir_;
  EXPECT_EQ(AgentMetric("goodput_agent_acked_batches_total"), 0);
  EXPECT_TRUE(Report()["jobs"].empty());
  // The agent with the right CA, certificate and token delivers it all.
  StartAgent("right", "tok-a");
  auto replay =
      nlohmann::json::parse(Ctl({}, {"replay", kFleet, "--json", kAsOf}));
  nlohmann::json live;
  EXPECT_TRUE(Eventually(
      [&] {
        live = Report();
        return live == replay;
      },
      60))
      << "live and replay differ; see " << dir_;
  EXPECT_FALSE(live["jobs"].empty());
  // Without credentials, queries are refused too.
  Ctl({}, {"report", "--json", kAsOf}, 2);
}

// Issue 15.11: a TLS mismatch names the wrong side's flag instead of only
// "Socket closed" (util/grpc_status.h, TlsMismatchHint).
std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST_F(SecurityBinaryTest, PlaintextClientOfATlsServerIsToldWhichFlag) {
  Ctl({}, {"report", "--json", kAsOf}, 2);
  EXPECT_THAT(ReadAll(dir_ + "/ctl.log"),
              ::testing::HasSubstr("Socket closed; hint: the server may use "
                                   "TLS while this side does not: give this "
                                   "side --tls_ca"));
  // The agent says it in its retry log line.
  const std::string log = dir_ + "/agent-plain.log";
  agent_ = std::make_unique<Subprocess>(
      std::vector<std::string>{AGENT_PATH,
                               "--server=127.0.0.1:" + std::to_string(port_),
                               "--socket=" + dir_ + "/plain.sock",
                               "--spool_dir=" + dir_ + "/spool-plain",
                               "--metrics_address=127.0.0.1:0", "--chips=1",
                               "--accelerator=tpu-v5p"},
      log);
  EXPECT_TRUE(Eventually(
      [&] {
        return ReadAll(log).find("hint: the server may use TLS") !=
               std::string::npos;
      },
      30))
      << ReadAll(log);
}

TEST_F(SecurityBinaryTest, TlsClientOfAPlaintextServerIsToldWhichFlag) {
  const std::string log = dir_ + "/plain-server.log";
  Subprocess plain(
      {GOODPUTD_PATH, "--data_dir=" + dir_ + "/plain-data",
       "--grpc_address=127.0.0.1:0", "--metrics_address=127.0.0.1:0"},
      log);
  const int port = WaitForPort(log, 30);
  ASSERT_GT(port, 0) << ReadAll(log);
  std::string out;
  EXPECT_EQ(
      RunCapture({GOODPUTCTL_PATH, "--server=127.0.0.1:" + std::to_string(port),
                  "--tls_ca=" + pki_.ca, "report"},
                 dir_ + "/ctl-tls.log", &out),
      2);
  EXPECT_THAT(ReadAll(dir_ + "/ctl-tls.log"),
              ::testing::HasSubstr("hint: this side uses TLS (--tls_ca) but "
                                   "the server does not: start goodputd with "
                                   "--tls_cert and --tls_key"));
}

}  // namespace
}  // namespace goodput
