#include "util/basic_auth.h"

#include "absl/strings/escaping.h"
#include "gtest/gtest.h"

namespace goodput {
namespace {

TEST(BasicAuthTest, ChecksUsersAndPasswords) {
  auto auth = BasicAuth::Parse("# scrapers\nprom:s3cret\n\nops:a:b\n");
  ASSERT_TRUE(auth.ok()) << auth.status();
  EXPECT_TRUE((*auth)->Check("prom", "s3cret"));
  EXPECT_TRUE((*auth)->Check("ops", "a:b"));  // the first colon splits
  EXPECT_FALSE((*auth)->Check("prom", "s3cre"));
  EXPECT_FALSE((*auth)->Check("nobody", "s3cret"));
}

TEST(BasicAuthTest, ChecksAuthorizationHeaders) {
  auto auth = BasicAuth::Parse("prom:s3cret\n");
  ASSERT_TRUE(auth.ok());
  EXPECT_TRUE(
      (*auth)->CheckHeader("Basic " + absl::Base64Escape("prom:s3cret")));
  EXPECT_FALSE((*auth)->CheckHeader("Basic " + absl::Base64Escape("prom:x")));
  EXPECT_FALSE((*auth)->CheckHeader("Bearer s3cret"));
  EXPECT_FALSE((*auth)->CheckHeader("Basic !!!"));
  EXPECT_FALSE((*auth)->CheckHeader(""));
}

TEST(BasicAuthTest, BadLinesNameTheLine) {
  auto auth = BasicAuth::Parse("prom:ok\nnocolon\n");
  ASSERT_FALSE(auth.ok());
  EXPECT_EQ(auth.status().message(),
            "line 2: want user:password (both non-empty)");
  EXPECT_FALSE(BasicAuth::Parse("# only a comment\n").ok());
  EXPECT_FALSE(
      BasicAuth::Load("--metrics_basic_auth_file", "/nonexistent").ok());
}

}  // namespace
}  // namespace goodput
