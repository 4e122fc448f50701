#include "agent/agent_flags.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace goodput::agent {
namespace {

using ::testing::HasSubstr;

const std::vector<std::string> kRequired = {"--server=127.0.0.1:7700",
                                            "--socket=/run/goodput.sock",
                                            "--spool_dir=/var/spool/goodput"};

std::vector<std::string> With(std::vector<std::string> extra) {
  std::vector<std::string> args = kRequired;
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

TEST(AgentFlagsTest, RequiredFlagsAndDefaults) {
  auto f = ParseAgentFlags(kRequired);
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(f->server, "127.0.0.1:7700");
  EXPECT_EQ(f->socket_path, "/run/goodput.sock");
  EXPECT_EQ(f->spool_dir, "/var/spool/goodput");
  EXPECT_EQ(f->metrics_address, "127.0.0.1:7702");  // loopback by default
  EXPECT_EQ(f->batch_events, 500u);
  EXPECT_EQ(f->batch_bytes, uint64_t{1} << 20);
  EXPECT_EQ(f->batch_delay, absl::Milliseconds(200));
  EXPECT_EQ(f->max_spool_bytes, uint64_t{1} << 30);
  EXPECT_EQ(f->chips, 0);
  EXPECT_FALSE(f->help);
}

TEST(AgentFlagsTest, EveryFlagParses) {
  auto f = ParseAgentFlags(With(
      {"--host=h1", "--metrics_address", "127.0.0.1:9000", "--chips=4",
       "--accelerator=tpu-v5p", "--heartbeat_interval=30s", "--batch_events=10",
       "--batch_bytes=256KiB", "--batch_delay=50ms", "--max_spool_bytes=64MiB",
       "--max_in_flight=2", "--max_line_bytes=4KiB", "--max_connections=9"}));
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(f->host, "h1");
  EXPECT_EQ(f->metrics_address, "127.0.0.1:9000");
  EXPECT_EQ(f->chips, 4);
  EXPECT_EQ(f->accelerator, "tpu-v5p");
  EXPECT_EQ(f->heartbeat_interval, absl::Seconds(30));
  EXPECT_EQ(f->batch_events, 10u);
  EXPECT_EQ(f->batch_bytes, uint64_t{256} << 10);
  EXPECT_EQ(f->batch_delay, absl::Milliseconds(50));
  EXPECT_EQ(f->max_spool_bytes, uint64_t{64} << 20);
  EXPECT_EQ(f->max_in_flight, 2u);
  EXPECT_EQ(f->max_line_bytes, 4096u);
  EXPECT_EQ(f->max_connections, 9u);
}

TEST(AgentFlagsTest, ErrorsNameTheFlag) {
  struct Case {
    std::vector<std::string> args;
    const char* message;
  } cases[] = {
      {With({"--bogus=1"}), "unknown flag --bogus"},
      {{"--socket=/s", "--spool_dir=/d"}, "--server: required"},
      {{"--server=a:1", "--spool_dir=/d"}, "--socket: required"},
      {{"--server=a:1", "--socket=/s"}, "--spool_dir: required"},
      {With({"--batch_delay=soon"}),
       "--batch_delay: want a duration of at least 1ns"},
      {With({"--batch_delay=-1s"}),
       "--batch_delay: want a duration of at least 1ns"},
      {With({"--batch_events=0"}),
       "--batch_events: want an integer >= 1, got \"0\""},
      {With({"--max_spool_bytes=1XB"}),
       "--max_spool_bytes: want a positive size"},
      {With({"--batch_bytes=0"}),
       "--batch_bytes: want a positive size such as 1GiB or 65536, got \"0\""},
      {With({"--chips=4"}), "--accelerator: required with --chips"},
      {With({"--accelerator=tpu-v4"}), "--chips: required with"},
      {With({"--chips=-2", "--accelerator=x"}),
       "--chips: want an integer >= 1, got \"-2\""},
      {With({"stray"}), "unexpected argument \"stray\""},
      {With({"--host"}), "--host: needs a value"},
      {With({"--tail=/l/*.log"}), "--tail and --log_profile: give both"},
      {With({"--log_profile=megatron"}), "--tail and --log_profile"},
      {With({"--tail=/l/*", "--log_profile=x", "--tail_format=json"}),
       "--tail_format: must be plain or cri, got \"json\""},
  };
  for (const Case& c : cases) {
    auto f = ParseAgentFlags(c.args);
    ASSERT_FALSE(f.ok()) << c.message;
    EXPECT_TRUE(absl::IsInvalidArgument(f.status()));
    EXPECT_THAT(f.status().message(), HasSubstr(c.message));
    EXPECT_EQ(f.status().message().find('\n'), absl::string_view::npos);
  }
}

TEST(AgentFlagsTest, HelpNeedsNoOtherFlagAndListsEveryFlag) {
  auto f = ParseAgentFlags({"--help"});
  ASSERT_TRUE(f.ok());
  EXPECT_TRUE(f->help);
  EXPECT_TRUE(ParseAgentFlags({"-h"})->help);
  const std::string usage = AgentUsage();
  for (const char* flag :
       {"--server=", "--socket=", "--spool_dir=", "--host=",
        "--metrics_address=", "--chips=", "--accelerator=",
        "--heartbeat_interval=", "--batch_events=", "--batch_bytes=",
        "--batch_delay=", "--max_spool_bytes=", "--help"}) {
    EXPECT_THAT(usage, HasSubstr(flag));
  }
}

TEST(AgentFlagsTest, VersionNeedsNoOtherFlag) {
  auto f = ParseAgentFlags({"--version"});
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_TRUE(f->version);
  EXPECT_FALSE(f->help);
  EXPECT_THAT(AgentUsage(), HasSubstr("--version"));
}

// A flags file in a temp directory, removed afterwards.
class AgentFlagFileTest : public ::testing::Test {
 protected:
  AgentFlagFileTest() {
    std::string tmpl = ::testing::TempDir() + "agentflags_XXXXXX";
    dir_ = mkdtemp(tmpl.data());
    path_ = dir_ + "/agent.flags";
  }
  ~AgentFlagFileTest() override {
    std::remove(path_.c_str());
    rmdir(dir_.c_str());
  }
  void Write(const std::string& text) {
    std::FILE* f = std::fopen(path_.c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fputs(text.c_str(), f);
    std::fclose(f);
  }
  std::string dir_, path_;
};

TEST_F(AgentFlagFileTest, TheFileGivesFlagsAndTheCommandLineOverrides) {
  Write(
      "# goodput-agent\n"
      "--server=10.0.0.1:7700\n"
      "--socket=/run/goodput-agent/agent.sock\n"
      "--spool_dir /var/lib/goodput-agent\n"
      "--batch_events=100\n");
  auto f = ParseAgentFlags({"--flagfile=" + path_, "--batch_events=7"});
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(f->server, "10.0.0.1:7700");
  EXPECT_EQ(f->spool_dir, "/var/lib/goodput-agent");
  EXPECT_EQ(f->batch_events, 7u) << "the command line overrides the file";
}

TEST_F(AgentFlagFileTest, ErrorsNameTheFileLineAndFlag) {
  Write("--server=10.0.0.1:7700\n\n--spool_dri=/x\n");
  auto f = ParseAgentFlags({"--flagfile=" + path_});
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.status().message(), path_ + ":3: unknown flag --spool_dri");
  Write("--batch_events=many\n");
  f = ParseAgentFlags(With({"--flagfile", path_}));
  ASSERT_FALSE(f.ok());
  EXPECT_THAT(f.status().message(),
              HasSubstr(path_ + ":1: --batch_events: want an integer"));
  Write("socket=/x\n");
  f = ParseAgentFlags(With({"--flagfile", path_}));
  ASSERT_FALSE(f.ok());
  EXPECT_THAT(f.status().message(), HasSubstr(path_ + ":1: want one flag"));
}

TEST(AgentFlagsTest, ParseBytesUnits) {
  EXPECT_EQ(*ParseBytes("1GiB"), uint64_t{1} << 30);
  EXPECT_EQ(*ParseBytes("3KiB"), 3072u);
  EXPECT_EQ(*ParseBytes("10MB"), 10000000u);
  EXPECT_EQ(*ParseBytes("4096"), 4096u);
  EXPECT_EQ(*ParseBytes("7B"), 7u);
  EXPECT_FALSE(ParseBytes("0").ok());
  EXPECT_FALSE(ParseBytes("GiB").ok());
  EXPECT_FALSE(ParseBytes("-5MiB").ok());
  EXPECT_FALSE(ParseBytes("99999999999999999999TiB").ok());
}

}  // namespace
}  // namespace goodput::agent
