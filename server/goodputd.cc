#include "server/goodputd.h"

#include <malloc.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <set>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "grpc/grpc.h"
#include "grpcpp/resource_quota.h"
#include "grpcpp/server_builder.h"
#include "server/threadpool_refusals.h"
#include "storage/rocksdb_event_store.h"
#include "util/basic_auth.h"

namespace goodput::server {
namespace {

// --fault=hold_query:N: the Nth admitted heavy query logs that it is held
// and waits, polling, until its call is cancelled.
QueryService::FaultHook HoldQuery(int64_t n, const Logger& log) {
  auto count = std::make_shared<std::atomic<int64_t>>(0);
  return [n, count, log](const std::function<bool()>& cancelled) {
    if (++*count != n) return;
    log.Info(absl::StrCat("fault hold_query: holding query ", n,
                          " until it is cancelled"));
    while (!cancelled()) absl::SleepFor(absl::Milliseconds(10));
  };
}

// --max_ingest_streams, or its default: --max_streams minus a reserve.
int IngestStreamCap(const GoodputdOptions& o) {
  if (o.max_ingest_streams > 0) return o.max_ingest_streams;
  return std::max(1, o.max_streams - std::max(2, o.max_streams / 8));
}

}  // namespace

absl::StatusOr<std::unique_ptr<Goodputd>> Goodputd::Start(
    GoodputdOptions options, Clock* clock) {
  std::unique_ptr<Goodputd> d(new Goodputd(std::move(options), clock));
  if (absl::Status s = d->Init(clock); !s.ok()) return s;
  return d;
}

absl::Status Goodputd::Init(Clock* clock) {
  health_ = std::make_unique<ServerHealth>(clock, options_.health);
  if (absl::Status s = StartQueryPool(); !s.ok()) return s;
  if (absl::Status s = StartHttp(); !s.ok()) return s;
  if (absl::Status s = OpenAndRecover(clock); !s.ok()) return s;
  if (absl::Status s = LoadTokens(); !s.ok()) return s;
  if (absl::Status s = ConnectCluster(clock); !s.ok()) return s;
  MakeServices(clock);
  if (absl::Status s = InstallFault(); !s.ok()) return s;
  PublishMetrics(clock);
  health_->SetPhase(ServerHealth::Phase::kStartingGrpc);
  if (absl::Status s = StartGrpc(); !s.ok()) return s;
  if (absl::Status s = JoinCluster(); !s.ok()) return s;
  health_->SetPhase(ServerHealth::Phase::kServing);
  return absl::OkStatus();
}

absl::Status Goodputd::OpenStore() {
  auto store = storage::RocksDbEventStore::Open(
      options_.data_dir,
      {.fsync = options_.fsync, .accept_loss = options_.accept_store_loss});
  if (!store.ok()) return store.status();
  if (!(*store)->damage().empty()) {
    store_damaged_ = true;
    store_lost_batches_ = (*store)->lost_batches();
    log_.Error(absl::StrCat("starting DEGRADED (--accept_store_loss): ",
                            (*store)->damage()));
  }
  store_ = *std::move(store);
  return absl::OkStatus();
}

absl::Status Goodputd::OpenAndRecover(Clock* clock) {
  if (absl::Status s = OpenStore(); !s.ok()) return s;
  health_->SetPhase(ServerHealth::Phase::kRecovering);
  if (options_.before_recovery) options_.before_recovery(metrics_port());
  live_ = std::make_unique<LiveState>(&options_.config, options_.lateness_ns,
                                      store_.get());
  ingestor_ = std::make_unique<Ingestor>(store_.get(), live_.get(), clock,
                                         options_.validation);
  ingestor_->set_retention(options_.retention_ns);
  ingestor_->set_state_policy(options_.states);
  limits_ = std::make_unique<IngestLimits>(options_.limits, clock);
  ingestor_->set_limits(limits_.get());
  ingestor_->set_ended_job_grace(options_.metrics.ended_job_grace_ns);
  ingestor_->set_max_sequence_jump(options_.max_sequence_jump);
  ingestor_->set_agent_series_ttl(options_.agent_series_ttl_ns);
  if (options_.shard) ingestor_->set_shard(*options_.shard);
  ingestor_->set_log(log_);
  if (absl::Status s = ingestor_->Recover(); !s.ok()) return s;
  health_->Watch(ingestor_.get());
  // Recovery's transient memory (every stored snapshot and state) is
  // free now; give it back to the OS instead of keeping the peak (glibc
  // keeps freed heap pages otherwise).
  malloc_trim(0);
  return absl::OkStatus();
}

void Goodputd::MakeServices(Clock* clock) {
  AgentGuard::Options guarding = options_.agent_guard;
  guarding.log = log_;
  guard_ = std::make_unique<AgentGuard>(guarding, store_.get(), clock);
  streams_ = std::make_unique<IngestStreams>(
      IngestStreams::Options{.max_streams = IngestStreamCap(options_),
                             .idle_timeout_ns = options_.stream_idle_timeout_ns,
                             .log = log_},
      clock);
  ingest_service_ = std::make_unique<IngestService>(
      ingestor_.get(), limits_.get(), guard_.get(), tokens_.get(),
      streams_.get(), log_);
  if (cluster_) {
    ingest_service_->set_cluster_front(cluster_->front());
    health_->set_ready_check(
        [cluster = cluster_.get()] { return cluster->Reachable(); });
  }
  admission_ = std::make_unique<QueryAdmission>(
      options_.max_concurrent_queries,
      [limits = limits_.get()] { limits->CountRefusedQuery(); });
  query_service_ =
      std::make_unique<QueryService>(ingestor_.get(), store_.get(), clock,
                                     admission_.get(), query_pool_.get());
  query_service_->set_capacity_hosts(CapacityHosts());
  query_service_->set_segment_rate([this](const std::string& accelerator) {
    MetricsSource* source = ready_source_.load();
    return source == nullptr ? 0.0 : source->InterruptionRate(accelerator);
  });
  if (cluster_) {
    query_service_->set_job_filter(
        [cluster = cluster_.get()] { return cluster->HeldJobs(); });
    fan_out_ = std::make_unique<FanOut>(
        cluster_->directory(), options_.cluster.partitions,
        [cluster = cluster_.get()] { return cluster->id(); });
    query_service_->set_cluster(QueryService::Cluster{
        .held = [cluster =
                     cluster_.get()] { return cluster->HeldPartitions(); },
        .fan_out = fan_out_.get(),
        .peers = peers_.get()});
  }
}

absl::StatusOr<std::unique_ptr<PeerClient>> Goodputd::MakePeerClient() const {
  ClientTlsFlags tls;
  if (!options_.tls.cert.empty()) {
    tls.ca = !options_.cluster.tls_ca.empty() ? options_.cluster.tls_ca
                                              : options_.tls.client_ca;
    if (tls.ca.empty()) {
      return absl::InvalidArgumentError(
          "--cluster_tls_ca: required with --tls_cert in cluster mode (the CA "
          "that signed the other instances' certificates; default "
          "--tls_client_ca)");
    }
    tls.cert = options_.tls.cert;
    tls.key = options_.tls.key;
    tls.server_name = options_.cluster.tls_server_name;
  }
  auto peers = PeerClient::Create(tls);
  if (!peers.ok()) {
    return absl::Status(peers.status().code(),
                        absl::StrCat("cluster mode, calling the other "
                                     "instances: ",
                                     peers.status().message()));
  }
  return peers;
}

absl::Status Goodputd::ConnectCluster(Clock* clock) {
  if (options_.cluster.urls.empty()) return absl::OkStatus();
  ConfigureClusterIngestor(ingestor_.get());
  options_.cluster.log = log_;
  auto cluster = ClusterMode::Connect(options_.cluster, ingestor_.get(), clock,
                                      options_.validation);
  if (!cluster.ok()) return cluster.status();
  cluster_ = *std::move(cluster);
  auto peers = MakePeerClient();
  if (!peers.ok()) return peers.status();
  peers_ = *std::move(peers);
  return absl::OkStatus();
}

absl::Status Goodputd::JoinCluster() {
  if (!cluster_) return absl::OkStatus();
  char host[256] = {};
  gethostname(host, sizeof(host) - 1);
  std::string id = options_.cluster.id;
  if (id.empty()) id = DefaultClusterId(host, port_);
  std::string advertise = options_.cluster.advertise;
  if (advertise.empty()) {
    advertise = DefaultAdvertise(options_.grpc_address, host, port_);
  }
  if (absl::Status s = cluster_->Join(id, advertise); !s.ok()) return s;
  log_.Info(absl::StrCat("cluster member ", id, " of ",
                         absl::StrJoin(options_.cluster.urls, ","), ", ",
                         options_.cluster.partitions,
                         " partitions, advertising ", advertise),
            {{"cluster_id", id}});
  return absl::OkStatus();
}

absl::Status Goodputd::LoadTokens() {
  if (options_.auth_tokens.empty()) return absl::OkStatus();
  auto tokens = TokenAuth::Load(options_.auth_tokens);
  if (!tokens.ok()) return tokens.status();
  tokens_ = *std::move(tokens);
  return absl::OkStatus();
}

absl::Status Goodputd::StartGrpc() {
  auto credentials = MakeServerCredentials(options_.tls, tokens_);
  if (!credentials.ok()) return credentials.status();
  grpc::ResourceQuota quota("goodputd");
  quota.SetMaxThreads(options_.max_streams + 2);  // + gRPC's pollers
  grpc::ServerBuilder builder;
  builder.AddListeningPort(options_.grpc_address, *credentials, &port_);
  builder.SetMaxReceiveMessageSize(limits_->TransportLimit());
  builder.SetResourceQuota(quota);
  // Dead peers (a half-open connection) end their streams within
  // keepalive time + timeout; agents' own pings are allowed that often.
  const int keepalive_ms =
      static_cast<int>(options_.keepalive_time_ns / 1000000);
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIME_MS, keepalive_ms);
  builder.AddChannelArgument(
      GRPC_ARG_KEEPALIVE_TIMEOUT_MS,
      static_cast<int>(options_.keepalive_timeout_ns / 1000000));
  builder.AddChannelArgument(
      GRPC_ARG_HTTP2_MIN_RECV_PING_INTERVAL_WITHOUT_DATA_MS, keepalive_ms / 2);
  std::vector<
      std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>>
      interceptors;
  interceptors.push_back(std::make_unique<ThreadpoolRefusals>(
      [limits = limits_.get()] { limits->CountRefusedStream(); }));
  builder.experimental().SetInterceptorCreators(std::move(interceptors));
  builder.RegisterService(ingest_service_.get());
  builder.RegisterService(query_service_.get());
  grpc_ = builder.BuildAndStart();
  if (grpc_ == nullptr || port_ == 0) {
    return absl::UnavailableError(absl::StrCat(
        "--grpc_address: cannot listen on ", options_.grpc_address));
  }
  StartReaper();
  return absl::OkStatus();
}

void Goodputd::StartReaper() {
  // Checks a few times per idle timeout (at most every second), in real
  // time; what counts as idle is measured on the clock. Each round also
  // drains rebuilds that late events queued, up to kDrainPerRound stored
  // events (a few tens of ms under the ingest lock), and applies the
  // retention to the evicted jobs when it is due (Ingestor::RetireEvicted).
  constexpr int64_t kDrainPerRound = 20000;
  const int64_t idle_ns = options_.stream_idle_timeout_ns;
  const absl::Duration every =
      idle_ns <= 0 ? absl::Seconds(1)
                   : std::clamp(absl::Nanoseconds(idle_ns) / 4,
                                absl::Milliseconds(10), absl::Seconds(1));
  reaper_ = std::thread([this, every, idle_ns] {
    while (!stop_reaper_.WaitForNotificationWithTimeout(every)) {
      if (idle_ns > 0) streams_->CancelIdle();
      ingestor_->DrainRebuilds(kDrainPerRound);
      // Counted and logged (store maintenance); retried at the next check.
      (void)ingestor_->RetireEvicted(/*force=*/false);
    }
  });
}

void Goodputd::StopReaper() {
  if (!reaper_.joinable()) return;
  stop_reaper_.Notify();
  reaper_.join();
}

absl::Status Goodputd::InstallFault() {
  if (options_.fault.empty()) return absl::OkStatus();
  std::vector<std::string> parts = absl::StrSplit(options_.fault, ':');
  int64_t n = 0;
  const std::set<std::string> points = {"before_store", "after_store",
                                        "before_states", "after_states"};
  if (parts.size() != 2 || !absl::SimpleAtoi(parts[1], &n) || n < 1 ||
      (points.count(parts[0]) == 0 && parts[0] != "hold_query")) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--fault: want POINT:N with POINT one of before_store, after_store, "
        "before_states, after_states, hold_query; got ",
        options_.fault));
  }
  if (parts[0] == "hold_query") {
    query_service_->set_fault_hook(HoldQuery(n, log_));
    return absl::OkStatus();
  }
  auto count = std::make_shared<std::atomic<int64_t>>(0);
  ingestor_->set_fault_hook([point = parts[0], n, count](const char* at) {
    if (point == at && ++*count == n) raise(SIGKILL);
  });
  return absl::OkStatus();
}

absl::Status Goodputd::StartQueryPool() {
  // One thread per admitted heavy query, and one for /metrics.
  auto pool = QueryPool::Start({.threads = options_.max_concurrent_queries + 1,
                                .nice = options_.query_nice});
  if (!pool.ok()) return pool.status();
  query_pool_ = *std::move(pool);
  return absl::OkStatus();
}

absl::Status Goodputd::StartHttp() {
  if (options_.metrics_address.empty()) return absl::OkStatus();
  std::shared_ptr<const BasicAuth> auth;
  if (!options_.metrics_basic_auth_file.empty()) {
    auto loaded = BasicAuth::Load("--metrics_basic_auth_file",
                                  options_.metrics_basic_auth_file);
    if (!loaded.ok()) return loaded.status();
    auth = *std::move(loaded);
  }
  auto exporter = MetricsExporter::Start(
      options_.metrics_address,
      [this] {
        absl::StatusOr<std::vector<core::MetricFamilyData>> families;
        query_pool_->Run([&] { families = CollectMetrics(); });
        return families;
      },
      std::move(auth),
      [health = health_.get()](absl::string_view path) {
        return path == "/readyz" ? health->Readyz() : health->Healthz();
      },
      log_);
  if (!exporter.ok()) return exporter.status();
  metrics_ = *std::move(exporter);
  return absl::OkStatus();
}

std::string Goodputd::CapacityHosts() const {
  if (!options_.cluster.urls.empty()) return "all";
  if (!options_.shard) return "";
  return absl::StrCat(options_.shard->index, "/", options_.shard->count);
}

void Goodputd::PublishMetrics(Clock* clock) {
  core::MetricsOptions metrics = options_.metrics;
  if (options_.shard) metrics.capacity_shard = CapacityHosts();
  metrics_source_ = std::make_unique<MetricsSource>(
      &options_.config, metrics, ingestor_.get(), clock, limits_.get(),
      tokens_.get(), store_.get(), guard_.get(), log_);
  metrics_source_->set_store_damage(store_damaged_, store_lost_batches_);
  metrics_source_->set_streams(streams_.get());
  if (cluster_) {  // the jobs of the partitions held at each scrape
    metrics_source_->set_job_filter(
        [cluster = cluster_.get()] { return cluster->HeldJobs(); });
  }
  ready_source_ = metrics_source_.get();
}

absl::StatusOr<std::vector<core::MetricFamilyData>> Goodputd::CollectMetrics()
    const {
  MetricsSource* source = ready_source_.load();
  if (source == nullptr) {
    return absl::UnavailableError(
        "no metrics yet: goodputd is opening its store and recovering");
  }
  std::vector<core::MetricFamilyData> families = source->Collect();
  if (cluster_) {
    for (core::MetricFamilyData& f : cluster_->Families()) {
      families.push_back(std::move(f));
    }
  }
  return families;
}

void Goodputd::Shutdown() {
  StopReaper();
  if (health_) health_->SetPhase(ServerHealth::Phase::kStopping);
  if (grpc_) {
    grpc_->Shutdown(std::chrono::system_clock::now() +
                    std::chrono::nanoseconds(options_.shutdown_grace_ns));
    grpc_.reset();
    // Give the leases back at once: the partitions move now, not after
    // the TTL.
    if (cluster_) cluster_->Stop();
    // Nothing is ingested any more: record every job's state, so the next
    // start reads no event twice. Best effort: a failure only costs time.
    if (ingestor_) (void)ingestor_->SaveAllStates();
  }
}

Goodputd::~Goodputd() { Shutdown(); }

}  // namespace goodput::server
