#include "server/metrics_source.h"

#include <optional>
#include <utility>

#include "proto/metrics_state.pb.h"

namespace goodput::server {
namespace {

using core::AddSample;
using core::MetricFamilyData;
using core::MetricKind;
using core::NewFamily;

void AddBatchFamilies(const IngestStats& s,
                      std::vector<MetricFamilyData>* out) {
  auto batches =
      NewFamily("goodput_ingest_batches_total",
                "Batches from agents, by result.", MetricKind::kCounter);
  const int64_t stored = s.batches - s.duplicate_batches - s.failed_batches;
  AddSample(&batches, {{"result", "stored"}}, stored);
  AddSample(&batches, {{"result", "duplicate"}}, s.duplicate_batches);
  AddSample(&batches, {{"result", "failed"}}, s.failed_batches);
  auto events = NewFamily("goodput_ingest_events_total",
                          "Events judged, by result.", MetricKind::kCounter);
  AddSample(&events, {{"result", "accepted"}}, s.accepted_events);
  AddSample(&events, {{"result", "rejected"}}, s.rejected_events);
  auto dead =
      NewFamily("goodput_dead_letters_total",
                "Rejected events kept as dead letters.", MetricKind::kCounter);
  AddSample(&dead, {}, s.rejected_events);
  out->push_back(std::move(batches));
  out->push_back(std::move(events));
  out->push_back(std::move(dead));
  auto writes = NewFamily(
      "goodput_ingest_store_writes_total",
      "Store writes of agents' batches: batches that waited for the ingest "
      "lock together are stored in one (group commit).",
      MetricKind::kCounter);
  AddSample(&writes, {}, s.batch_writes);
  auto busy = NewFamily(
      "goodput_ingest_busy_seconds_total",
      "Server time the ingest path held the ingest lock for batches; a rate "
      "near 1 means ingest is saturated.",
      MetricKind::kCounter);
  AddSample(&busy, {}, static_cast<double>(s.busy_ns) * 1e-9);
  out->push_back(std::move(writes));
  out->push_back(std::move(busy));
}

void AddMemoryFamily(size_t live_jobs, int64_t evicted_jobs,
                     std::vector<MetricFamilyData>* out) {
  auto jobs = NewFamily("goodput_jobs_in_memory",
                        "Jobs held in memory one by one (live), and ended "
                        "jobs evicted from it (evicted).",
                        MetricKind::kGauge);
  AddSample(&jobs, {{"held", "live"}}, static_cast<double>(live_jobs));
  AddSample(&jobs, {{"held", "evicted"}}, static_cast<double>(evicted_jobs));
  out->push_back(std::move(jobs));
}

void AddHealthFamilies(const IngestStats& s, const LiveState::Stats& live,
                       int64_t applied_ns, int64_t now_ns,
                       std::vector<MetricFamilyData>* out) {
  auto late = NewFamily(
      "goodput_ingest_late_events_total",
      "Late-event rebuilds: a batch's events later than the lateness, once "
      "per job and batch (the job was rebuilt from the store).",
      MetricKind::kCounter);
  AddSample(&late, {}, live.late_rebuilds);
  auto seen =
      NewFamily("goodput_agent_last_seen_timestamp_seconds",
                "Server time of the agent's last batch.", MetricKind::kGauge);
  for (const auto& [agent, ns] : s.agent_last_seen_ns) {
    AddSample(&seen, {{"agent_id", agent}}, static_cast<double>(ns) * 1e-9);
  }
  auto beat = NewFamily("goodput_agent_last_heartbeat_timestamp_seconds",
                        "Server time of the agent's last batch with a host "
                        "heartbeat.",
                        MetricKind::kGauge);
  for (const auto& [agent, ns] : s.agent_last_heartbeat_ns) {
    AddSample(&beat, {{"agent_id", agent}}, static_cast<double>(ns) * 1e-9);
  }
  auto lag = NewFamily("goodput_ingest_lag_seconds",
                       "Server time minus the newest applied event time.",
                       MetricKind::kGauge);
  if (applied_ns > 0) {
    AddSample(&lag, {}, static_cast<double>(now_ns - applied_ns) * 1e-9);
  }
  out->push_back(std::move(late));
  out->push_back(std::move(seen));
  out->push_back(std::move(beat));
  out->push_back(std::move(lag));
}

// Restores of jobs from the store and the state records behind them
// (storage/KEY_LAYOUT.md, "Running jobs' states").
void AddStateFamilies(const IngestStats& s, const LiveState::Stats& live,
                      std::vector<MetricFamilyData>* out) {
  auto restores = NewFamily(
      "goodput_job_restores_total",
      "Jobs restored from the store (restart, late event, evicted job's "
      "event), by where the restore started: a state record or the job's "
      "first event.",
      MetricKind::kCounter);
  AddSample(&restores, {{"from", "state"}}, live.restores_from_state);
  AddSample(&restores, {{"from", "events"}},
            live.restores - live.restores_from_state);
  auto read =
      NewFamily("goodput_job_restore_events_read_total",
                "Stored events read by job restores.", MetricKind::kCounter);
  AddSample(&read, {}, live.restored_events);
  auto records = NewFamily(
      "goodput_state_records_total",
      "Running jobs' state records: written, failed (write errors), stale "
      "(skipped: a later-stored event sorts before them), unreadable "
      "(skipped: torn or from another version), imported (jobs taken over "
      "from partition snapshots, cluster mode) and imported_stale (imported "
      "ones kept though a late HOSTS/FLEET exclusion starts before them).",
      MetricKind::kCounter);
  AddSample(&records, {{"result", "written"}}, s.states_written);
  AddSample(&records, {{"result", "failed"}}, s.state_errors);
  AddSample(&records, {{"result", "stale"}}, live.stale_states);
  AddSample(&records, {{"result", "unreadable"}}, live.unreadable_states);
  AddSample(&records, {{"result", "imported"}}, live.imported_jobs);
  AddSample(&records, {{"result", "imported_stale"}},
            live.imported_exclusions_missed);
  auto fleet = NewFamily(
      "goodput_fleet_state_records_total",
      "Fleet state records (capacity and HOSTS/FLEET exclusions through a "
      "batch, so a restart scans only later batches): written, failed "
      "(write errors), unreadable (at a restart: torn, another version or "
      "host timeout; an older record or every batch is scanned), "
      "rebuild_start (capacity rebuilds after a late HOSTS/FLEET exclusion "
      "that started from a record) and rebuild_inexact (ones that started "
      "from a record the exclusion starts before, as retention deleted the "
      "heartbeats before it).",
      MetricKind::kCounter);
  AddSample(&fleet, {{"result", "written"}}, s.fleet_states_written);
  AddSample(&fleet, {{"result", "failed"}}, s.fleet_state_errors);
  AddSample(&fleet, {{"result", "unreadable"}}, live.unreadable_fleet_states);
  AddSample(&fleet, {{"result", "rebuild_start"}},
            live.capacity_rebuilds_from_record);
  AddSample(&fleet, {{"result", "rebuild_inexact"}},
            live.capacity_rebuilds_inexact);
  auto fleet_deleted = NewFamily(
      "goodput_retention_fleet_batches_total",
      "Stored batches whose heartbeats and HOSTS/FLEET exclusions --retention "
      "deleted (a spaced fleet state record keeps the capacity before them).",
      MetricKind::kCounter);
  AddSample(&fleet_deleted, {}, s.fleet_batches_deleted);
  auto other_shard = NewFamily(
      "goodput_heartbeats_other_shard_total",
      "Host heartbeats left out because their host's capacity shard is "
      "another (--shard=I/N; an agent that sends them to every shard).",
      MetricKind::kCounter);
  AddSample(&other_shard, {}, s.other_shard_heartbeats);
  auto pending = NewFamily(
      "goodput_job_rebuilds_pending",
      "Jobs waiting in the late-event rebuild queue (their series lag until "
      "rebuilt).",
      MetricKind::kGauge);
  AddSample(&pending, {}, static_cast<double>(live.rebuilds_pending));
  out->push_back(std::move(restores));
  out->push_back(std::move(read));
  out->push_back(std::move(records));
  out->push_back(std::move(other_shard));
  out->push_back(std::move(fleet));
  out->push_back(std::move(fleet_deleted));
  out->push_back(std::move(pending));
}

// Failed store maintenance by operation (IngestStats), every op with a
// sample from the start (0 until hit), so increase() and
// GoodputStoreMaintenanceFailing see the first failure.
void AddMaintenanceFamily(const IngestStats& s,
                          std::vector<MetricFamilyData>* out) {
  auto f = NewFamily(
      "goodput_store_maintenance_failures_total",
      "Failed store maintenance attempts, by operation: evict (ended jobs "
      "leaving memory), snapshot (ended jobs' final snapshots), retire and "
      "retire_evicted (--retention of held and of evicted jobs' raw events), "
      "retire_heartbeats (--retention of heartbeats). Nothing accepted is "
      "lost; each but snapshot is retried at the next check.",
      MetricKind::kCounter);
  for (const auto& [op, n] :
       {std::pair("evict", s.eviction_errors),
        std::pair("snapshot", s.snapshot_errors),
        std::pair("retire", s.retirement_errors),
        std::pair("retire_evicted", s.evicted_retirement_errors),
        std::pair("retire_heartbeats", s.heartbeat_retention_errors)}) {
    AddSample(&f, {{"op", op}}, n);
  }
  out->push_back(std::move(f));
}

// Every limit and reason has a sample (0 until hit), so rate() and alerts
// see the first hit.
void AddRefusalFamilies(const IngestLimitStats& s, const TokenAuth* tokens,
                        const IngestStreams::Stats& streams,
                        std::vector<MetricFamilyData>* out) {
  auto limits = NewFamily(
      "goodput_limit_rejected_total",
      "Refusals by the limit hit (docs/security.md): batches for "
      "max_batch_events, max_batch_bytes and agent_rate, events for "
      "max_jobs, max_labels and max_string_bytes, calls for max_streams, "
      "max_ingest_streams and max_concurrent_queries.",
      MetricKind::kCounter);
  for (const auto& [limit, n] :
       {std::pair("max_batch_events", s.batches_too_large),
        std::pair("max_batch_bytes", s.bytes_limited_batches),
        std::pair("agent_rate", s.rate_limited_batches),
        std::pair("max_jobs", s.jobs_limited_events),
        std::pair("max_labels", s.labels_limited_events),
        std::pair("max_string_bytes", s.strings_limited_events),
        std::pair("max_streams", s.refused_streams),
        std::pair("max_concurrent_queries", s.refused_queries),
        std::pair("max_ingest_streams", streams.refused)}) {
    AddSample(&limits, {{"limit", limit}}, n);
  }
  auto auth = NewFamily("goodput_auth_refused_total",
                        "gRPC calls refused UNAUTHENTICATED (--auth_tokens), "
                        "by reason.",
                        MetricKind::kCounter);
  for (int r = 0; r < TokenAuth::kNumReasons; ++r) {
    const auto reason = static_cast<TokenAuth::Reason>(r);
    AddSample(&auth, {{"reason", TokenAuth::ReasonName(reason)}},
              tokens != nullptr ? tokens->refused(reason) : 0);
  }
  out->push_back(std::move(limits));
  out->push_back(std::move(auth));
}

// Every reason has a sample (0 until hit), so increase() and alerts see the
// first refusal.
void AddAgentFamilies(const IngestStats& s, const AgentGuard* guard,
                      std::vector<MetricFamilyData>* out) {
  auto refused = NewFamily(
      "goodput_agent_refused_total",
      "Ingest streams ended for their batches' agent_id or sequence "
      "(docs/security.md, \"Agent identities\"), by reason: id_too_long, "
      "identity_mismatch (credentials not bound to the id), id_in_use (two "
      "live streams for one id), sequence_jump and diverging_sequence (an "
      "acknowledged sequence with other events: two agents with one id).",
      MetricKind::kCounter);
  for (int r = 0; r < AgentGuard::kNumReasons; ++r) {
    const auto reason = static_cast<AgentGuard::Reason>(r);
    const int64_t n = reason == AgentGuard::kSequenceJump ? s.sequence_jumps
                      : reason == AgentGuard::kDivergingSequence
                          ? s.diverging_sequences
                      : guard != nullptr ? guard->refused(reason)
                                         : 0;
    AddSample(&refused, {{"reason", AgentGuard::ReasonName(reason)}}, n);
  }
  auto expired = NewFamily(
      "goodput_agent_series_expired_total",
      "Agents whose goodput_agent_last_seen_timestamp_seconds series ended "
      "after --agent_series_ttl of silence.",
      MetricKind::kCounter);
  AddSample(&expired, {}, s.expired_agent_series);
  out->push_back(std::move(refused));
  out->push_back(std::move(expired));
}

void AddStreamFamilies(const IngestStreams::Stats& s,
                       std::vector<MetricFamilyData>* out) {
  auto open = NewFamily("goodput_ingest_streams_open",
                        "Agent ingest streams open now (at most "
                        "--max_ingest_streams).",
                        MetricKind::kGauge);
  AddSample(&open, {}, static_cast<double>(s.open));
  auto idle = NewFamily(
      "goodput_ingest_streams_idle_closed_total",
      "Agent ingest streams goodputd ended after --stream_idle_timeout "
      "without a batch.",
      MetricKind::kCounter);
  AddSample(&idle, {}, static_cast<double>(s.idle_closed));
  out->push_back(std::move(open));
  out->push_back(std::move(idle));
}

}  // namespace

MetricsSource::MetricsSource(const core::Config* config,
                             core::MetricsOptions options, Ingestor* ingestor,
                             Clock* clock, const IngestLimits* limits,
                             const TokenAuth* tokens,
                             storage::EventStore* store,
                             const AgentGuard* guard, Logger log)
    : log_(std::move(log)),
      ingestor_(ingestor),
      clock_(clock),
      limits_(limits),
      tokens_(tokens),
      guard_(guard),
      store_(store),
      fleet_(config, std::move(options)) {
  absl::MutexLock lock(&mu_);
  LoadState();
}

void MetricsSource::LoadState() {
  if (store_ == nullptr) return;
  windows_ = std::make_unique<WindowsStore>(store_);
  absl::StatusOr<std::optional<internal::v1::FleetMetricsState>> state =
      windows_->Load();
  if (state.ok() && !*state) return;  // a new store, or one from before
  absl::Status s = state.status();
  if (s.ok()) s = fleet_.LoadState(**state);
  if (s.ok()) {
    log_.Info("metrics windows restored from the store");
    return;
  }
  windows_->Refused();
  ++load_failures_;
  log_.Warning(absl::StrCat("metrics windows not restored (", s.message(),
                            "); they start empty"));
}

void MetricsSource::SaveState() {
  if (windows_ == nullptr) return;
  internal::v1::FleetMetricsState state;
  fleet_.SaveState(&state);
  if (!windows_->Save(std::move(state)).ok()) {
    ++write_failures_;  // the next Collect tries again
  }
}

void MetricsSource::AddStateFamily(std::vector<MetricFamilyData>* out) const {
  auto f = NewFamily("goodput_windows_state_failures_total",
                     "Failures to load (at start) or write (after a scrape) "
                     "the metrics windows' state in the store.",
                     MetricKind::kCounter);
  AddSample(&f, {{"op", "load"}}, static_cast<double>(load_failures_));
  AddSample(&f, {{"op", "write"}}, static_cast<double>(write_failures_));
  out->push_back(std::move(f));
  auto damaged = NewFamily(
      "goodput_store_damaged",
      "1 if goodputd started on a store that lost acknowledged batches or "
      "whose ack marker was unreadable (--accept_store_loss), else 0.",
      MetricKind::kGauge);
  AddSample(&damaged, {}, store_damaged_ ? 1 : 0);
  auto lost = NewFamily(
      "goodput_store_lost_batches",
      "Acknowledged batches missing from the store at this start (its WAL "
      "was damaged; accepted with --accept_store_loss).",
      MetricKind::kGauge);
  AddSample(&lost, {}, static_cast<double>(store_lost_batches_));
  out->push_back(std::move(damaged));
  out->push_back(std::move(lost));
}

namespace {

// Issue 18 part 4: goodput_job_host_info{job_id, host} = 1 for each
// current host of each job with per-job series (the join with per-host GPU
// telemetry, docs/metrics.md).
// `hosts[i]` are job_ids[i]'s.
MetricFamilyData HostInfoFamily(
    const std::vector<std::string>& job_ids,
    const std::vector<std::vector<std::string>>& hosts) {
  MetricFamilyData f =
      NewFamily("goodput_job_host_info",
                "1 for each host a job with series runs on (its events' host).",
                MetricKind::kGauge);
  for (size_t i = 0; i < job_ids.size(); ++i) {
    for (const std::string& host : hosts[i]) {
      AddSample(&f, {{"job_id", job_ids[i]}, {"host", host}}, 1);
    }
  }
  return f;
}

}  // namespace

double MetricsSource::InterruptionRate(const std::string& accelerator) {
  absl::MutexLock lock(&mu_);
  const std::map<std::string, double> rates = fleet_.InterruptionRates();
  // Segments name a job without an accelerator "unknown" (docs/metrics.md).
  auto it = rates.find(accelerator.empty() ? "unknown" : accelerator);
  return it == rates.end() ? 0 : it->second;
}

MetricsSource::Cut MetricsSource::ScrapeLive(const JobFilter& keep) {
  // A job the filter refuses is not asked for: FleetMetrics folds it away
  // as if evicted (Finish), and its series end.
  LiveState::ScrapeFns fns;
  fns.changed = [&](const std::string& id, uint64_t generation) {
    return (!keep || keep(id)) && fleet_.Changed(id, generation);
  };
  fns.job = [&](const core::JobTracker& job) { fleet_.UpdateJob(job); };
  fns.final = [&](const storage::JobSnapshot& s) {
    fleet_.UpdateEndedJob(s.report, s.ended_ns);
  };
  fns.waits = [&](const std::string& id) {
    if (!keep || keep(id)) fleet_.Unchanged(id);
  };
  Cut cut;
  ingestor_->Scrape(
      [&](const LiveState& state) {
        fleet_.Begin();
        state.evicted_totals().ForEach([&](const EndedJobTotals::Group& g) {
          fleet_.UpdateEndedGroup(g.totals, g.jobs, g.newest_ended_ns);
        });
        cut.applied_ns = state.applied_through_ns();
        cut.capacity = state.capacity().ChipSeconds(cut.applied_ns);
        cut.live = state.stats();
        cut.live_jobs = state.job_count();
        cut.evicted_jobs = state.evicted_totals().jobs();
      },
      fns);
  return cut;
}

std::vector<std::vector<std::string>> MetricsSource::CurrentHosts(
    const std::vector<std::string>& job_ids) {
  std::vector<std::vector<std::string>> out(job_ids.size());
  for (size_t i = 0; i < job_ids.size();) {
    ingestor_->VisitLive([&](const LiveState& state) {
      const size_t end = std::min(job_ids.size(), i + kHostJobsPerHold);
      for (size_t hosts = 0; i < end && hosts < kHostsPerHold; ++i) {
        out[i] = state.HostsOf(job_ids[i]);
        hosts += out[i].size();
      }
    });
  }
  return out;
}

std::vector<MetricFamilyData> MetricsSource::Collect() {
  absl::MutexLock lock(&mu_);
  const Cut cut = ScrapeLive(make_job_filter_ ? make_job_filter_() : nullptr);
  fleet_.Finish(cut.capacity, cut.applied_ns);  // outside the ingest lock
  const std::vector<std::string> series = fleet_.SeriesJobIds();
  SaveState();
  std::vector<MetricFamilyData> out = fleet_.Families();
  out.push_back(HostInfoFamily(series, CurrentHosts(series)));
  AddStateFamily(&out);
  const IngestStats stats = ingestor_->stats();
  AddBatchFamilies(stats, &out);
  AddHealthFamilies(stats, cut.live, cut.applied_ns, clock_->NowNanos(), &out);
  AddStateFamilies(stats, cut.live, &out);
  const IngestStreams::Stats streams =
      streams_ != nullptr ? streams_->stats() : IngestStreams::Stats{};
  AddRefusalFamilies(limits_ != nullptr ? limits_->stats() : IngestLimitStats{},
                     tokens_, streams, &out);
  AddStreamFamilies(streams, &out);
  AddMemoryFamily(cut.live_jobs, cut.evicted_jobs, &out);
  AddAgentFamilies(stats, guard_, &out);
  AddMaintenanceFamily(stats, &out);
  return out;
}

}  // namespace goodput::server
