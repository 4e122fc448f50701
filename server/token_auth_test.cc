#include "server/token_auth.h"

#include "gtest/gtest.h"

namespace goodput::server {
namespace {

TEST(TokenAuthTest, MapsTokensToAgents) {
  auto auth = TokenAuth::Parse("# fleet\nhost-a  tok-a\nhost-b\ttok-b\n\n");
  ASSERT_TRUE(auth.ok()) << auth.status();
  EXPECT_EQ((*auth)->AgentFor("tok-a"), "host-a");
  EXPECT_EQ((*auth)->AgentFor("tok-b"), "host-b");
  EXPECT_EQ((*auth)->AgentFor("tok-"), "");
  EXPECT_EQ((*auth)->AgentFor(""), "");
}

TEST(TokenAuthTest, BadFilesNameTheLine) {
  auto one_field = TokenAuth::Parse("host-a tok-a\nhost-b\n");
  ASSERT_FALSE(one_field.ok());
  EXPECT_EQ(one_field.status().message(),
            "line 2: want \"agent_name token [agent_ids=PATTERN,...]\"");
  auto shared = TokenAuth::Parse("host-a tok\nhost-b tok\n");
  ASSERT_FALSE(shared.ok());
  EXPECT_EQ(shared.status().message(),
            "line 2: token of host-b is already used by another agent");
  EXPECT_FALSE(TokenAuth::Parse("# nothing\n").ok());
  auto missing = TokenAuth::Load("/nonexistent/tokens");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("--auth_tokens: cannot read"),
            absl::string_view::npos);
}

TEST(TokenAuthTest, AgentIdPatternsBindTokensToAgentIds) {
  auto auth =
      TokenAuth::Parse("host-a tok-a agent_ids=host-a-*,spare\nhost-b tok-b\n");
  ASSERT_TRUE(auth.ok()) << auth.status();
  const std::vector<std::string>* a = (*auth)->AgentIdPatterns("host-a");
  ASSERT_NE(a, nullptr);
  EXPECT_TRUE(AgentIdMatches(*a, "host-a-1f2e"));
  EXPECT_TRUE(AgentIdMatches(*a, "host-a-"));
  EXPECT_TRUE(AgentIdMatches(*a, "spare"));
  EXPECT_FALSE(AgentIdMatches(*a, "spare2"));  // no '*': the whole id
  EXPECT_FALSE(AgentIdMatches(*a, "host-b-1"));
  EXPECT_FALSE(AgentIdMatches(*a, "host-a"));
  EXPECT_EQ((*auth)->AgentIdPatterns("host-b"), nullptr);
  auto bad = TokenAuth::Parse("host-a tok-a ids=x\n");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(),
            "line 1: third field: want agent_ids=PATTERN,... got \"ids=x\"");
  EXPECT_FALSE(TokenAuth::Parse("host-a tok-a agent_ids=\n").ok());
}

// Refused calls never reach the AuthContext, so none is needed here.
TEST(TokenAuthTest, CountsRefusalsByReason) {
  auto auth = TokenAuth::Parse("host-a tok-a\n");
  ASSERT_TRUE(auth.ok()) << auth.status();
  TokenAuth::OutputMetadata consumed, response;
  auto call = [&](const char* authorization) {
    TokenAuth::InputMetadata metadata;
    if (authorization != nullptr)
      metadata.insert({"authorization", authorization});
    return (*auth)->Process(metadata, nullptr, &consumed, &response);
  };
  EXPECT_EQ(call(nullptr).error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(call("Basic dTpw").error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(call("Bearer tok-b").error_code(),
            grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(call("Bearer tok-x").error_code(),
            grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ((*auth)->refused(TokenAuth::kMissingToken), 1);
  EXPECT_EQ((*auth)->refused(TokenAuth::kMalformedToken), 1);
  EXPECT_EQ((*auth)->refused(TokenAuth::kUnknownToken), 2);
  EXPECT_EQ((*auth)->refused(), 4);
  EXPECT_STREQ(TokenAuth::ReasonName(TokenAuth::kUnknownToken),
               "unknown_token");
}

}  // namespace
}  // namespace goodput::server
