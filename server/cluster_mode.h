// ClusterMode: everything goodputd runs in cluster mode (--cluster;
// docs/scaling.md, "Cluster mode"), wired together: one NATS connection,
// the replicated event stream and the lease bucket, the accepting side
// (ClusterFront, which the Ingest service stores agents' batches through)
// and, once joined, the apply side (a ClusterRunner thread that keeps this
// instance's leases and applies its partitions' messages through a
// PartitionIngestSink into the local Ingestor). Owns all of them; borrows
// the Ingestor and clock, which must outlive it. Thread-safe: Join and
// Stop from one thread, the rest from any.
#ifndef GOODPUT_SERVER_CLUSTER_MODE_H_
#define GOODPUT_SERVER_CLUSTER_MODE_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "cluster/member_directory.h"
#include "codec/event_validator.h"
#include "core/metric_family.h"
#include "server/cluster_front.h"
#include "server/cluster_runner.h"
#include "server/ingestor.h"
#include "util/clock.h"
#include "util/logger.h"

namespace goodput::server {

struct ClusterOptions {
  Logger log = Logger("goodputd");  // goodputd's
  std::vector<std::string> urls;    // --cluster; empty: the embedded mode
  int32_t partitions = 64;          // --cluster_partitions
  int64_t lease_ttl_ns = 10LL * 1000 * 1000 * 1000;  // --cluster_lease_ttl
  std::string id;    // --cluster_id; empty: DefaultClusterId
  int replicas = 3;  // --cluster_replicas: copies of the stream and leases
  int64_t nats_timeout_ms = 5000;  // a JetStream request's wait
  // --cluster_advertise: the gRPC HOST:PORT the other instances call this
  // one at; empty: DefaultAdvertise.
  std::string advertise;
  // --cluster_tls_ca (default --tls_client_ca) and
  // --cluster_tls_server_name: how this instance checks the others'
  // certificates when it calls them (with --tls_cert; docs/security.md).
  std::string tls_ca;
  std::string tls_server_name;
  // --cluster_snapshot_events and --cluster_snapshot_interval: when a held
  // partition's snapshot is published (docs/scaling.md, "Partition
  // snapshots").
  int64_t snapshot_every_events = 100'000;
  int64_t snapshot_every_ns = 5LL * 60 * 1000 * 1000 * 1000;
};

// "nats://a:4222,nats://b:4222" as a list; InvalidArgument naming
// --cluster for an entry that is not nats://HOST:PORT.
absl::StatusOr<std::vector<std::string>> ParseClusterUrls(
    const std::string& text);

// The default --cluster_id: `host` and `port` with every character a
// lease key cannot hold replaced by '-', e.g. "node-1-7700".
std::string DefaultClusterId(const std::string& host, int port);

// The default --cluster_advertise: the host of `grpc_address` (or
// `hostname` when it listens on every address: 0.0.0.0, [::] or none) and
// the port it listens on.
std::string DefaultAdvertise(const std::string& grpc_address,
                             const std::string& hostname, int port);

// "HOST:PORT" with a port from 1 to 65535; InvalidArgument naming
// --cluster_advertise otherwise.
absl::Status CheckAdvertise(const std::string& address);

// Prepares `ingestor` to apply partitions (no event-time or sequence-jump
// checks: messages are applied long after receipt, under log sequences).
void ConfigureClusterIngestor(Ingestor* ingestor);

class ClusterMode {
 public:
  explicit ClusterMode(int32_t partitions) : partitions_(partitions) {}
  // Connects to NATS and opens (or creates) the stream and the lease
  // bucket; Unavailable if NATS is unreachable, FailedPrecondition if this
  // goodputd was built without libnats.
  static absl::StatusOr<std::unique_ptr<ClusterMode>> Connect(
      const ClusterOptions& options, Ingestor* ingestor, Clock* clock,
      codec::ValidationLimits limits);
  virtual ~ClusterMode() = default;

  // What the Ingest service stores agents' batches through.
  virtual ClusterFront* front() = 0;
  // Starts keeping leases as `id`, advertising `advertise` to the other
  // members, and applying the held partitions.
  virtual absl::Status Join(const std::string& id,
                            const std::string& advertise) = 0;
  // The members and partition holders (null before Connect).
  virtual const cluster::MemberDirectory* directory() const { return nullptr; }
  // This instance's member id; empty before Join.
  virtual std::string id() const { return ""; }
  // Stops applying and gives the leases back; idempotent.
  virtual void Stop() = 0;
  virtual ClusterRunnerStatus status() const = 0;
  // OK while the NATS client is connected; else Unavailable saying that
  // NATS is unreachable (for /readyz, the metric and the log).
  virtual absl::Status Reachable() const = 0;
  // Whether this instance answers for `job_id` now: its partition is held.
  // A snapshot of the held partitions, for one query.
  std::function<bool(const std::string& job_id)> HeldJobs() const;
  // The partitions held now, ascending (what HeldJobs admits).
  std::vector<int32_t> HeldPartitions() const { return status().held; }
  // goodput_cluster_* families (docs/scaling.md, "Cluster mode metrics").
  std::vector<core::MetricFamilyData> Families() const;

 private:
  static void AddSnapshotFamilies(const cluster::SnapshotStats& s,
                                  std::vector<core::MetricFamilyData>* out);
  const int32_t partitions_;
};

}  // namespace goodput::server

#endif  // GOODPUT_SERVER_CLUSTER_MODE_H_
