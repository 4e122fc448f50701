// ClusterMode's helpers: the --cluster list, the default member id, and
// the goodput_cluster_* families of a member's status.
#include "server/cluster_mode.h"

#include "absl/strings/str_cat.h"
#include "cluster/partition_assigner.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace goodput::server {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(ParseClusterUrlsTest, TakesAListOfNatsUrls) {
  auto urls = ParseClusterUrls("nats://a:4222,nats://10.0.0.2:5222");
  ASSERT_TRUE(urls.ok()) << urls.status();
  EXPECT_THAT(*urls, ElementsAre("nats://a:4222", "nats://10.0.0.2:5222"));
}

TEST(ParseClusterUrlsTest, RefusesWhatIsNotNatsHostPort) {
  for (const char* bad :
       {"", ",", "a:4222", "nats://a", "nats://:4222", "nats://a:0",
        "nats://a:70000", "http://a:4222", "nats://a:4222,a:4223"}) {
    auto urls = ParseClusterUrls(bad);
    EXPECT_TRUE(absl::IsInvalidArgument(urls.status())) << bad;
    EXPECT_THAT(urls.status().message(), HasSubstr("--cluster")) << bad;
  }
}

TEST(DefaultClusterIdTest, HostAndPortAsALeaseKeyCanHoldThem) {
  EXPECT_EQ(DefaultClusterId("node-1", 7700), "node-1-7700");
  EXPECT_EQ(DefaultClusterId("gp.example.com", 80), "gp-example-com-80");
  EXPECT_EQ(DefaultClusterId("a_b", 1), "a_b-1");
}

TEST(DefaultAdvertiseTest, TheGrpcHostOrTheHostnameAndTheListeningPort) {
  EXPECT_EQ(DefaultAdvertise("127.0.0.1:0", "node-1", 41234),
            "127.0.0.1:41234");
  EXPECT_EQ(DefaultAdvertise("gp-0.example.com:7700", "node-1", 7700),
            "gp-0.example.com:7700");
  for (const char* any : {"0.0.0.0:7700", "[::]:7700", ":7700", ""}) {
    EXPECT_EQ(DefaultAdvertise(any, "node-1", 7700), "node-1:7700") << any;
  }
}

TEST(CheckAdvertiseTest, WantsHostAndPort) {
  EXPECT_TRUE(CheckAdvertise("gp-0:7700").ok());
  EXPECT_TRUE(CheckAdvertise("[::1]:7700").ok());
  for (const char* bad :
       {"", "gp-0", ":7700", "gp-0:0", "gp-0:70000", "gp-0:x"}) {
    const absl::Status s = CheckAdvertise(bad);
    EXPECT_TRUE(absl::IsInvalidArgument(s)) << bad;
    EXPECT_THAT(s.message(), HasSubstr("--cluster_advertise")) << bad;
  }
}

// A ClusterMode whose status is set by the test.
class StatusOnly : public ClusterMode {
 public:
  explicit StatusOnly(ClusterRunnerStatus s, int32_t partitions = 64)
      : ClusterMode(partitions), status_(std::move(s)) {}
  ClusterFront* front() override { return nullptr; }
  absl::Status Join(const std::string&, const std::string&) override {
    return absl::OkStatus();
  }
  void Stop() override {}
  ClusterRunnerStatus status() const override { return status_; }
  absl::Status Reachable() const override { return reachable_; }
  void set_reachable(absl::Status s) { reachable_ = std::move(s); }

 private:
  ClusterRunnerStatus status_;
  absl::Status reachable_;
};

double Value(const std::vector<core::MetricFamilyData>& families,
             const std::string& name) {
  for (const core::MetricFamilyData& f : families) {
    if (f.name == name && f.samples.size() == 1) return f.samples[0].value;
  }
  ADD_FAILURE() << "no single sample of " << name;
  return -99;
}

TEST(ClusterModeFamiliesTest, ExportTheRunnerStatus) {
  ClusterRunnerStatus s;
  s.held = {3, 9, 17};
  s.unowned = 2;
  s.applied = 41;
  s.errors = 5;
  s.snapshots = {.published = 6,
                 .publish_errors = 7,
                 .imported = 8,
                 .import_errors = 9,
                 .skipped_incomplete = 10};
  const auto families = StatusOnly(s).Families();
  EXPECT_EQ(families.size(), 10u);
  EXPECT_EQ(Value(families, "goodput_cluster_partitions_held"), 3);
  EXPECT_EQ(Value(families, "goodput_cluster_partitions_unowned"), 2);
  EXPECT_EQ(Value(families, "goodput_cluster_applied_messages_total"), 41);
  EXPECT_EQ(Value(families, "goodput_cluster_errors_total"), 5);
  EXPECT_EQ(Value(families, "goodput_cluster_nats_connected"), 1);
  EXPECT_EQ(Value(families, "goodput_cluster_snapshots_published_total"), 6);
  EXPECT_EQ(Value(families, "goodput_cluster_snapshot_publish_errors_total"),
            7);
  EXPECT_EQ(Value(families, "goodput_cluster_snapshots_imported_total"), 8);
  EXPECT_EQ(Value(families, "goodput_cluster_snapshot_import_errors_total"), 9);
  EXPECT_EQ(Value(families, "goodput_cluster_snapshots_incomplete_total"), 10);
}

TEST(ClusterModeFamiliesTest, NatsConnectedIsZeroWhileUnreachable) {
  StatusOnly mode{ClusterRunnerStatus{}};
  mode.set_reachable(absl::UnavailableError("NATS unreachable"));
  EXPECT_EQ(Value(mode.Families(), "goodput_cluster_nats_connected"), 0);
}

TEST(ClusterModeFamiliesTest, UnownedIsMinusOneBeforeTheFirstRound) {
  const auto families = StatusOnly(ClusterRunnerStatus{}).Families();
  EXPECT_EQ(Value(families, "goodput_cluster_partitions_unowned"), -1);
  EXPECT_EQ(Value(families, "goodput_cluster_partitions_held"), 0);
}

TEST(ClusterModeHeldJobsTest, AdmitsTheJobsOfHeldPartitionsOnly) {
  constexpr int32_t kPartitions = 8;
  ClusterRunnerStatus s;
  s.held = {cluster::PartitionOfJob("a", kPartitions)};
  const auto held = StatusOnly(s, kPartitions).HeldJobs();
  int admitted = 0;
  for (int i = 0; i < 64; ++i) {
    const std::string job = absl::StrCat("job-", i);
    const bool mine = cluster::PartitionOfJob(job, kPartitions) == s.held[0];
    EXPECT_EQ(held(job), mine) << job;
    admitted += mine;
  }
  EXPECT_TRUE(held("a"));
  EXPECT_GT(admitted, 0);
  EXPECT_LT(admitted, 64);
  EXPECT_FALSE(StatusOnly(ClusterRunnerStatus{}, kPartitions).HeldJobs()("a"));
}

}  // namespace
}  // namespace goodput::server
