// The agent's routing by job: ShardRouter on its own, and a whole agent in
// process with a three-entry --server list and three real gRPC servers.
#include "agent/shard_router.h"

#include <unistd.h>

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "agent/agent.h"
#include "agent/testing/test_ingest_server.h"
#include "agent/testing/test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace goodput::agent {
namespace {

using testing::TestIngestServer;
using Stats = TestIngestServer::Stats;

constexpr absl::Duration kTimeout = absl::Seconds(30);

// Keeps what it is given.
class RecordingSink : public EventSink {
 public:
  void Add(v1::Event event) override { events.push_back(std::move(event)); }
  std::vector<v1::Event> events;
};

v1::Event JobEvent(const std::string& job_id) {
  v1::Event e;
  e.set_job_id(job_id);
  e.mutable_started();
  return e;
}

TEST(ShardRouterTest, SendsEachJobToItsShardAndAHeartbeatToItsHostsShard) {
  const ShardMap map({"a:1", "b:2", "c:3"});
  RecordingSink sinks[3];
  ShardRouter router(map, {&sinks[0], &sinks[1], &sinks[2]});
  for (int i = 0; i < 30; ++i) router.Add(JobEvent(absl::StrCat("job-", i)));
  for (int h = 0; h < 30; ++h) {
    v1::Event heartbeat;
    heartbeat.set_host(absl::StrCat("host-", h));
    heartbeat.mutable_heartbeat()->set_chips(8);
    router.Add(heartbeat);
  }
  v1::Event exclusion;  // of hosts: every shard
  exclusion.mutable_exclusion()->set_scope(v1::Exclusion::HOSTS);
  router.Add(exclusion);
  size_t jobs = 0, heartbeats = 0;
  for (size_t s = 0; s < 3; ++s) {
    ASSERT_FALSE(sinks[s].events.empty());
    EXPECT_TRUE(sinks[s].events.back().has_exclusion()) << s;
    for (size_t i = 0; i + 1 < sinks[s].events.size(); ++i) {
      const v1::Event& e = sinks[s].events[i];
      if (e.has_heartbeat()) {
        EXPECT_EQ(map.CapacityShardOf(e.host()), s) << e.host();
        ++heartbeats;
      } else {
        EXPECT_EQ(map.ShardOf(e.job_id()), s);
        ++jobs;
      }
    }
  }
  EXPECT_EQ(jobs, 30u);
  EXPECT_EQ(heartbeats, 30u);  // each once
}

// A plain step line's event (the intake's fast path) goes to the shard of
// its job, as the Event decoded from it would, and arrives as that Event
// (RecordingSink has EventSink's AddPlainStep).
TEST(ShardRouterTest, SendsAPlainStepToTheShardOfItsJob) {
  const ShardMap map({"a:1", "b:2", "c:3"});
  RecordingSink sinks[3];
  ShardRouter router(map, {&sinks[0], &sinks[1], &sinks[2]});
  std::vector<std::string> jobs;
  for (int i = 0; i < 30; ++i) jobs.push_back(absl::StrCat("job-", i));
  for (int i = 0; i < 30; ++i) {
    codec::PlainStep step;
    step.seconds = 1795341600 + i;
    step.job_id = jobs[i];
    step.step = i;
    router.AddPlainStep(step);
  }
  size_t total = 0;
  for (size_t s = 0; s < 3; ++s) {
    for (const v1::Event& e : sinks[s].events) {
      EXPECT_EQ(map.ShardOf(e.job_id()), s) << e.job_id();
      EXPECT_EQ(e.time().seconds() - 1795341600, e.step().step());
    }
    total += sinks[s].events.size();
  }
  EXPECT_EQ(total, 30u);
}

TEST(ShardSpoolDirTest, OneShardKeepsTheOldLayout) {
  EXPECT_EQ(ShardSpoolDir("/var/spool", 0, 1), "/var/spool");
  EXPECT_EQ(ShardSpoolDir("/var/spool", 2, 3), "/var/spool/shard-2");
}

class ShardedAgentTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (auto& s : servers_) ASSERT_TRUE(s.Start().ok());
  }

  AgentFlags Flags() {
    AgentFlags f;
    f.server = absl::StrCat(servers_[0].address(), ",", servers_[1].address(),
                            ",", servers_[2].address());
    f.socket_path = tmp_.File("agent.sock");
    f.spool_dir = tmp_.File("spool");
    f.metrics_address = "";
    f.host = "host-1";
    f.chips = 4;
    f.accelerator = "tpu-v5p";
    f.batch_delay = absl::Milliseconds(20);
    return f;
  }

  void Send(const std::string& data) {
    auto fd = testing::ConnectUnix(tmp_.File("agent.sock"));
    ASSERT_TRUE(fd.ok()) << fd.status();
    ASSERT_TRUE(testing::SendAll(*fd, data));
    ::close(*fd);
  }

  testing::TempDir tmp_;
  TestIngestServer servers_[3];
  RealClock clock_;
  testing::RecordingSleeper sleeper_;
};

// 1 if shard `s` of `map` keeps the heartbeats of the test agent's host.
int64_t HeartbeatsOn(const ShardMap& map, size_t s) {
  return map.CapacityShardOf("host-1") == s ? 1 : 0;
}

TEST_F(ShardedAgentTest, EachShardGetsItsJobsAndItsHostsHeartbeats) {
  auto agent = Agent::Start(Flags(), &clock_, &sleeper_);
  ASSERT_TRUE(agent.ok()) << agent.status();
  ASSERT_EQ((*agent)->shards(), 3u);
  std::string lines;
  for (int j = 0; j < 12; ++j) {
    for (int step = 1; step <= 5; ++step) {
      lines += testing::StepLine(absl::StrCat("job-", j), step);
    }
  }
  Send(lines);
  const ShardMap map = *ShardMap::Parse(Flags().server, "--server");
  std::set<std::string> agent_ids;
  int64_t steps = 0;
  for (size_t s = 0; s < 3; ++s) {
    // Exactly its own jobs' steps, and the heartbeat if the host is its.
    int64_t want = HeartbeatsOn(map, s);
    for (int j = 0; j < 12; ++j) {
      if (map.ShardOf(absl::StrCat("job-", j)) == s) want += 5;
    }
    ASSERT_TRUE(servers_[s].Await(
        [&](const Stats& st) {
          return static_cast<int64_t>(st.events.size()) == want;
        },
        kTimeout))
        << "shard " << s << " want " << want << " events, has "
        << servers_[s].stats().events.size();
    const Stats st = servers_[s].stats();
    int heartbeats = 0;
    for (const v1::Event& e : st.events) {
      if (e.has_heartbeat()) {
        ++heartbeats;
        continue;
      }
      EXPECT_EQ(map.ShardOf(e.job_id()), s) << e.job_id();
      ++steps;
    }
    EXPECT_EQ(heartbeats, HeartbeatsOn(map, s)) << s;
    ASSERT_EQ(st.high_water.size(), 1u);
    agent_ids.insert(st.high_water.begin()->first);
    EXPECT_EQ(st.high_water.begin()->first, (*agent)->spool(s).agent_id());
  }
  EXPECT_EQ(steps, 60);
  EXPECT_EQ(agent_ids.size(), 3u);  // one identity per shard
  (*agent)->Stop();
}

TEST_F(ShardedAgentTest, AShardDownBlocksOnlyItself) {
  servers_[1].Stop();
  // Real backoff sleeps: shard 1's uplink retries while it is down.
  auto agent = Agent::Start(Flags(), &clock_, nullptr);
  ASSERT_TRUE(agent.ok()) << agent.status();
  const ShardMap map = *ShardMap::Parse(Flags().server, "--server");
  std::string lines;
  int64_t jobs_on[3] = {0, 0, 0};
  for (int j = 0; j < 12; ++j) {
    lines += testing::StepLine(absl::StrCat("job-", j), 1);
    ++jobs_on[map.ShardOf(absl::StrCat("job-", j))];
  }
  const int64_t on_down = jobs_on[1] + HeartbeatsOn(map, 1);
  ASSERT_GT(jobs_on[1], 0);
  Send(lines);
  for (size_t s : {0u, 2u}) {
    ASSERT_TRUE(testing::WaitFor(
        [&] {
          return (*agent)->spool(s).Pending().empty() &&
                 static_cast<int64_t>(servers_[s].stats().events.size()) ==
                     HeartbeatsOn(map, s) + jobs_on[s];
        },
        kTimeout));
  }
  ASSERT_TRUE(testing::WaitFor(
      [&] { return !(*agent)->spool(1).Pending().empty(); }, kTimeout));
  ASSERT_TRUE(servers_[1].Start(servers_[1].port()).ok());
  ASSERT_TRUE(servers_[1].Await(
      [&](const Stats& st) {
        return static_cast<int64_t>(st.events.size()) == on_down;
      },
      kTimeout));
  ASSERT_TRUE(testing::WaitFor(
      [&] { return (*agent)->spool(1).Pending().empty(); }, kTimeout));
  (*agent)->Stop();
}

TEST(ShardedAgentFlagsTest, ABadEntryIsNamed) {
  auto flags =
      ParseAgentFlags({"--server=a:1,b", "--socket=/s", "--spool_dir=/d"});
  ASSERT_FALSE(flags.ok());
  EXPECT_EQ(flags.status().message(),
            "--server: entry 2 \"b\": want HOST:PORT");
}

}  // namespace
}  // namespace goodput::agent
