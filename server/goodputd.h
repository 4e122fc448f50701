#ifndef GOODPUT_SERVER_GOODPUTD_H_
#define GOODPUT_SERVER_GOODPUTD_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/notification.h"
#include "core/config.h"
#include "core/fleet_metrics.h"
#include "grpcpp/server.h"
#include "server/agent_guard.h"
#include "server/cluster_mode.h"
#include "server/fan_out.h"
#include "server/ingest_limits.h"
#include "server/ingest_service.h"
#include "server/ingest_streams.h"
#include "server/ingestor.h"
#include "server/live_state.h"
#include "server/metrics_exporter.h"
#include "server/metrics_source.h"
#include "server/peer_client.h"
#include "server/query_admission.h"
#include "server/query_pool.h"
#include "server/query_service.h"
#include "server/server_health.h"
#include "server/token_auth.h"
#include "storage/event_store.h"
#include "util/clock.h"
#include "util/grpc_credentials.h"
#include "util/logger.h"
#include "util/shard_map.h"

namespace goodput::server {

struct GoodputdOptions {
  std::string data_dir;                         // RocksDB lives here
  std::string grpc_address = "127.0.0.1:7700";  // port 0 picks one
  int64_t lateness_ns = 5 * core::kNanosPerSecond;
  bool fsync = false;  // sync the WAL per batch
  // --accept_store_loss: start on a store that lost acknowledged batches
  // (a damaged WAL) instead of refusing; loud in the log and the metrics.
  bool accept_store_loss = false;
  // Raw events of jobs that ended longer ago are deleted (Ingestor::
  // set_retention); nullopt keeps them forever.
  std::optional<int64_t> retention_ns;
  core::Config config;
  // When running jobs' states are recorded in the store
  // (--state_every_events, --state_every): restarts and late events read a
  // job's events after its newest state only.
  LiveState::StatePolicy states;
  // Prometheus /metrics (docs/metrics.md); empty serves none. Port 0
  // picks one. goodputd's flag defaults to 127.0.0.1:7701.
  std::string metrics_address;
  // --metrics_basic_auth_file (util/basic_auth.h); empty = no auth.
  std::string metrics_basic_auth_file;
  core::MetricsOptions metrics;
  // Fault injection for tests: "POINT:N" kills the process with SIGKILL
  // the Nth time POINT (before_store, after_store, before_states,
  // after_states: Ingestor::FaultHook) is reached; "hold_query:N" holds the
  // Nth admitted Report, Jobs or Fleet query until its call is cancelled
  // (shutdown tests).
  std::string fault;
  // Security and limits (docs/security.md).
  ServerTlsFlags tls;
  std::string auth_tokens;  // --auth_tokens FILE; empty = no tokens
  IngestLimitOptions limits;
  codec::ValidationLimits validation;    // sizes, labels, value bounds, age
  AgentGuard::Options agent_guard;       // --max_agent_id_bytes and so on
  uint64_t max_sequence_jump = 1000000;  // --max_sequence_jump; 0 = none
  // --agent_series_ttl: silent agents' last-seen series end after it.
  std::optional<int64_t> agent_series_ttl_ns =
      24 * 3600 * core::kNanosPerSecond;
  int max_streams = 256;  // concurrent RPCs (server threads)
  // Ingest streams open at once at most (IngestStreams); 0 = max_streams
  // minus max(2, max_streams / 8), kept for queries and health.
  int max_ingest_streams = 0;
  // An ingest stream with no batch this long (on the Clock) is ended;
  // 0 = never. goodputd's flag defaults to 15m; in process it is off, so
  // tests that move a fake clock far do not lose their streams.
  int64_t stream_idle_timeout_ns = 0;
  // gRPC keepalive pings on idle connections, and how long an answer may
  // take before the connection (and its streams) is closed as dead.
  int64_t keepalive_time_ns = 60 * core::kNanosPerSecond;
  int64_t keepalive_timeout_ns = 20 * core::kNanosPerSecond;
  // Report, Jobs and Fleet queries running at once (QueryAdmission); more
  // are refused RESOURCE_EXHAUSTED.
  int max_concurrent_queries = 4;
  // Heavy queries and /metrics collections run on threads this much nicer
  // than ingest (QueryPool; 0 = the same priority).
  int query_nice = 10;
  // How long Shutdown lets calls in flight finish before cancelling them.
  int64_t shutdown_grace_ns = 10 * core::kNanosPerSecond;
  // Log lines: text or JSON (--log_format).
  Logger::Format log_format = Logger::Format::kText;
  // When /healthz says the process is wedged or its store failing.
  ServerHealth::Options health;
  // Cluster mode (--cluster and friends; docs/scaling.md): agents' batches
  // go to the replicated log, and this instance applies the partitions it
  // holds. `cluster.urls` empty: the embedded mode.
  ClusterOptions cluster;
  // --shard=I/N (docs/scaling.md): entry I of an N-shard --server list;
  // keeps only its own hosts' heartbeats (Ingestor::set_shard) and says so
  // in its answers and its capacity counter's labels. nullopt: every one.
  std::optional<ShardPosition> shard;
  // Tests: called with the metrics port once /healthz and /readyz are
  // served and the store is open, before the live state is recovered.
  std::function<void(int metrics_port)> before_recovery;
};

// The aggregator process: serves /healthz and /readyz (ServerHealth) on the
// metrics address, opens the store, recovers the live state from it, and
// serves Ingest and Query over gRPC (and /metrics) until Shutdown. Owns
// everything it creates; `clock` must outlive it. Thread-safe.
class Goodputd {
 public:
  static absl::StatusOr<std::unique_ptr<Goodputd>> Start(
      GoodputdOptions options, Clock* clock);
  ~Goodputd();

  int port() const { return port_; }
  int metrics_port() const { return metrics_ ? metrics_->port() : 0; }
  Ingestor* ingestor() { return ingestor_.get(); }
  // Limit counters (IngestLimitStats) and refused calls, for metrics.
  IngestLimitStats limit_stats() const { return limits_->stats(); }
  int64_t auth_refused() const { return tokens_ ? tokens_->refused() : 0; }
  // Streams refused for their agent_id (AgentGuard), by reason.
  int64_t agent_refused(AgentGuard::Reason reason) const {
    return guard_->refused(reason);
  }
  // Ingest streams open, refused and ended for idleness (IngestStreams).
  IngestStreams::Stats stream_stats() const { return streams_->stats(); }
  // Stops serving gRPC: new calls are refused at once; calls in flight get
  // `shutdown_grace_ns` to finish, then are cancelled (queries stop at
  // their next cancellation check; agents resend what was not
  // acknowledged). Returns once every call has returned. Everything
  // acknowledged is durable already; destroying the Goodputd then closes
  // the store. Idempotent; the destructor calls it.
  void Shutdown();

 private:
  explicit Goodputd(GoodputdOptions options, Clock* clock)
      : options_(std::move(options)),
        log_("goodputd", options_.log_format, clock) {}
  absl::Status Init(Clock* clock);
  absl::Status OpenStore();
  absl::Status InstallFault();
  absl::Status LoadTokens();
  void MakeServices(Clock* clock);
  absl::Status StartGrpc();
  void StartReaper();
  void StopReaper();
  absl::Status StartQueryPool();
  absl::Status StartHttp();
  absl::Status OpenAndRecover(Clock* clock);
  // Cluster mode: connects to NATS (before the services), then joins
  // (once the gRPC port is known, for the default --cluster_id).
  absl::Status ConnectCluster(Clock* clock);
  absl::Status JoinCluster();
  // How this instance calls the others (its TLS flags; docs/security.md).
  absl::StatusOr<std::unique_ptr<PeerClient>> MakePeerClient() const;
  // What the answers say of whose heartbeats the capacity covers
  // (QueryService::set_capacity_hosts): "all" in cluster mode, "I/N" with
  // --shard, else empty.
  std::string CapacityHosts() const;
  void PublishMetrics(Clock* clock);
  // /metrics' families, or Unavailable until recovery is done.
  absl::StatusOr<std::vector<core::MetricFamilyData>> CollectMetrics() const;

  GoodputdOptions options_;
  const Logger log_;  // copied into every component that logs
  // Before the rest: its threads outlive every caller of Run.
  std::unique_ptr<QueryPool> query_pool_;
  std::unique_ptr<storage::EventStore> store_;
  std::unique_ptr<LiveState> live_;
  std::unique_ptr<Ingestor> ingestor_;
  std::unique_ptr<IngestLimits> limits_;
  std::shared_ptr<TokenAuth> tokens_;
  std::unique_ptr<AgentGuard> guard_;
  std::unique_ptr<IngestStreams> streams_;
  std::unique_ptr<ClusterMode> cluster_;  // null in the embedded mode
  std::unique_ptr<PeerClient> peers_;     // cluster mode: to the others
  std::unique_ptr<FanOut> fan_out_;       // cluster mode
  std::unique_ptr<IngestService> ingest_service_;
  std::unique_ptr<QueryAdmission> admission_;
  std::unique_ptr<QueryService> query_service_;
  std::unique_ptr<grpc::Server> grpc_;
  // Ends idle ingest streams (IngestStreams::CancelIdle) until stopped.
  absl::Notification stop_reaper_;
  std::thread reaper_;
  int port_ = 0;
  bool store_damaged_ = false;
  uint64_t store_lost_batches_ = 0;
  // Declared last: the exporter stops serving before the rest goes away.
  std::unique_ptr<ServerHealth> health_;
  std::unique_ptr<MetricsSource> metrics_source_;
  std::atomic<MetricsSource*> ready_source_{nullptr};  // once recovered
  std::unique_ptr<MetricsExporter> metrics_;
};

}  // namespace goodput::server

#endif  // GOODPUT_SERVER_GOODPUTD_H_
