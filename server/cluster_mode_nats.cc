// ClusterMode over NATS JetStream (libnats): the build with libnats.
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "cluster/batch_publisher.h"
#include "cluster/cluster_member.h"
#include "cluster/lease_keeper.h"
#include "cluster/nats_connection.h"
#include "cluster/nats_event_log.h"
#include "cluster/nats_lease_store.h"
#include "cluster/partition_snapshots.h"
#include "server/cluster_mode.h"
#include "server/partition_ingest_sink.h"

namespace goodput::server {
namespace {

constexpr char kLeaseBucket[] = "goodput_leases";

class NatsClusterMode : public ClusterMode {
 public:
  NatsClusterMode(const ClusterOptions& options, Ingestor* ingestor,
                  Clock* clock)
      : ClusterMode(options.partitions),
        options_(options),
        sink_(ingestor, options.partitions),
        clock_(clock) {}
  ~NatsClusterMode() override { Stop(); }

  absl::Status Open(codec::ValidationLimits limits);
  // The snapshot stream (GOODPUT_SNAPSHOTS) and its publisher/reader.
  absl::Status OpenSnapshots();
  ClusterFront* front() override { return front_.get(); }
  absl::Status Join(const std::string& id,
                    const std::string& advertise) override;
  const cluster::MemberDirectory* directory() const override {
    return directory_.get();
  }
  std::string id() const override {
    absl::MutexLock lock(&mu_);
    return id_;
  }
  void Stop() override;
  absl::Status Reachable() const override {
    if (nats_->connected()) return absl::OkStatus();
    return absl::UnavailableError(
        absl::StrCat("NATS unreachable (", absl::StrJoin(options_.urls, ","),
                     "): the client is reconnecting"));
  }
  ClusterRunnerStatus status() const override {
    absl::MutexLock lock(&mu_);
    return runner_ ? runner_->status() : ClusterRunnerStatus{};
  }

 private:
  const ClusterOptions options_;
  PartitionIngestSink sink_;
  Clock* const clock_;
  std::unique_ptr<cluster::NatsConnection> nats_;
  std::unique_ptr<cluster::NatsEventLog> log_;
  std::unique_ptr<cluster::NatsEventLog> snapshot_log_;
  std::unique_ptr<cluster::PartitionSnapshots> snapshots_;
  std::unique_ptr<cluster::NatsLeaseStore> leases_store_;
  std::unique_ptr<cluster::MemberDirectory> directory_;
  std::unique_ptr<cluster::BatchPublisher> publisher_;
  std::unique_ptr<ClusterFront> front_;
  std::unique_ptr<cluster::LeaseKeeper> keeper_;
  std::unique_ptr<cluster::ClusterMember> member_;
  mutable absl::Mutex mu_;
  std::unique_ptr<ClusterRunner> runner_ ABSL_GUARDED_BY(mu_);
  std::string id_ ABSL_GUARDED_BY(mu_);
};

absl::Status NatsClusterMode::Open(codec::ValidationLimits limits) {
  auto nats =
      cluster::NatsConnection::Connect(options_.urls, options_.nats_timeout_ms);
  if (!nats.ok()) return nats.status();
  nats_ = *std::move(nats);
  cluster::EventStreamConfig stream;
  stream.replicas = options_.replicas;
  stream.partitions = options_.partitions;
  auto log = cluster::NatsEventLog::Open(nats_.get(), stream);
  if (!log.ok()) return log.status();
  log_ = *std::move(log);
  if (const int32_t p = log_->created_partitions();
      p != 0 && p != options_.partitions) {
    return absl::FailedPreconditionError(absl::StrCat(
        "--cluster_partitions=", options_.partitions,
        " but the cluster (stream ", stream.name,
        ") was created with --cluster_partitions=", p,
        ": P is fixed when the cluster is created; give every goodputd "
        "--cluster_partitions=",
        p));
  }
  if (absl::Status s = OpenSnapshots(); !s.ok()) return s;
  auto store = cluster::NatsLeaseStore::Open(nats_.get(), kLeaseBucket,
                                             options_.lease_ttl_ns / 1000000,
                                             options_.replicas);
  if (!store.ok()) return store.status();
  leases_store_ = *std::move(store);
  directory_ = std::make_unique<cluster::MemberDirectory>(leases_store_.get());
  publisher_ = std::make_unique<cluster::BatchPublisher>(
      log_.get(), cluster::PublishOptions{.partitions = options_.partitions});
  front_ = std::make_unique<ClusterFront>(publisher_.get(), clock_,
                                          std::move(limits));
  return absl::OkStatus();
}

absl::Status NatsClusterMode::OpenSnapshots() {
  const cluster::SnapshotLogOptions snapshot_options;
  auto snapshot_log = cluster::NatsEventLog::Open(
      nats_.get(),
      cluster::SnapshotStreamConfig(options_.replicas, options_.partitions,
                                    2 * int64_t{snapshot_options.max_chunks}));
  if (!snapshot_log.ok()) return snapshot_log.status();
  snapshot_log_ = *std::move(snapshot_log);
  snapshots_ = std::make_unique<cluster::PartitionSnapshots>(
      snapshot_log_.get(), snapshot_options);
  return absl::OkStatus();
}

absl::Status NatsClusterMode::Join(const std::string& id,
                                   const std::string& advertise) {
  const cluster::LeaseKeeperOptions lease_options{
      .self = id,
      .partitions = options_.partitions,
      .ttl_ns = options_.lease_ttl_ns,
      .advertise = advertise};
  if (absl::Status s = cluster::LeaseKeeper::Validate(lease_options); !s.ok()) {
    return s;
  }
  keeper_ = std::make_unique<cluster::LeaseKeeper>(leases_store_.get(), clock_,
                                                   lease_options);
  member_ = std::make_unique<cluster::ClusterMember>(keeper_.get(), log_.get(),
                                                     &sink_, publisher_.get());
  member_->EnableSnapshots(snapshots_.get(), clock_,
                           {.self = id,
                            .every_events = options_.snapshot_every_events,
                            .every_ns = options_.snapshot_every_ns});
  absl::MutexLock lock(&mu_);
  id_ = id;
  runner_ = std::make_unique<ClusterRunner>(
      keeper_.get(), member_.get(), clock_,
      ClusterRunnerOptions{.tick_ns = options_.lease_ttl_ns / 3,
                           .reachable = [this] { return Reachable(); },
                           .log = options_.log});
  runner_->Start();
  return absl::OkStatus();
}

void NatsClusterMode::Stop() {
  absl::MutexLock lock(&mu_);
  if (runner_) runner_->Stop();
}

}  // namespace

absl::StatusOr<std::unique_ptr<ClusterMode>> ClusterMode::Connect(
    const ClusterOptions& options, Ingestor* ingestor, Clock* clock,
    codec::ValidationLimits limits) {
  auto mode = std::make_unique<NatsClusterMode>(options, ingestor, clock);
  if (absl::Status s = mode->Open(std::move(limits)); !s.ok()) {
    return absl::Status(s.code(), absl::StrCat("--cluster: ", s.message()));
  }
  return mode;
}

}  // namespace goodput::server
