// Tests of the goodput-agent binary as a process: the command-line
// contract (SPEC section 6), SIGTERM and SIGKILL.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "agent/spool.h"
#include "agent/testing/test_ingest_server.h"
#include "agent/testing/test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace goodput::agent {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;
using testing::StepLine;
using testing::WaitFor;

constexpr absl::Duration kTimeout = absl::Seconds(30);

// A running goodput-agent with its stdout and stderr on pipes.
struct Process {
  pid_t pid = -1;
  int out = -1;
  int err = -1;
};

Process Spawn(const std::vector<std::string>& args) {
  // Everything the child needs is built before fork(): the parent has
  // threads (gRPC), so the child may only call async-signal-safe functions.
  std::string path = GOODPUT_AGENT_PATH;
  std::vector<std::string> copy = args;
  std::vector<char*> argv = {path.data()};
  for (std::string& a : copy) argv.push_back(a.data());
  argv.push_back(nullptr);
  int out[2], err[2];
  if (::pipe2(out, O_CLOEXEC) != 0 || ::pipe2(err, O_CLOEXEC) != 0) return {};
  pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(out[1], 1);  // dup2 clears O_CLOEXEC on the copies
    ::dup2(err[1], 2);
    ::execv(path.c_str(), argv.data());
    ::_exit(127);
  }
  ::close(out[1]);
  ::close(err[1]);
  return {pid, out[0], err[0]};
}

// Reads `fd` until EOF.
std::string ReadAll(int fd) {
  std::string data;
  char buf[4096];
  ssize_t n;
  while ((n = ::read(fd, buf, sizeof(buf))) > 0) data.append(buf, n);
  ::close(fd);
  return data;
}

// Reads `fd` until a line containing `marker` (or the deadline).
std::string ReadUntil(int fd, absl::string_view marker) {
  std::string data;
  const absl::Time deadline = absl::Now() + kTimeout;
  while (!absl::StrContains(data, marker) && absl::Now() < deadline) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 100) <= 0) continue;
    char buf[4096];
    ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n <= 0) break;
    data.append(buf, n);
  }
  return data;
}

int Wait(pid_t pid) {
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  return 128 + WTERMSIG(status);
}

// The value of the metric line starting with `name ` in /metrics.
double Metric(int port, absl::string_view name) {
  auto r = testing::HttpGet(port, "/metrics");
  if (!r.ok()) return -1;
  for (absl::string_view line : absl::StrSplit(r->body, '\n')) {
    if (absl::ConsumePrefix(&line, absl::StrCat(name, " "))) {
      double v = -1;
      return absl::SimpleAtod(line, &v) ? v : -1;
    }
  }
  return -1;
}

TEST(AgentBinaryTest, HelpPrintsUsageAndExitsZero) {
  Process p = Spawn({"--help"});
  const std::string out = ReadAll(p.out);
  ReadAll(p.err);
  EXPECT_EQ(Wait(p.pid), 0);
  EXPECT_THAT(out, StartsWith("usage: goodput-agent --server=HOST:PORT"));
  EXPECT_THAT(out, HasSubstr("--spool_dir=DIR"));
}

TEST(AgentBinaryTest, BadFlagIsOneStderrLineAndExitTwo) {
  for (const std::vector<std::string>& args :
       std::vector<std::vector<std::string>>{
           {"--server=a:1", "--socket=/s", "--spool_dir=/d", "--nope"},
           {"--socket=/s", "--spool_dir=/d"},
           {"--server=a:1", "--socket=/s", "--spool_dir=/d",
            "--batch_delay=later"}}) {
    Process p = Spawn(args);
    ReadAll(p.out);
    const std::string err = ReadAll(p.err);
    EXPECT_EQ(Wait(p.pid), 2);
    EXPECT_THAT(err, StartsWith("goodput-agent: "));
    EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
  }
}

class RunningAgentTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // A port with nothing on it: the agent keeps everything spooled.
    ASSERT_TRUE(server_.Start().ok());
    server_.Stop();
  }

  // Starts the agent and returns its metrics port (from its start line).
  int Start(const std::vector<std::string>& extra) {
    std::vector<std::string> args = {
        absl::StrCat("--server=", server_.address()),
        absl::StrCat("--socket=", tmp_.File("a.sock")),
        absl::StrCat("--spool_dir=", tmp_.File("spool")),
        "--metrics_address=127.0.0.1:0"};
    args.insert(args.end(), extra.begin(), extra.end());
    process_ = Spawn(args);
    const std::string log = ReadUntil(process_.err, "metrics port ");
    const size_t at = log.find("metrics port ");
    int port = 0;
    if (at == std::string::npos ||
        !absl::SimpleAtoi(log.substr(at + 13, log.find('\n', at) - at - 13),
                          &port)) {
      ADD_FAILURE() << "no start line: " << log;
    }
    return port;
  }

  void Send(const std::string& data) {
    auto fd = testing::ConnectUnix(tmp_.File("a.sock"));
    ASSERT_TRUE(fd.ok()) << fd.status();
    ASSERT_TRUE(testing::SendAll(*fd, data));
    ::close(*fd);
  }

  std::vector<v1::Event> SpooledEvents() {
    auto spool = Spool::Open({tmp_.File("spool"), uint64_t{1} << 30});
    EXPECT_TRUE(spool.ok()) << spool.status();
    std::vector<v1::Event> events;
    if (!spool.ok()) return events;
    for (uint64_t seq : (*spool)->Pending()) {
      auto batch = (*spool)->Read(seq);
      EXPECT_TRUE(batch.ok()) << batch.status();
      if (batch.ok())
        events.insert(events.end(), batch->events().begin(),
                      batch->events().end());
    }
    return events;
  }

  void TearDown() override {
    if (process_.pid > 0 && ::kill(process_.pid, 0) == 0) {
      ::kill(process_.pid, SIGKILL);
      Wait(process_.pid);
    }
    if (process_.out >= 0) ::close(process_.out);
    if (process_.err >= 0) ::close(process_.err);
  }

  testing::TempDir tmp_;
  testing::TestIngestServer server_;
  Process process_;
};

TEST_F(RunningAgentTest, SigtermSpoolsWaitingEventsAndExitsZero) {
  const int port = Start({"--batch_delay=1h", "--batch_events=1000"});
  ASSERT_GT(port, 0);
  Send(StepLine("job-t", 1) + StepLine("job-t", 2));
  ASSERT_TRUE(WaitFor(
      [&] { return Metric(port, "goodput_agent_accepted_lines_total") == 2; },
      kTimeout));
  EXPECT_EQ(Metric(port, "goodput_agent_spool_pending_batches"), 0);
  ::kill(process_.pid, SIGTERM);
  EXPECT_EQ(Wait(process_.pid), 0);
  process_.pid = -1;
  std::vector<v1::Event> events = SpooledEvents();
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[1].step().step(), 2);
}

TEST_F(RunningAgentTest, SigkillLosesNothingAlreadySpooled) {
  const int port = Start({"--batch_events=1"});
  ASSERT_GT(port, 0);
  Send(StepLine("job-k", 1) + StepLine("job-k", 2) + StepLine("job-k", 3));
  ASSERT_TRUE(WaitFor(
      [&] { return Metric(port, "goodput_agent_spooled_events_total") == 3; },
      kTimeout));
  ::kill(process_.pid, SIGKILL);
  EXPECT_EQ(Wait(process_.pid), 128 + SIGKILL);
  process_.pid = -1;
  std::vector<v1::Event> events = SpooledEvents();
  ASSERT_EQ(events.size(), 3u);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(events[i].step().step(), i + 1);
}

// Issue 19: --tail through two SIGKILLs, each with a line cut in half at
// the end of the file: every step is spooled exactly once, in order. The
// kill comes once the poll's events are spooled and its offsets committed
// (the tail-state file says the end of the last complete line).
TEST_F(RunningAgentTest, SigkillWhileTailingLosesAndRepeatsNoLine) {
  const std::string log = tmp_.File("llm-7.log");
  const std::string state = tmp_.File("tail-state");
  auto iteration = [](int it) {
    return absl::StrCat(" [2026-11-22 10:00:", it, ".000000] iteration ", it,
                        "/ 100 | consumed samples: ", it * 64, " |\n");
  };
  auto append = [&](const std::string& text) {
    int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::write(fd, text.data(), text.size()),
              static_cast<ssize_t>(text.size()));
    ::close(fd);
  };
  auto committed = [&](size_t offset) {
    std::string text;
    int fd = ::open(state.c_str(), O_RDONLY);
    if (fd < 0) return false;
    char buf[4096];
    ssize_t n = ::read(fd, buf, sizeof(buf));
    ::close(fd);
    if (n > 0) text.assign(buf, n);
    return absl::StrContains(text, absl::StrCat(" ", offset, " " + log));
  };
  const std::string start =
      "[after in-process setup and before initialize_megatron] datetime: "
      "2026-11-22 10:00:00.000000 \n";
  const std::string it30 = iteration(30);
  const std::string first = start + iteration(10) + iteration(20);
  const std::vector<std::string> flags = {
      "--tail=" + tmp_.File("*.log"), "--log_profile=megatron",
      "--tail_state=" + state, "--batch_events=1"};
  append(first + it30.substr(0, 25));
  int port = Start(flags);
  ASSERT_GT(port, 0);
  ASSERT_TRUE(WaitFor(
      [&] {
        return Metric(port, "goodput_agent_spooled_events_total") == 4 &&
               committed(first.size());
      },
      kTimeout));
  ::kill(process_.pid, SIGKILL);
  EXPECT_EQ(Wait(process_.pid), 128 + SIGKILL);
  const std::string second = it30.substr(25) + iteration(40);
  append(second + "partial");
  port = Start(flags);
  ASSERT_GT(port, 0);
  ASSERT_TRUE(WaitFor(
      [&] {
        return Metric(port, "goodput_agent_spooled_events_total") == 2 &&
               committed(first.size() + 25 + second.size());
      },
      kTimeout));
  ::kill(process_.pid, SIGKILL);
  EXPECT_EQ(Wait(process_.pid), 128 + SIGKILL);
  process_.pid = -1;
  std::vector<int64_t> steps;
  int others = 0;
  for (const v1::Event& e : SpooledEvents()) {
    EXPECT_EQ(e.job_id(), "llm-7");
    if (e.has_step()) {
      steps.push_back(e.step().step());
    } else {
      ++others;
    }
  }
  EXPECT_THAT(steps, ::testing::ElementsAre(10, 20, 30, 40));
  EXPECT_EQ(others, 2);  // started and INIT, once
}

// Issue 15 item 3: a second agent on a spool directory in use exits 1 with
// one line naming the directory and the pid holding it.
TEST_F(RunningAgentTest, SecondAgentOnTheSameSpoolDirExitsOne) {
  ASSERT_GT(Start({}), 0);
  Process second = Spawn({absl::StrCat("--server=", server_.address()),
                          absl::StrCat("--socket=", tmp_.File("b.sock")),
                          absl::StrCat("--spool_dir=", tmp_.File("spool")),
                          "--metrics_address=127.0.0.1:0"});
  ReadAll(second.out);
  const std::string err = ReadAll(second.err);
  EXPECT_EQ(Wait(second.pid), 1);
  EXPECT_THAT(err, HasSubstr(absl::StrCat("spool_dir ", tmp_.File("spool"),
                                          " is in use by another agent")));
  EXPECT_THAT(err, HasSubstr(absl::StrCat("locked by pid ", process_.pid)));
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
}

}  // namespace
}  // namespace goodput::agent
