#include "util/flag_file.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "util/flags.h"

namespace goodput {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// A flags file in a fresh temp directory.
class FlagFileTest : public ::testing::Test {
 protected:
  FlagFileTest() {
    std::string tmpl = ::testing::TempDir() + "flagfile_XXXXXX";
    dir_ = mkdtemp(tmpl.data());
    path_ = dir_ + "/goodputd.flags";
    parser_.AddFlagFile();
    parser_.AddString("data_dir", "DIR", &data_dir_, "store");
    parser_.AddString("grpc_address", "HOST:PORT", &grpc_, "gRPC");
    parser_.AddBool("fsync", &fsync_, "sync");
  }
  ~FlagFileTest() override {
    std::remove(path_.c_str());
    rmdir(dir_.c_str());
  }
  void Write(const std::string& text) {
    std::FILE* f = std::fopen(path_.c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fputs(text.c_str(), f);
    std::fclose(f);
  }
  absl::Status Parse(std::vector<std::string> args) {
    return parser_.Parse(args, &positional_);
  }

  std::string dir_, path_;
  FlagParser parser_;
  std::optional<std::string> data_dir_, grpc_;
  bool fsync_ = false;
  std::vector<std::string> positional_;
};

TEST_F(FlagFileTest, ReadsFlagsSkipsCommentsAndTheCommandLineWins) {
  Write(
      "# goodputd\n"
      "\n"
      "--data_dir=/var/lib/goodputd\n"
      "  --grpc_address 0.0.0.0:7700   \n"
      "   # an indented comment\n"
      "--fsync\n");
  ASSERT_TRUE(Parse({"--flagfile=" + path_}).ok());
  EXPECT_EQ(data_dir_, "/var/lib/goodputd");
  EXPECT_EQ(grpc_, "0.0.0.0:7700");
  EXPECT_TRUE(fsync_);
  ASSERT_TRUE(Parse({"--grpc_address=127.0.0.1:1", "--flagfile", path_,
                     "--fsync=false"})
                  .ok());
  EXPECT_EQ(grpc_, "127.0.0.1:1") << "the command line overrides the file";
  EXPECT_FALSE(fsync_);
  EXPECT_EQ(data_dir_, "/var/lib/goodputd");
}

TEST_F(FlagFileTest, AValueKeepsItsHash) {
  Write("--data_dir=/srv/a#b\n");
  ASSERT_TRUE(Parse({"--flagfile=" + path_}).ok());
  EXPECT_EQ(data_dir_, "/srv/a#b");
}

TEST_F(FlagFileTest, ErrorsNameTheFileTheLineAndTheFlag) {
  Write("# ok\n--data_dir=/x\n--data_dri=/y\n");
  absl::Status s = Parse({"--flagfile=" + path_});
  EXPECT_TRUE(absl::IsInvalidArgument(s));
  EXPECT_EQ(s.message(), path_ + ":3: unknown flag --data_dri");
  Write("--fsync=maybe\n");
  s = Parse({"--flagfile=" + path_});
  EXPECT_EQ(s.message(),
            path_ + ":1: flag --fsync takes true or false, not 'maybe'");
  Write("\ndata_dir=/x\n");
  s = Parse({"--flagfile=" + path_});
  EXPECT_THAT(s.message(),
              HasSubstr(path_ + ":2: want one flag such as "
                                "--name=value, got \"data_dir=/x\""));
  Write("--flagfile=/etc/other\n");
  s = Parse({"--flagfile=" + path_});
  EXPECT_EQ(s.message(), path_ + ":1: --flagfile cannot be nested");
}

TEST_F(FlagFileTest, AMissingFileOrValueOrASecondFlagFileIsAnError) {
  absl::Status s = Parse({"--flagfile=" + dir_ + "/none"});
  EXPECT_THAT(s.message(), HasSubstr("--flagfile: cannot read " + dir_));
  EXPECT_THAT(Parse({"--flagfile"}).message(), HasSubstr("needs a value"));
  Write("--fsync\n");
  EXPECT_THAT(Parse({"--flagfile=" + path_, "--flagfile=" + path_}).message(),
              HasSubstr("more than once"));
}

TEST_F(FlagFileTest, WithoutAddFlagFileItIsAnUnknownFlag) {
  FlagParser plain;
  std::vector<std::string> positional;
  EXPECT_EQ(plain.Parse({"--flagfile=x"}, &positional).message(),
            "unknown flag --flagfile");
  EXPECT_THAT(parser_.Help(), HasSubstr("--flagfile=PATH"));
}

TEST(ParseFlagFileTest, KeepsLineNumbersAndJoinsSpacedValues) {
  auto lines = ParseFlagFile("f", "#c\n\n--a=1\n--b 2\n--c\n");
  ASSERT_TRUE(lines.ok()) << lines.status();
  ASSERT_EQ(lines->size(), 3u);
  EXPECT_EQ((*lines)[0].line, 3);
  EXPECT_EQ((*lines)[0].arg, "--a=1");
  EXPECT_EQ((*lines)[1].arg, "--b=2");
  EXPECT_EQ((*lines)[2].line, 5);
  EXPECT_EQ((*lines)[2].arg, "--c");
}

TEST(ExpandFlagFileTest, WithoutAFlagFileArgsAreUnchanged) {
  auto out =
      ExpandFlagFile({"--x=1", "--", "--flagfile=y"},
                     [](const std::string&) { return absl::OkStatus(); });
  ASSERT_TRUE(out.ok());
  EXPECT_THAT(*out, ElementsAre("--x=1", "--", "--flagfile=y"));
}

}  // namespace
}  // namespace goodput
