// goodputd's flags through the real binary (issue 13 item 4): every number
// and duration flag is parsed by util/flag_values, so a bad value exits 2
// with one line naming the flag, what it wants and what it got, before
// anything is opened.
#include <stdlib.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/subprocess.h"

namespace goodput {
namespace {

using ::testing::HasSubstr;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

TEST(GoodputdFlagsTest, BadNumbersAndDurationsNameTheFlag) {
  std::string dir = ::testing::TempDir() + "goodputd_flags_XXXXXX";
  ASSERT_NE(mkdtemp(dir.data()), nullptr);
  struct Case {
    std::string flag;
    std::string error;
  };
  int n = 0;
  for (const Case& c : std::vector<Case>{
           {"--retention=0s", "--retention: want a duration of at least 1ns"},
           {"--state_every=soon", "--state_every: want a duration"},
           {"--state_every_events=0",
            "--state_every_events: want an integer >= 1, got \"0\""},
           {"--max_job_series=-1",
            "--max_job_series: want an integer >= 0, got \"-1\""},
           {"--ended_job_grace=-5m", "--ended_job_grace: want a duration"},
           {"--lateness=5", "--lateness: want a duration"},
           {"--stall_after=1d", "--stall_after: want a duration"},
           {"--shutdown_grace=-1s", "--shutdown_grace: want a duration"},
           {"--cluster=nats://127.0.0.1:1 --cluster_lease_ttl=500ms",
            "--cluster_lease_ttl: want a duration of at least 1s"},
           {"--cluster=nats://127.0.0.1:1 --cluster_partitions=0",
            "--cluster_partitions: want an integer in [1, "},
           {"--shard=3/3", "--shard: \"3/3\": want I/N with 0 <= I < N"},
           {"--shard=1", "--shard: \"1\": want I/N with 0 <= I < N"},
           {"--cluster=nats://127.0.0.1:1 --shard=0/2",
            "--shard: not with --cluster"},
       }) {
    std::vector<std::string> argv = {GOODPUTD_PATH, "--data_dir=" + dir + "/d"};
    for (size_t at = 0, end; at < c.flag.size(); at = end + 1) {
      end = c.flag.find(' ', at);
      if (end == std::string::npos) end = c.flag.size();
      argv.push_back(c.flag.substr(at, end - at));
    }
    const std::string log =
        dir + "/goodputd_flags_" + std::to_string(++n) + ".log";
    std::string out;
    EXPECT_EQ(testing::RunCapture(argv, log, &out), 2) << c.flag;
    const std::string err = ReadFile(log);
    EXPECT_THAT(err, HasSubstr("goodputd: " + c.error)) << c.flag;
    EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace goodput
