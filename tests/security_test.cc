// Transport security end to end, in process: goodputd (real gRPC with TLS,
// real RocksDB) and an agent uplink, with certificates made by openssl at
// test time. An agent without the right CA, client certificate or token
// is refused and nothing it sent is counted; with them everything arrives.
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "gtest/gtest.h"
#include "server/goodputd.h"
#include "tests/test_pki.h"
#include "tests/uplink_harness.h"
#include "util/grpc_credentials.h"

namespace goodput {
namespace {

constexpr int64_t kNow = 1717200000;  // 2024-06-01, the events' time
constexpr absl::Duration kTimeout = absl::Seconds(30);
constexpr int kBatches = 4, kEventsPerBatch = 5;

class SecurityTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new agent::testing::TempDir();
    auto pki = testing::TestPki::Generate(dir_->path());
    ASSERT_TRUE(pki.ok()) << pki.status();
    pki_ = new testing::TestPki(*pki);
    std::ofstream(dir_->File("tokens")) << "# agents\nagent-a tok-a\n";
    std::ofstream(dir_->File("tok-a")) << "tok-a\n";
    std::ofstream(dir_->File("tok-wrong")) << "tok-b\n";
  }
  static void TearDownTestSuite() {
    delete pki_;
    delete dir_;
  }

  void SetUp() override { ASSERT_NE(pki_, nullptr); }

  // goodputd with TLS, mutual TLS and tokens.
  void StartServer() {
    server::GoodputdOptions options;
    options.data_dir = data_.path();
    options.grpc_address = "127.0.0.1:0";
    options.tls = {pki_->server_cert, pki_->server_key, pki_->ca};
    options.auth_tokens = dir_->File("tokens");
    auto started = server::Goodputd::Start(options, &clock_);
    ASSERT_TRUE(started.ok()) << started.status();
    server_ = *std::move(started);
  }

  // The right credentials of agent-a.
  ClientTlsFlags Good() const {
    return {pki_->ca, pki_->client_cert, pki_->client_key, "",
            dir_->File("tok-a")};
  }

  // Runs an agent with `tls` that spools kBatches batches.
  void StartAgent(const ClientTlsFlags& tls) {
    auto credentials = MakeChannelCredentials(tls);
    ASSERT_TRUE(credentials.ok()) << credentials.status();
    for (int b = 0; b < kBatches; ++b) {
      agent_.Spool(testing::StepEvents(kEventsPerBatch, "job-1",
                                       1 + b * kEventsPerBatch, kNow));
    }
    agent::Uplink::Options options;
    options.server = "127.0.0.1:" + std::to_string(server_->port());
    options.credentials = *credentials;
    agent_.Start(options);
  }

  // The agent keeps failing: three streams ended, none acknowledged.
  void ExpectRefused() {
    ASSERT_TRUE(agent_.uplink().AwaitStats(
        [](const agent::Uplink::Stats& s) { return s.stream_errors >= 3; },
        kTimeout));
    EXPECT_EQ(agent_.uplink().stats().acked_batches, 0);
    EXPECT_EQ(agent_.pending(), size_t{kBatches});
    EXPECT_EQ(server_->ingestor()->stats().batches, 0);
    EXPECT_EQ(server_->ingestor()->stats().accepted_events, 0);
  }

  static agent::testing::TempDir* dir_;
  static testing::TestPki* pki_;
  agent::testing::TempDir data_;
  FakeClock clock_{kNow * core::kNanosPerSecond};
  std::unique_ptr<server::Goodputd> server_;
  testing::UplinkHarness agent_;
};

agent::testing::TempDir* SecurityTest::dir_ = nullptr;
testing::TestPki* SecurityTest::pki_ = nullptr;

TEST_F(SecurityTest, RightCaCertificateAndTokenDeliverEverything) {
  StartServer();
  StartAgent(Good());
  ASSERT_TRUE(agent_.uplink().AwaitStats(
      [](const agent::Uplink::Stats& s) { return s.acked_batches == kBatches; },
      kTimeout));
  EXPECT_EQ(server_->ingestor()->stats().accepted_events,
            kBatches * kEventsPerBatch);
  EXPECT_EQ(agent_.pending(), 0u);
  EXPECT_EQ(server_->auth_refused(), 0);
}

TEST_F(SecurityTest, ServerCertificateFromAnotherCaIsRefusedByTheAgent) {
  StartServer();
  ClientTlsFlags tls = Good();
  tls.ca = pki_->rogue_ca;
  StartAgent(tls);
  ExpectRefused();
}

TEST_F(SecurityTest, ClientCertificateFromAnotherCaIsRefused) {
  StartServer();
  ClientTlsFlags tls = Good();
  tls.cert = pki_->rogue_cert;
  tls.key = pki_->rogue_key;
  StartAgent(tls);
  ExpectRefused();
}

TEST_F(SecurityTest, MissingClientCertificateIsRefused) {
  StartServer();
  ClientTlsFlags tls = Good();
  tls.cert.clear();
  tls.key.clear();
  StartAgent(tls);
  ExpectRefused();
}

TEST_F(SecurityTest, UnknownTokenIsRefusedUnauthenticated) {
  StartServer();
  ClientTlsFlags tls = Good();
  tls.token_file = dir_->File("tok-wrong");
  StartAgent(tls);
  ExpectRefused();
  EXPECT_GE(server_->auth_refused(), 3);
}

TEST_F(SecurityTest, MissingTokenIsRefused) {
  StartServer();
  ClientTlsFlags tls = Good();
  tls.token_file.clear();
  StartAgent(tls);
  ExpectRefused();
  EXPECT_GE(server_->auth_refused(), 3);
}

TEST_F(SecurityTest, PlaintextAgentIsRefused) {
  StartServer();
  StartAgent(ClientTlsFlags{});
  ExpectRefused();
}

TEST_F(SecurityTest, CredentialsAreNeverSentInClearText) {
  ClientTlsFlags token_only;
  token_only.token_file = dir_->File("tok-a");
  auto creds = MakeChannelCredentials(token_only);
  ASSERT_FALSE(creds.ok());
  EXPECT_EQ(creds.status().message(),
            "--auth_token_file: needs --tls_ca (credentials are never sent "
            "in clear text)");
  server::GoodputdOptions options;
  options.data_dir = data_.path();
  options.grpc_address = "127.0.0.1:0";
  options.auth_tokens = dir_->File("tokens");
  auto started = server::Goodputd::Start(options, &clock_);
  ASSERT_FALSE(started.ok());
  EXPECT_EQ(started.status().message(),
            "--auth_tokens: needs --tls_cert and --tls_key (tokens are never "
            "accepted in clear text)");
}

}  // namespace
}  // namespace goodput
