// Transport security end to end, in process: goodputd (real gRPC with TLS,
// real RocksDB) and an agent uplink, with certificates made by openssl at
// test time. An agent without the right CA, client certificate or token
// is refused and nothing it sent is counted; with them everything arrives.
// goodputd's /metrics needs HTTP basic auth and counts refused tokens.
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "agent/testing/test_util.h"
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
    std::ofstream(dir_->File("metrics_users")) << "prom:s3cret\n";
  }
  static void TearDownTestSuite() {
    delete pki_;
    delete dir_;
  }

  void SetUp() override { ASSERT_NE(pki_, nullptr); }

  // goodputd with TLS, mutual TLS, tokens and /metrics behind basic auth.
  void StartServer() {
    server::GoodputdOptions options;
    options.data_dir = data_.path();
    options.grpc_address = "127.0.0.1:0";
    options.tls = {pki_->server_cert, pki_->server_key, pki_->ca};
    options.auth_tokens = dir_->File("tokens");
    options.metrics_address = "127.0.0.1:0";
    options.metrics_basic_auth_file = dir_->File("metrics_users");
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

  // GET /metrics as `user_pass` ("user:password"; empty sends none).
  agent::testing::HttpResult Scrape(const std::string& user_pass) {
    std::string request = "GET /metrics HTTP/1.0\r\n";
    if (!user_pass.empty()) {
      absl::StrAppend(&request, "Authorization: Basic ",
                      absl::Base64Escape(user_pass), "\r\n");
    }
    auto result = agent::testing::HttpRequest(server_->metrics_port(),
                                              absl::StrCat(request, "\r\n"));
    EXPECT_TRUE(result.ok()) << result.status();
    return result.ok() ? *result : agent::testing::HttpResult{};
  }

  // The value of `series` (name and labels, as served) in an authorized
  // scrape; -1 if absent.
  double Scraped(const std::string& series) {
    const std::string body = Scrape("prom:s3cret").body;
    const size_t at = body.find("\n" + series + " ");
    if (at == std::string::npos) return -1;
    return std::stod(body.substr(at + series.size() + 2));
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
  // The agent may see its stream end before the server has counted the
  // refusal: wait for the count, never for a time.
  EXPECT_TRUE(agent::testing::WaitFor(
      [&] { return server_->auth_refused() >= 3; }, kTimeout));
  EXPECT_GE(Scraped("goodput_auth_refused_total{reason=\"unknown_token\"}"), 3);
  EXPECT_EQ(Scraped("goodput_auth_refused_total{reason=\"missing_token\"}"), 0);
}

TEST_F(SecurityTest, MissingTokenIsRefused) {
  StartServer();
  ClientTlsFlags tls = Good();
  tls.token_file.clear();
  StartAgent(tls);
  ExpectRefused();
  // The agent may see its stream end before the server has counted the
  // refusal: wait for the count, never for a time.
  EXPECT_TRUE(agent::testing::WaitFor(
      [&] { return server_->auth_refused() >= 3; }, kTimeout));
  EXPECT_GE(Scraped("goodput_auth_refused_total{reason=\"missing_token\"}"), 3);
  EXPECT_EQ(Scraped("goodput_auth_refused_total{reason=\"unknown_token\"}"), 0);
}

TEST_F(SecurityTest, MetricsNeedBasicAuth) {
  StartServer();
  ASSERT_GT(server_->metrics_port(), 0);
  for (const char* wrong : {"", "prom:guess", "nobody:s3cret"}) {
    agent::testing::HttpResult refused = Scrape(wrong);
    EXPECT_EQ(refused.status, 401) << wrong;
    EXPECT_EQ(refused.body.find("goodput_"), std::string::npos) << wrong;
  }
  agent::testing::HttpResult scrape = Scrape("prom:s3cret");
  EXPECT_EQ(scrape.status, 200);
  EXPECT_NE(scrape.body.find("goodput_auth_refused_total"), std::string::npos);
}

TEST_F(SecurityTest, UnreadableMetricsUsersFileIsAnErrorNamingTheFlag) {
  server::GoodputdOptions options;
  options.data_dir = data_.path();
  options.grpc_address = "127.0.0.1:0";
  options.metrics_address = "127.0.0.1:0";
  options.metrics_basic_auth_file = dir_->File("no-such-file");
  auto started = server::Goodputd::Start(options, &clock_);
  ASSERT_FALSE(started.ok());
  EXPECT_EQ(started.status().message().rfind("--metrics_basic_auth_file: ", 0),
            0u)
      << started.status();
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
