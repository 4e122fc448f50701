#include "server/agent_guard.h"

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "storage/memory_event_store.h"
#include "util/clock.h"

namespace goodput::server {
namespace {

const CallIdentity kA{"token agent-a"};
const CallIdentity kB{"token agent-b"};

TEST(AgentGuardTest, FirstCredentialsOwnAnIdAcrossRestarts) {
  FakeClock clock(0);
  storage::MemoryEventStore store;
  {
    AgentGuard guard({}, &store, &clock);
    AgentGuard::Claims claims(&guard);
    EXPECT_TRUE(guard.Admit(kB, "id-b", "peer-1", &claims).ok());
  }
  AgentGuard restarted({}, &store, &clock);  // reads the binding from the store
  AgentGuard::Claims claims(&restarted);
  absl::Status s = restarted.Admit(kA, "id-b", "peer-1", &claims);
  ASSERT_TRUE(absl::IsPermissionDenied(s)) << s;
  EXPECT_EQ(s.message(),
            "batch.agent_id: \"id-b\" belongs to token agent-b, not to this "
            "call's token agent-a (docs/security.md, \"Agent identities\")");
  EXPECT_EQ(restarted.refused(AgentGuard::kIdentityMismatch), 1);
  EXPECT_TRUE(restarted.Admit(kB, "id-b", "peer-1", &claims).ok());
  EXPECT_TRUE(restarted.Admit(kA, "id-a", "peer-1", &claims).ok());  // a new id
}

TEST(AgentGuardTest, TokenPatternsDecideAlone) {
  FakeClock clock(0);
  AgentGuard guard({}, nullptr, &clock);
  const std::vector<std::string> patterns = {"host-a-*"};
  const CallIdentity a{"token agent-a", &patterns};
  AgentGuard::Claims claims(&guard);
  EXPECT_TRUE(guard.Admit(a, "host-a-1", "peer-1", &claims).ok());
  absl::Status s = guard.Admit(a, "host-b-1", "peer-1", &claims);
  ASSERT_TRUE(absl::IsPermissionDenied(s)) << s;
  EXPECT_EQ(s.message(),
            "batch.agent_id: \"host-b-1\" is not among the agent_ids= of "
            "token agent-a in --auth_tokens");
}

TEST(AgentGuardTest, UnauthenticatedCallsAreNotBound) {
  FakeClock clock(0);
  AgentGuard guard({}, nullptr, &clock);
  AgentGuard::Claims one(&guard), two(&guard);
  EXPECT_TRUE(guard.Admit(CallIdentity{}, "id-1", "peer-1", &one).ok());
  EXPECT_TRUE(guard.Admit(kA, "id-2", "peer-1", &two).ok());
  EXPECT_EQ(guard.refused(AgentGuard::kIdentityMismatch), 0);
}

TEST(AgentGuardTest, SecondLiveStreamForAnIdIsRefusedUntilTheFirstEnds) {
  FakeClock clock(0);
  AgentGuard guard({}, nullptr, &clock);
  auto first = std::make_unique<AgentGuard::Claims>(&guard);
  ASSERT_TRUE(guard.Admit(kA, "id-1", "peer-1", first.get()).ok());
  EXPECT_TRUE(
      guard.Admit(kA, "id-1", "peer-1", first.get()).ok());  // same stream
  AgentGuard::Claims second(&guard);
  absl::Status s = guard.Admit(kA, "id-1", "peer-2", &second);
  ASSERT_TRUE(absl::IsAlreadyExists(s)) << s;
  EXPECT_TRUE(absl::StartsWith(s.message(),
                               "batch.agent_id: \"id-1\" is already streaming "
                               "on another connection (from peer-1):"))
      << s;
  EXPECT_EQ(guard.refused(AgentGuard::kIdInUse), 1);
  first.reset();  // the first stream ends
  EXPECT_TRUE(guard.Admit(kA, "id-1", "peer-2", &second).ok());
}

// A reconnecting agent whose old connection died without a word (power
// loss, a partition) must not be locked out by its own half-open stream.
TEST(AgentGuardTest, StreamIdleLongerThanTheTakeoverTimeYieldsItsId) {
  FakeClock clock(0);
  AgentGuard guard({.takeover_after_ns = 100}, nullptr, &clock);
  AgentGuard::Claims old_stream(&guard), clone(&guard), reconnect(&guard);
  ASSERT_TRUE(guard.Admit(kA, "id-1", "peer-1", &old_stream).ok());
  clock.Set(100);  // idle exactly the takeover time: still live
  EXPECT_TRUE(absl::IsAlreadyExists(guard.Admit(kA, "id-1", "peer-2", &clone)));
  clock.Set(150);
  ASSERT_TRUE(guard.Admit(kA, "id-1", "peer-1", &old_stream).ok());  // a batch
  clock.Set(250);
  EXPECT_TRUE(absl::IsAlreadyExists(guard.Admit(kA, "id-1", "peer-2", &clone)));
  clock.Set(251);  // 101 idle
  EXPECT_TRUE(guard.Admit(kA, "id-1", "peer-3", &reconnect).ok());
  // The old stream lost the id, and its end does not release the new one's.
  absl::Status s = guard.Admit(kA, "id-1", "peer-1", &old_stream);
  EXPECT_TRUE(absl::IsAlreadyExists(s)) << s;
  EXPECT_EQ(guard.refused(AgentGuard::kIdInUse), 2);
}

TEST(AgentGuardTest, ConcurrentStreamsForOneIdGetItOnce) {
  FakeClock clock(0);
  AgentGuard guard({}, nullptr, &clock);
  constexpr int kStreams = 8;
  std::vector<std::unique_ptr<AgentGuard::Claims>> claims;
  for (int i = 0; i < kStreams; ++i) {
    claims.push_back(std::make_unique<AgentGuard::Claims>(&guard));
  }
  std::atomic<int> admitted{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < kStreams; ++i) {
    threads.emplace_back([&, i] {
      if (guard.Admit(kA, "id-1", "peer", claims[i].get()).ok()) ++admitted;
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(admitted.load(), 1);
  EXPECT_EQ(guard.refused(AgentGuard::kIdInUse), kStreams - 1);
}

TEST(AgentGuardTest, LongIdsAreRefusedNamingTheFlag) {
  FakeClock clock(0);
  AgentGuard guard({.max_agent_id_bytes = 8}, nullptr, &clock);
  AgentGuard::Claims claims(&guard);
  EXPECT_TRUE(guard.Admit(kA, "12345678", "peer-1", &claims).ok());
  absl::Status s = guard.Admit(kA, "123456789", "peer-1", &claims);
  ASSERT_TRUE(absl::IsInvalidArgument(s)) << s;
  EXPECT_EQ(s.message(),
            "batch.agent_id: must be at most 8 bytes (--max_agent_id_bytes), "
            "got 9 bytes \"123456789\"");
  EXPECT_EQ(guard.refused(AgentGuard::kIdTooLong), 1);
}

}  // namespace
}  // namespace goodput::server
