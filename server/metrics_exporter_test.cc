// A real exporter on a loopback port 0, scraped over HTTP:
// it serves the collected families, and with basic auth refuses scrapes
// without the right user and password (401, no metrics).
#include "server/metrics_exporter.h"

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "util/testing/http_client.h"

namespace goodput::server {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

std::vector<core::MetricFamilyData> OneCounter() {
  auto f = core::NewFamily("goodput_test_total", "A test counter.",
                           core::MetricKind::kCounter);
  core::AddSample(&f, {{"limit", "max_jobs"}}, 7);
  return {f};
}

// GET /metrics as `user_pass` ("user:password"; empty sends none).
testing::HttpResult Scrape(int port, const std::string& user_pass) {
  std::string request = "GET /metrics HTTP/1.0\r\n";
  if (!user_pass.empty()) {
    absl::StrAppend(&request, "Authorization: Basic ",
                    absl::Base64Escape(user_pass), "\r\n");
  }
  auto result = testing::HttpRequest(port, absl::StrCat(request, "\r\n"));
  EXPECT_TRUE(result.ok()) << result.status();
  return result.ok() ? *result : testing::HttpResult{};
}

TEST(MetricsExporterTest, ServesTheCollectedFamiliesWithoutAuth) {
  auto exporter = MetricsExporter::Start("127.0.0.1:0", OneCounter);
  ASSERT_TRUE(exporter.ok()) << exporter.status();
  testing::HttpResult scrape = Scrape((*exporter)->port(), "");
  EXPECT_EQ(scrape.status, 200);
  EXPECT_THAT(scrape.body,
              HasSubstr("goodput_test_total{limit=\"max_jobs\"} 7"));
}

TEST(MetricsExporterTest, BasicAuthRefusesWrongOrMissingCredentials) {
  auto auth = BasicAuth::Parse("prom:s3cret\nother:pw\n");
  ASSERT_TRUE(auth.ok()) << auth.status();
  auto exporter = MetricsExporter::Start("127.0.0.1:0", OneCounter, *auth);
  ASSERT_TRUE(exporter.ok()) << exporter.status();
  const int port = (*exporter)->port();
  for (const char* wrong :
       {"", "prom:guess", "prom:", "nobody:s3cret", "other:s3cret"}) {
    testing::HttpResult refused = Scrape(port, wrong);
    EXPECT_EQ(refused.status, 401) << wrong;
    EXPECT_THAT(refused.body, Not(HasSubstr("goodput_test_total"))) << wrong;
  }
  for (const char* right : {"prom:s3cret", "other:pw"}) {
    testing::HttpResult scrape = Scrape(port, right);
    EXPECT_EQ(scrape.status, 200) << right;
    EXPECT_THAT(scrape.body, HasSubstr("goodput_test_total")) << right;
  }
}

TEST(MetricsExporterTest, AnAddressInUseIsAnErrorNamingTheFlag) {
  auto first = MetricsExporter::Start("127.0.0.1:0", OneCounter);
  ASSERT_TRUE(first.ok()) << first.status();
  auto second = MetricsExporter::Start(
      absl::StrCat("127.0.0.1:", (*first)->port()), OneCounter);
  ASSERT_FALSE(second.ok());
  EXPECT_THAT(std::string(second.status().message()),
              HasSubstr("--metrics_address: cannot serve metrics on"));
}

TEST(MetricsExporterTest, AFailedCollectIs503WithItsMessage) {
  auto exporter = MetricsExporter::Start(
      "127.0.0.1:0",
      []() -> absl::StatusOr<std::vector<core::MetricFamilyData>> {
        return absl::UnavailableError("recovering the live state");
      });
  ASSERT_TRUE(exporter.ok()) << exporter.status();
  testing::HttpResult scrape = Scrape((*exporter)->port(), "");
  EXPECT_EQ(scrape.status, 503);
  EXPECT_EQ(scrape.body, "recovering the live state\n");
}

TEST(MetricsExporterTest, ProbesAnswerWithoutAuthAndMetricsStillNeedIt) {
  auto auth = BasicAuth::Parse("prom:s3cret\n");
  ASSERT_TRUE(auth.ok()) << auth.status();
  auto exporter = MetricsExporter::Start(
      "127.0.0.1:0", OneCounter, *auth, [](absl::string_view path) {
        return HttpResponse{path == "/readyz" ? 503 : 200, "text/plain",
                            absl::StrCat("probe ", path, "\n")};
      });
  ASSERT_TRUE(exporter.ok()) << exporter.status();
  const int port = (*exporter)->port();
  auto health = testing::HttpGet(port, "/healthz");
  ASSERT_TRUE(health.ok()) << health.status();
  EXPECT_EQ(health->status, 200);
  EXPECT_EQ(health->body, "probe /healthz\n");
  auto ready = testing::HttpGet(port, "/readyz");
  ASSERT_TRUE(ready.ok()) << ready.status();
  EXPECT_EQ(ready->status, 503);
  EXPECT_EQ(ready->body, "probe /readyz\n");
  EXPECT_EQ(Scrape(port, "").status, 401);
}

TEST(MetricsExporterTest, WithoutAProbeTheProbePathsAreNotFound) {
  auto exporter = MetricsExporter::Start("127.0.0.1:0", OneCounter);
  ASSERT_TRUE(exporter.ok()) << exporter.status();
  auto health = testing::HttpGet((*exporter)->port(), "/healthz");
  ASSERT_TRUE(health.ok()) << health.status();
  EXPECT_EQ(health->status, 404);
}

}  // namespace
}  // namespace goodput::server
