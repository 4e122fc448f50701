#include "util/http_server.h"

#include <sys/socket.h>
#include <unistd.h>

#include <memory>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "util/testing/http_client.h"

namespace goodput {
namespace {

using ::testing::HasSubstr;
using testing::HttpGet;
using testing::HttpRequest;
using ::testing::Not;

std::unique_ptr<HttpServer> StartEcho() {
  auto server = HttpServer::Start(
      "127.0.0.1:0", [](absl::string_view method, absl::string_view path) {
        if (path == "/missing") return HttpResponse{404, "text/plain", "no\n"};
        return HttpResponse{200, "text/plain",
                            absl::StrCat(method, " ", path, "\n")};
      });
  EXPECT_TRUE(server.ok()) << server.status();
  return server.ok() ? *std::move(server) : nullptr;
}

TEST(HttpServerTest, ServesTheHandlersAnswer) {
  auto server = StartEcho();
  ASSERT_GT(server->port(), 0);
  auto r = HttpGet(server->port(), "/metrics?x=1");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->body, "GET /metrics\n");
  auto missing = HttpGet(server->port(), "/missing");
  ASSERT_TRUE(missing.ok());
  EXPECT_EQ(missing->status, 404);
}

TEST(HttpServerTest, GarbageAndSilentClientsDoNotStopIt) {
  auto server = StartEcho();
  auto bad = HttpRequest(server->port(), "\x01\x02 garbage\r\n\r\n");
  ASSERT_TRUE(bad.ok()) << bad.status();
  EXPECT_EQ(bad->status, 400);
  // Clients that connect and hang up without a word.
  for (int i = 0; i < 3; ++i) {
    auto silent = HttpRequest(server->port(), "");
    EXPECT_FALSE(silent.ok());  // no answer to no request
  }
  auto r = HttpGet(server->port(), "/healthz");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->body, "GET /healthz\n");
}

TEST(HttpServerTest, HeaderSaysLengthAndClose) {
  auto server = StartEcho();
  auto r = HttpRequest(server->port(), "GET /a HTTP/1.1\r\nHost: x\r\n\r\n");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->body, "GET /a\n");
}

TEST(HttpServerTest, BadAddressesAreClearErrors) {
  auto no_port = HttpServer::Start("localhost", nullptr);
  EXPECT_TRUE(absl::IsInvalidArgument(no_port.status()));
  EXPECT_THAT(no_port.status().message(), HasSubstr("HOST:PORT"));
  auto bad_port = HttpServer::Start("127.0.0.1:99999", nullptr);
  EXPECT_TRUE(absl::IsInvalidArgument(bad_port.status()));
  auto server = StartEcho();
  auto taken =
      HttpServer::Start(absl::StrCat("127.0.0.1:", server->port()), nullptr);
  EXPECT_FALSE(taken.ok());
  EXPECT_THAT(taken.status().message(), HasSubstr("listen on"));
}

TEST(HttpServerTest, EmptyHostMeansLoopback) {
  auto server = HttpServer::Start(
      ":0",
      [](absl::string_view, absl::string_view) { return HttpResponse{}; });
  ASSERT_TRUE(server.ok()) << server.status();
  auto r = HttpGet((*server)->port(), "/");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status, 200);
}

TEST(HttpServerTest, BasicAuthGuardsEveryPath) {
  auto auth = BasicAuth::Parse("prom:s3cret\n");
  ASSERT_TRUE(auth.ok());
  auto server = HttpServer::Start(
      "127.0.0.1:0",
      [](absl::string_view, absl::string_view) {
        return HttpResponse{200, "text/plain", "secret metrics\n"};
      },
      *auth);
  ASSERT_TRUE(server.ok()) << server.status();
  const int port = (*server)->port();
  auto anonymous = HttpGet(port, "/metrics");
  ASSERT_TRUE(anonymous.ok()) << anonymous.status();
  EXPECT_EQ(anonymous->status, 401);
  EXPECT_THAT(anonymous->body, Not(HasSubstr("secret")));
  auto request = [port](absl::string_view user_pass) {
    return HttpRequest(port,
                       absl::StrCat("GET /metrics HTTP/1.0\r\n"
                                    "authorization: Basic ",
                                    absl::Base64Escape(user_pass), "\r\n\r\n"));
  };
  auto wrong = request("prom:guess");
  ASSERT_TRUE(wrong.ok());
  EXPECT_EQ(wrong->status, 401);
  auto right = request("prom:s3cret");
  ASSERT_TRUE(right.ok());
  EXPECT_EQ(right->status, 200);
  EXPECT_EQ(right->body, "secret metrics\n");
}

TEST(HttpServerTest, OpenPathsNeedNoAuthButOnlyThey) {
  auto auth = BasicAuth::Parse("prom:s3cret\n");
  ASSERT_TRUE(auth.ok());
  auto server = HttpServer::Start(
      "127.0.0.1:0",
      [](absl::string_view, absl::string_view path) {
        return HttpResponse{200, "text/plain", absl::StrCat(path, "\n")};
      },
      *auth, {"/healthz", "/readyz"});
  ASSERT_TRUE(server.ok()) << server.status();
  const int port = (*server)->port();
  for (const char* open : {"/healthz", "/readyz?verbose=1"}) {
    auto r = HttpGet(port, open);
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(r->status, 200) << open;
  }
  for (const char* guarded : {"/metrics", "/healthz/x", "/readyzz"}) {
    auto r = HttpGet(port, guarded);
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(r->status, 401) << guarded;
  }
}

}  // namespace
}  // namespace goodput
