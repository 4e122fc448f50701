#include "util/secret_file.h"

#include <fstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace goodput {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

std::string Write(const std::string& name, const std::string& text) {
  std::string path = ::testing::TempDir() + "/" + name;
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

TEST(SecretFileTest, ReturnsTheWholeFileByteForByte) {
  const std::string text("tok\0en\nline 2\n", 14);
  absl::StatusOr<std::string> got =
      ReadSecretFile("--auth_token_file", Write("token", text));
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(*got, text);
}

TEST(SecretFileTest, AMissingFileNamesTheFlagThePathAndWhy) {
  absl::Status s = ReadSecretFile("--tls_key", "/nonexistent/key.pem").status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(),
              AllOf(HasSubstr("--tls_key: cannot read /nonexistent/key.pem"),
                    HasSubstr("No such file")));
}

TEST(SecretFileTest, AnEmptyFileIsAnError) {
  const std::string path = Write("empty", "");
  EXPECT_THAT(ReadSecretFile("--auth_tokens", path).status().message(),
              HasSubstr("--auth_tokens: " + path + " is empty"));
}

}  // namespace
}  // namespace goodput
