// goodputd's /healthz and /readyz on its real metrics port (port 0) over a
// real RocksDB in a temp dir: not ready while it recovers, ready once it
// serves gRPC, not ready again while it shuts down; the probes need no
// basic auth where /metrics does.
#include <cstdlib>
#include <filesystem>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/goodputd.h"
#include "util/testing/http_client.h"

namespace goodput {
namespace {

using ::testing::HasSubstr;

class GoodputdProbesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = ::testing::TempDir() + "goodputd_probes_XXXXXX";
    dir_ = mkdtemp(tmpl.data());
    options_.data_dir = dir_;
    options_.grpc_address = "127.0.0.1:0";
    options_.metrics_address = "127.0.0.1:0";
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // GET `path`; status 0 if the request failed.
  static testing::HttpResult Get(int port, const char* path) {
    auto r = testing::HttpGet(port, path);
    EXPECT_TRUE(r.ok()) << path << ": " << r.status();
    return r.ok() ? *r : testing::HttpResult{};
  }

  std::string dir_;
  server::GoodputdOptions options_;
  FakeClock clock_{1'795'341'600LL * core::kNanosPerSecond};
};

TEST_F(GoodputdProbesTest, NotReadyUntilRecoveredAndServingThenReady) {
  int probed = 0;
  options_.before_recovery = [&probed](int port) {
    testing::HttpResult ready = Get(port, "/readyz");
    EXPECT_EQ(ready.status, 503);
    EXPECT_EQ(ready.body,
              "not ready: recovering the live state from the store\n");
    testing::HttpResult health = Get(port, "/healthz");
    EXPECT_EQ(health.status, 200);
    EXPECT_THAT(health.body, HasSubstr("ok: recovering"));
    testing::HttpResult metrics = Get(port, "/metrics");
    EXPECT_EQ(metrics.status, 503);
    EXPECT_THAT(metrics.body, HasSubstr("recovering"));
    ++probed;
  };
  auto server = server::Goodputd::Start(options_, &clock_);
  ASSERT_TRUE(server.ok()) << server.status();
  EXPECT_EQ(probed, 1);
  const int port = (*server)->metrics_port();
  testing::HttpResult ready = Get(port, "/readyz");
  EXPECT_EQ(ready.status, 200);
  EXPECT_EQ(ready.body, "ready\n");
  EXPECT_EQ(Get(port, "/healthz").body, "ok: serving\n");
  testing::HttpResult metrics = Get(port, "/metrics");
  EXPECT_EQ(metrics.status, 200);
  EXPECT_THAT(metrics.body, HasSubstr("goodput_"));
  (*server)->Shutdown();
  ready = Get(port, "/readyz");
  EXPECT_EQ(ready.status, 503);
  EXPECT_EQ(ready.body, "not ready: shutting down\n");
}

TEST_F(GoodputdProbesTest, ProbesNeedNoBasicAuthButMetricsDo) {
  const std::string auth_file = dir_ + "-auth";
  {
    std::FILE* f = std::fopen(auth_file.c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fputs("prom:s3cret\n", f);
    std::fclose(f);
  }
  options_.metrics_basic_auth_file = auth_file;
  auto server = server::Goodputd::Start(options_, &clock_);
  std::filesystem::remove(auth_file);
  ASSERT_TRUE(server.ok()) << server.status();
  const int port = (*server)->metrics_port();
  EXPECT_EQ(Get(port, "/readyz").status, 200);
  EXPECT_EQ(Get(port, "/healthz").status, 200);
  EXPECT_EQ(Get(port, "/metrics").status, 401);
}

}  // namespace
}  // namespace goodput
