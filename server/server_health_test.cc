// ServerHealth over a real Ingestor and the in-memory store, on a fake
// clock: readiness follows the start-up phases, liveness fails on a failing
// store and on a batch stuck in the ingest path.
#include "server/server_health.h"

#include <thread>

#include "absl/synchronization/notification.h"
#include "core/config.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "storage/memory_event_store.h"

namespace goodput::server {
namespace {

using ::testing::HasSubstr;

constexpr int64_t kSecond = 1'000'000'000;

class ServerHealthTest : public ::testing::Test {
 protected:
  ServerHealthTest()
      : live_(&config_, 5 * kSecond, &store_),
        ingestor_(&store_, &live_, &clock_, codec::ValidationLimits()),
        health_(&clock_,
                {.store_failures = 3, .wedged_after_ns = 60 * kSecond}) {
    EXPECT_TRUE(ingestor_.Recover().ok());
  }

  absl::Status Send() {
    v1::Batch batch;
    batch.set_agent_id("agent-1");
    batch.set_sequence(++sequence_);
    return ingestor_.Ingest(batch).status();
  }

  void Serve() {
    health_.Watch(&ingestor_);
    health_.SetPhase(ServerHealth::Phase::kServing);
  }

  core::Config config_;
  storage::MemoryEventStore store_;
  FakeClock clock_{1'700'000'000 * kSecond};
  LiveState live_;
  Ingestor ingestor_;
  ServerHealth health_;
  uint64_t sequence_ = 0;
};

TEST_F(ServerHealthTest, ReadyOnlyOnceServingAndLiveThroughRecovery) {
  using Phase = ServerHealth::Phase;
  for (auto [phase, why] :
       {std::pair(Phase::kOpeningStore, "opening the store"),
        std::pair(Phase::kRecovering, "recovering the live state"),
        std::pair(Phase::kStartingGrpc, "starting the gRPC server")}) {
    health_.SetPhase(phase);
    HttpResponse ready = health_.Readyz();
    EXPECT_EQ(ready.status, 503) << why;
    EXPECT_THAT(ready.body, HasSubstr(absl::StrCat("not ready: ", why)));
    EXPECT_EQ(health_.Healthz().status, 200) << why;
  }
  Serve();
  EXPECT_EQ(health_.Readyz().status, 200);
  EXPECT_EQ(health_.Readyz().body, "ready\n");
  EXPECT_EQ(health_.Healthz().body, "ok: serving\n");
  health_.SetPhase(Phase::kStopping);
  EXPECT_EQ(health_.Readyz().status, 503);
  EXPECT_THAT(health_.Readyz().body, HasSubstr("shutting down"));
}

// Cluster mode's check (NATS reachable): not ready, saying why, while it
// fails; still live (the process is fine, its log is away).
TEST_F(ServerHealthTest, AFailingReadyCheckIsNotReadyWithItsReason) {
  absl::Status nats;
  health_.set_ready_check([&nats] { return nats; });
  Serve();
  EXPECT_EQ(health_.Readyz().status, 200);
  nats = absl::UnavailableError("NATS unreachable (nats://a:4222)");
  const HttpResponse ready = health_.Readyz();
  EXPECT_EQ(ready.status, 503);
  EXPECT_EQ(ready.body, "not ready: NATS unreachable (nats://a:4222)\n");
  EXPECT_EQ(health_.Healthz().status, 200);
  nats = absl::OkStatus();
  EXPECT_EQ(health_.Readyz().status, 200);
}

TEST_F(ServerHealthTest, AStoreFailingThreeWritesInARowIsNotLive) {
  Serve();
  for (int i = 0; i < 2; ++i) {
    store_.FailNextWrite(absl::InternalError("disk full"));
    EXPECT_FALSE(Send().ok());
  }
  EXPECT_EQ(health_.Healthz().status, 200) << "two failures are not yet";
  store_.FailNextWrite(absl::InternalError("disk full"));
  EXPECT_FALSE(Send().ok());
  HttpResponse health = health_.Healthz();
  EXPECT_EQ(health.status, 503);
  EXPECT_EQ(health.body,
            "store failing: the last 3 batch writes failed; last error: disk "
            "full\n");
  EXPECT_EQ(health_.Readyz().status, 503);
  ASSERT_TRUE(Send().ok());
  EXPECT_EQ(health_.Healthz().status, 200) << "a write went through";
  EXPECT_EQ(health_.Readyz().status, 200);
}

TEST_F(ServerHealthTest, ABatchStuckInTheIngestPathIsWedged) {
  Serve();
  absl::Notification entered, release;
  ingestor_.set_fault_hook([&](const char* point) {
    if (std::string(point) != "before_store") return;
    entered.Notify();
    release.WaitForNotification();
  });
  std::thread sender([this] { EXPECT_TRUE(Send().ok()); });
  entered.WaitForNotification();
  clock_.Advance(60 * kSecond);
  EXPECT_EQ(health_.Healthz().status, 200) << "60 s is not yet wedged";
  clock_.Advance(1 * kSecond);
  HttpResponse health = health_.Healthz();
  EXPECT_EQ(health.status, 503);
  EXPECT_THAT(health.body, HasSubstr("wedged: one batch has been in the "
                                     "ingest path for 1m01s"));
  EXPECT_EQ(health_.Readyz().status, 503);
  release.Notify();
  sender.join();
  EXPECT_EQ(health_.Healthz().status, 200);
}

}  // namespace
}  // namespace goodput::server
