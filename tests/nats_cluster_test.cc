// Cluster mode's NATS adapters against a real 3-node JetStream cluster
// (nats-server processes on loopback ports; issue 20): the event log stores
// a resent batch once and keeps taking batches with a node killed; the KV
// lease store's create-if-absent, compare-and-set and TTL; three
// LeaseKeepers share the partitions and take over a stopped one's share.
#include "tests/nats_cluster.h"

#include <cstdlib>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "cluster/batch_publisher.h"
#include "cluster/lease_keeper.h"
#include "cluster/nats_connection.h"
#include "cluster/nats_event_log.h"
#include "cluster/nats_lease_store.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "util/clock.h"

namespace goodput::cluster {
namespace {

using ::goodput::testing::Eventually;
using ::goodput::testing::NatsCluster;
using ::testing::Contains;
using ::testing::HasSubstr;

class NatsClusterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = ::testing::TempDir() + "/nats.XXXXXX";
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    absl::StatusOr<std::unique_ptr<NatsCluster>> c =
        NatsCluster::Start(tmpl, 3);
    ASSERT_TRUE(c.ok()) << c.status();
    cluster_ = *std::move(c);
  }
  std::unique_ptr<NatsConnection> Connect() {
    absl::StatusOr<std::unique_ptr<NatsConnection>> nc =
        NatsConnection::Connect(cluster_->urls(), 5000);
    EXPECT_TRUE(nc.ok()) << nc.status();
    return nc.ok() ? *std::move(nc) : nullptr;
  }

  std::unique_ptr<NatsCluster> cluster_;
};

v1::Batch Batch(const std::string& agent, uint64_t sequence, int jobs) {
  v1::Batch b;
  b.set_agent_id(agent);
  b.set_sequence(sequence);
  for (int i = 0; i < jobs; ++i) {
    v1::Event* e = b.add_events();
    e->set_job_id(absl::StrCat("job-", i));
    e->mutable_step()->set_step(static_cast<int64_t>(sequence));
  }
  b.add_events()->mutable_heartbeat();
  return b;
}

uint64_t StoredMessages(NatsConnection* nc, const std::string& stream) {
  jsStreamInfo* info = nullptr;
  if (js_GetStreamInfo(&info, nc->js(), stream.c_str(), nullptr, nullptr) !=
      NATS_OK) {
    return 0;
  }
  const uint64_t n = info->State.Msgs;
  jsStreamInfo_Destroy(info);
  return n;
}

TEST_F(NatsClusterTest, AResentBatchIsStoredOnceAndANodeKillLosesNothing) {
  std::unique_ptr<NatsConnection> nc = Connect();
  ASSERT_NE(nc, nullptr);
  absl::StatusOr<std::unique_ptr<NatsEventLog>> log =
      NatsEventLog::Open(nc.get(), EventStreamConfig{});
  ASSERT_TRUE(log.ok()) << log.status();
  BatchPublisher pub(log->get(), {.partitions = 8});
  absl::StatusOr<PublishResult> first = pub.Publish(Batch("a", 1, 20));
  ASSERT_TRUE(first.ok()) << first.status();
  absl::StatusOr<PublishResult> again = pub.Publish(Batch("a", 1, 20));
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->duplicates, again->parts);
  EXPECT_EQ(StoredMessages(nc.get(), "GOODPUT_EVENTS"),
            static_cast<uint64_t>(first->parts));

  cluster_->Kill(0);  // R=3: two of three still make a quorum
  absl::StatusOr<PublishResult> after;
  ASSERT_TRUE(Eventually(
      [&] {
        after = pub.Publish(Batch("a", 2, 20));  // the agent's retry
        return after.ok();
      },
      30))
      << after.status();
  EXPECT_EQ(StoredMessages(nc.get(), "GOODPUT_EVENTS"),
            static_cast<uint64_t>(first->parts + after->parts));
}

TEST_F(NatsClusterTest, LeaseStoreCreatesOnceComparesAndSetsAndExpires) {
  std::unique_ptr<NatsConnection> nc = Connect();
  ASSERT_NE(nc, nullptr);
  absl::StatusOr<std::unique_ptr<NatsLeaseStore>> kv =
      NatsLeaseStore::Open(nc.get(), "goodput_leases", 2000, 3);
  ASSERT_TRUE(kv.ok()) << kv.status();
  LeaseStore& store = **kv;
  absl::StatusOr<uint64_t> rev = store.Create("lease.3", "a");
  ASSERT_TRUE(rev.ok()) << rev.status();
  EXPECT_TRUE(absl::IsAlreadyExists(store.Create("lease.3", "b").status()));
  absl::StatusOr<uint64_t> stale = store.Update("lease.3", "b", *rev + 100);
  EXPECT_TRUE(absl::IsFailedPrecondition(stale.status())) << stale.status();
  absl::StatusOr<uint64_t> next = store.Update("lease.3", "a", *rev);
  ASSERT_TRUE(next.ok()) << next.status();
  absl::StatusOr<LeaseEntry> e = store.Get("lease.3");
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->value, "a");
  EXPECT_EQ(e->revision, *next);
  absl::StatusOr<std::vector<std::string>> keys = store.Keys();
  ASSERT_TRUE(keys.ok());
  EXPECT_THAT(*keys, Contains("lease.3"));
  ASSERT_TRUE(store.Delete("lease.3").ok());
  EXPECT_TRUE(absl::IsNotFound(store.Get("lease.3").status()));
  ASSERT_TRUE(store.Create("lease.3", "b").ok());  // free after a delete
  // Unwritten for the TTL (2 s): gone, and free for anyone.
  ASSERT_TRUE(Eventually(
      [&] { return absl::IsNotFound(store.Get("lease.3").status()); }, 20));
  EXPECT_TRUE(store.Create("lease.3", "c").ok());
}

TEST_F(NatsClusterTest, ThreeKeepersShareThePartitionsAndOutliveOne) {
  constexpr int32_t kPartitions = 16;
  RealClock clock;
  std::vector<std::unique_ptr<NatsConnection>> conns;
  std::vector<std::unique_ptr<NatsLeaseStore>> stores;
  std::vector<std::unique_ptr<LeaseKeeper>> keepers;
  for (const char* id : {"g0", "g1", "g2"}) {
    conns.push_back(Connect());
    ASSERT_NE(conns.back(), nullptr);
    auto kv =
        NatsLeaseStore::Open(conns.back().get(), "goodput_leases", 3000, 3);
    ASSERT_TRUE(kv.ok()) << kv.status();
    stores.push_back(*std::move(kv));
    keepers.push_back(std::make_unique<LeaseKeeper>(
        stores.back().get(), &clock,
        LeaseKeeperOptions{.self = id,
                           .partitions = kPartitions,
                           .ttl_ns = int64_t{3000} * 1000 * 1000}));
  }
  // Ticks `alive` keepers; true when they hold every partition once each.
  auto settled = [&](int alive) {
    std::set<int32_t> held;
    size_t total = 0;
    for (int i = 0; i < alive; ++i) {
      LeaseChanges c = keepers[i]->Tick();
      EXPECT_TRUE(c.status.ok()) << c.status;
    }
    for (int i = 0; i < alive; ++i) {
      for (int32_t p : keepers[i]->Held()) {
        held.insert(p);
        ++total;
      }
    }
    EXPECT_EQ(held.size(), total) << "a partition held twice";
    return held.size() == kPartitions && total == kPartitions &&
           !keepers[alive - 1]->Held().empty();
  };
  ASSERT_TRUE(Eventually([&] { return settled(3); }, 30));
  // g2 stops (its process died): its leases expire, g0 and g1 take them.
  ASSERT_TRUE(Eventually([&] { return settled(2); }, 30));
  EXPECT_EQ(keepers[0]->members().size(), 2u);
}

}  // namespace
}  // namespace goodput::cluster
