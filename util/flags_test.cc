#include "util/flags.h"

#include <optional>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace goodput {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

class FlagParserTest : public ::testing::Test {
 protected:
  FlagParserTest() {
    parser_.AddBool("json", &json_, "print JSON");
    parser_.AddString("as_of", "T", &as_of_, "as-of time");
    parser_.AddBool("help", &help_, "help");
  }
  absl::Status Parse(std::vector<std::string> args) {
    return parser_.Parse(args, &positional_);
  }

  FlagParser parser_;
  bool json_ = false;
  bool help_ = false;
  std::optional<std::string> as_of_;
  std::vector<std::string> positional_;
};

TEST_F(FlagParserTest, ParsesBothValueFormsAndSwitches) {
  ASSERT_TRUE(Parse({"a.jsonl", "--json", "--as_of=T1", "-", "b"}).ok());
  EXPECT_TRUE(json_);
  EXPECT_EQ(as_of_, "T1");
  EXPECT_THAT(positional_, ElementsAre("a.jsonl", "-", "b"));
  ASSERT_TRUE(Parse({"--as_of", "T2", "--json=false"}).ok());
  EXPECT_EQ(as_of_, "T2");
  EXPECT_FALSE(json_);
}

TEST_F(FlagParserTest, UnsetStringStaysUnset) {
  ASSERT_TRUE(Parse({"x"}).ok());
  EXPECT_FALSE(as_of_.has_value());
}

TEST_F(FlagParserTest, EmptyValueIsSet) {
  ASSERT_TRUE(Parse({"--as_of="}).ok());
  EXPECT_EQ(as_of_, "");
}

TEST_F(FlagParserTest, DashDashEndsFlags) {
  ASSERT_TRUE(Parse({"--", "--json", "-x"}).ok());
  EXPECT_FALSE(json_);
  EXPECT_THAT(positional_, ElementsAre("--json", "-x"));
}

TEST_F(FlagParserTest, ShortHelp) {
  ASSERT_TRUE(Parse({"-h"}).ok());
  EXPECT_TRUE(help_);
}

TEST_F(FlagParserTest, Errors) {
  struct Case {
    std::vector<std::string> args;
    const char* message;
  };
  const Case cases[] = {
      {{"--jsn"}, "unknown flag --jsn"},
      {{"--jsn=1"}, "unknown flag --jsn"},
      {{"-x"}, "unknown flag -x"},
      {{"--as_of"}, "flag --as_of needs a value: --as_of=T"},
      {{"--json=yes"}, "flag --json takes true or false, not 'yes'"},
  };
  for (const Case& c : cases) {
    absl::Status status = Parse(c.args);
    EXPECT_FALSE(status.ok()) << c.args[0];
    EXPECT_EQ(status.message(), c.message);
  }
}

TEST(FlagParserStopTest, StopsAtFirstPositional) {
  bool help = false;
  FlagParser parser(/*stop_at_positional=*/true);
  parser.AddBool("help", &help, "help");
  std::vector<std::string> rest;
  ASSERT_TRUE(parser.Parse({"replay", "--json", "--help"}, &rest).ok());
  EXPECT_FALSE(help);
  EXPECT_THAT(rest, ElementsAre("replay", "--json", "--help"));
}

TEST(FlagParserHelpTest, AlignsFlags) {
  bool b = false;
  std::optional<std::string> s;
  FlagParser parser;
  parser.AddBool("json", &b, "print JSON");
  parser.AddString("stall_after", "D", &s, "stall time");
  EXPECT_EQ(parser.Help(),
            "  --json           print JSON\n"
            "  --stall_after=D  stall time\n");
}

TEST(FlagParserEmptyTest, NoArgs) {
  FlagParser parser;
  std::vector<std::string> rest;
  EXPECT_TRUE(parser.Parse({}, &rest).ok());
  EXPECT_THAT(rest, IsEmpty());
  EXPECT_THAT(parser.Help(), IsEmpty());
}

}  // namespace
}  // namespace goodput
