// Agent: goodput-agent's components wired together (SPEC section 5):
// Intake (Unix socket) -> Batcher -> Spool (disk) -> Uplink (gRPC to
// goodputd), plus Heartbeat, the ticker thread that drives the batcher's
// delay and the heartbeat on the Clock, and the HTTP /metrics and /healthz.
// With several --server entries (a shard list) there is one batcher, spool
// and uplink per shard behind a ShardRouter (docs/scaling.md); one entry is
// exactly the single-server agent.
// Owns every component; does not own the clock or an injected sleeper.
// Thread-safe: Stop() and the accessors may be called from any thread.
//
// Shutdown (Stop, on SIGTERM/SIGINT): stop taking lines, write the waiting
// batch to the spool, stop the uplink. Unacknowledged batches stay in the
// spool and are sent by the next run. A SIGKILL loses only the events
// still in the batcher (at most batch_delay / batch_events worth).
#ifndef GOODPUT_AGENT_AGENT_H_
#define GOODPUT_AGENT_AGENT_H_

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "agent/agent_flags.h"
#include "agent/batcher.h"
#include "agent/client_spool_reader.h"
#include "agent/event_ids.h"
#include "agent/heartbeat.h"
#include "agent/intake.h"
#include "agent/metrics.h"
#include "agent/shard_router.h"
#include "agent/sleeper.h"
#include "agent/spool.h"
#include "agent/uplink.h"
#include "logs/log_profile.h"
#include "logs/log_tailer.h"
#include "util/clock.h"
#include "util/file_system.h"
#include "util/http_server.h"
#include "util/logger.h"

namespace goodput::agent {

class Agent {
 public:
  // Opens the spool, binds the socket and the HTTP address, and starts.
  // `sleeper` may be null (a RealSleeper is used); so may `fs` (the spools
  // use the real disk). Neither is owned.
  static absl::StatusOr<std::unique_ptr<Agent>> Start(const AgentFlags& flags,
                                                      Clock* clock,
                                                      Sleeper* sleeper,
                                                      FileSystem* fs = nullptr);
  ~Agent();
  Agent(const Agent&) = delete;
  Agent& operator=(const Agent&) = delete;

  // Idempotent; see the header comment for what it does.
  void Stop();

  int metrics_port() const { return http_ ? http_->port() : 0; }
  // Shard 0's identity, spool and uplink (the only ones with one server).
  const std::string& agent_id() const { return lanes_[0].spool->agent_id(); }
  Spool& spool() { return *lanes_[0].spool; }
  Uplink& uplink() { return *lanes_[0].uplink; }
  // The shards of --server, and each one's spool and uplink.
  size_t shards() const { return lanes_.size(); }
  Spool& spool(size_t shard) { return *lanes_[shard].spool; }
  Uplink& uplink(size_t shard) { return *lanes_[shard].uplink; }
  Intake& intake() { return *intake_; }

  // The spools of every shard together: bytes, batches and errors summed,
  // the oldest batch of any, full (failing) if any is, a last error of any.
  SpoolStats SpoolTotals() const;

  // What /metrics and /healthz show, from the components' Stats now.
  AgentSnapshot Snapshot() const;
  // GET /metrics and GET /healthz.
  HttpResponse HandleHttp(absl::string_view method, absl::string_view path);
  // The one-line JSON of /healthz.
  std::string HealthJson(const AgentSnapshot& a) const;

 private:
  // One shard's pipeline: events -> batcher -> spool -> uplink.
  struct Lane {
    std::unique_ptr<Spool> spool;
    std::unique_ptr<Batcher> batcher;
    std::unique_ptr<Uplink> uplink;
  };

  Agent(const AgentFlags& flags, Clock* clock, Sleeper* sleeper,
        FileSystem* fs);
  absl::Status Init();
  // Opens one spool per shard of --server.
  absl::Status OpenSpools();
  // The uplink of shard `i`: its address and the --tls_* credentials.
  Uplink::Options UplinkOptions(size_t i) const;
  // Batchers, uplinks, router, heartbeat and ticker (the spools are open).
  void StartPipeline(const std::string& host);
  // The earliest batcher deadline, if any batch waits.
  std::optional<int64_t> BatchDeadline() const;
  absl::Status StartHttp();
  void Tick();
  // Logs what the components' rate limits suppressed (`all`: also in the
  // intervals still running).
  void FlushSuppressedLogs(bool all);
  // Flushes every shard's batcher into its spool.
  void FlushBatchers();
  // Ingests client spool files (--client_spool_dir), at most every 500 ms.
  void ScanClientSpool();
  // Loads --log_profile and starts following --tail.
  absl::Status StartTail();
  // Reads what the --tail files gained, at most every 250 ms.
  void PollTail();
  void Kick();
  // Every shard's uplink has a stream open.
  bool AllConnected() const;
  // /healthz: 503 while the spool is full or failing.
  HttpResponse Health(const AgentSnapshot& a) const;

  const AgentFlags flags_;
  Clock* const clock_;
  const Logger log_;  // --log_format; copied into every component
  std::unique_ptr<RealSleeper> own_sleeper_;
  Sleeper* const sleeper_;
  FileSystem* const fs_;  // null: the real disk
  std::shared_ptr<grpc::ChannelCredentials> credentials_;  // of --tls_*
  std::optional<ShardMap> shard_map_;                      // of --server
  std::unique_ptr<EventIds> event_ids_;   // --spool_dir/event_ids
  std::vector<Lane> lanes_;               // one per --server entry
  std::unique_ptr<ShardRouter> router_;   // null with one server
  EventSink* sink_ = nullptr;             // router_, or the one batcher
  std::unique_ptr<Heartbeat> heartbeat_;  // null without --chips
  std::unique_ptr<Intake> intake_;
  std::unique_ptr<ClientSpoolReader> client_spool_;  // null without the flag
  int64_t next_client_scan_ns_ = 0;                  // ticker thread only
  std::unique_ptr<logs::LogProfile> tail_profile_;   // null without --tail
  std::unique_ptr<logs::LogTailer> tailer_;          // ticker thread only
  int64_t next_tail_ns_ = 0;                         // ticker thread only
  std::unique_ptr<HttpServer> http_;
  std::thread ticker_;

  absl::Mutex mu_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  bool kicked_ ABSL_GUARDED_BY(mu_) = false;
  bool stopped_ ABSL_GUARDED_BY(mu_) = false;
};

// Runs an agent until `stop` is notified, then stops it cleanly. Calls
// `on_started` (if set) once it runs, e.g. for a test to learn its port.
absl::Status RunAgent(const AgentFlags& flags, absl::Notification* stop,
                      const std::function<void(Agent*)>& on_started = {});

}  // namespace goodput::agent

#endif  // GOODPUT_AGENT_AGENT_H_
