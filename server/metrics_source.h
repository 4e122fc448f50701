#ifndef GOODPUT_SERVER_METRICS_SOURCE_H_
#define GOODPUT_SERVER_METRICS_SOURCE_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "core/config.h"
#include "core/fleet_metrics.h"
#include "core/metric_family.h"
#include "server/agent_guard.h"
#include "server/ingest_limits.h"
#include "server/ingest_streams.h"
#include "server/ingestor.h"
#include "server/token_auth.h"
#include "server/windows_store.h"
#include "storage/event_store.h"
#include "util/clock.h"
#include "util/logger.h"

namespace goodput::server {

// Everything goodputd exports (docs/metrics.md), as plain families: on each
// Collect it takes the live state's recognized time into core::FleetMetrics
// as of one cut, a few jobs per hold of the ingest lock (Ingestor::Scrape:
// ingest does no metrics work, but copies a job it changes before the
// scrape reached it), finishes the update outside that lock, then adds
// ingest health, limit and auth refusals.
// With a store, the FleetMetrics state (windows, ledgers, counters) is
// kept in it (WindowsStore: a record and parts of the jobs): loaded when
// constructed, and what changed written after each Collect, so a restarted
// server's gauges go on where they were. Does not own the ingestor, clock,
// limits, tokens or store (all but the ingestor and clock may be null), which
// must outlive it; `config` too. With a job filter (cluster mode: the jobs of
// the partitions this instance holds now), the goodput families cover only
// the jobs it admits at each Collect. Thread-safe.
class MetricsSource {
 public:
  MetricsSource(const core::Config* config, core::MetricsOptions options,
                Ingestor* ingestor, Clock* clock,
                const IngestLimits* limits = nullptr,
                const TokenAuth* tokens = nullptr,
                storage::EventStore* store = nullptr,
                const AgentGuard* guard = nullptr,
                Logger log = Logger("goodputd"));

  std::vector<core::MetricFamilyData> Collect();

  // Issue 18: core::FleetMetrics::InterruptionRates of `accelerator` as
  // of the last Collect (or the state loaded at start); 0 when unknown.
  double InterruptionRate(const std::string& accelerator);

  // Whether a job is exported; a new one is made per Collect (it may
  // snapshot what it needs, e.g. the partitions held now). A running or
  // held ended job it refuses drops out of the per-job series and gauges
  // (its counted time stays in the counters, which never decrease), and
  // comes back once admitted again. Ended jobs already evicted into
  // EndedJobTotals groups carry no job id and stay counted. Null (the
  // default) exports every job. Call before the first Collect.
  using JobFilter = std::function<bool(const std::string& job_id)>;
  void set_job_filter(std::function<JobFilter()> make) {
    absl::MutexLock lock(&mu_);
    make_job_filter_ = std::move(make);
  }

  // Ingest streams open, refused (max_ingest_streams) and ended idle; not
  // owned, must outlive this. Call before the first Collect.
  void set_streams(const IngestStreams* streams) {
    absl::MutexLock lock(&mu_);
    streams_ = streams;
  }

  // What the store found missing at start and goodputd accepted
  // (--accept_store_loss; docs/delivery.md, "A damaged WAL"): exported as
  // goodput_store_damaged and goodput_store_lost_batches. Call before the
  // first Collect.
  void set_store_damage(bool damaged, uint64_t lost_batches) {
    absl::MutexLock lock(&mu_);
    store_damaged_ = damaged;
    store_lost_batches_ = lost_batches;
  }

 private:
  // What Collect takes from the live state at the cut of its scrape.
  struct Cut {
    LiveState::Stats live;
    std::map<std::string, double> capacity;  // chip-seconds at applied_ns
    int64_t applied_ns = 0;
    int64_t evicted_jobs = 0;
    size_t live_jobs = 0;
  };
  // Begins fleet_'s update and takes into it the evicted jobs' groups and
  // every job held at the cut that `keep` admits (all if null), a few jobs
  // per hold of the ingest lock (Ingestor::Scrape).
  Cut ScrapeLive(const JobFilter& keep) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Each of `job_ids`' current hosts (LiveState::HostsOf), read at most
  // kHostJobsPerHold jobs per hold of the ingest lock, and no job after
  // kHostsPerHold hosts (a job keeps at most 4096: LiveJob::hosts).
  std::vector<std::vector<std::string>> CurrentHosts(
      const std::vector<std::string>& job_ids);
  static constexpr size_t kHostJobsPerHold = 256;
  static constexpr size_t kHostsPerHold = 4096;
  // Loads the stored state into fleet_, if any; says why not in the log.
  void LoadState() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Writes fleet_'s state if it differs from the last one written.
  void SaveState() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void AddStateFamily(std::vector<core::MetricFamilyData>* out) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const Logger log_;
  Ingestor* ingestor_;
  Clock* clock_;
  const IngestLimits* limits_;
  const TokenAuth* tokens_;
  const AgentGuard* guard_;
  storage::EventStore* store_;
  absl::Mutex mu_;
  core::FleetMetrics fleet_ ABSL_GUARDED_BY(mu_);
  // fleet_'s state in the store (null without a store).
  std::unique_ptr<WindowsStore> windows_ ABSL_GUARDED_BY(mu_);
  int64_t load_failures_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t write_failures_ ABSL_GUARDED_BY(mu_) = 0;
  const IngestStreams* streams_ ABSL_GUARDED_BY(mu_) = nullptr;
  bool store_damaged_ ABSL_GUARDED_BY(mu_) = false;
  uint64_t store_lost_batches_ ABSL_GUARDED_BY(mu_) = 0;
  std::function<JobFilter()> make_job_filter_ ABSL_GUARDED_BY(mu_);
};

}  // namespace goodput::server

#endif  // GOODPUT_SERVER_METRICS_SOURCE_H_
