#ifndef GOODPUT_SERVER_INGESTOR_H_
#define GOODPUT_SERVER_INGESTOR_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "codec/event_validator.h"
#include "core/fleet_report.h"
#include "core/report.h"
#include "proto/service.pb.h"
#include "server/batch_fingerprints.h"
#include "server/ingest_limits.h"
#include "server/ingest_queue.h"
#include "server/live_state.h"
#include "storage/event_store.h"
#include "util/clock.h"
#include "util/logger.h"
#include "util/shard_map.h"

namespace goodput::server {

// Counters of what ingest did, for metrics and tests.
struct IngestStats {
  int64_t batches = 0;
  // Store writes of batches (group commit: one for all the agents'
  // batches that waited for the ingest lock together).
  int64_t batch_writes = 0;
  // Server-clock time the ingest path held the ingest lock for batches
  // (judging, storing and applying each group): near the elapsed time,
  // ingest is saturated and agents' batches queue.
  int64_t busy_ns = 0;
  int64_t duplicate_batches = 0;  // redelivered, acknowledged again
  int64_t accepted_events = 0;
  int64_t rejected_events = 0;  // kept as dead letters
  int64_t failed_batches = 0;   // not stored (the agent retries)
  std::map<std::string, int64_t> agent_last_seen_ns;  // server clock
  // Of the agents' last stored batch with a heartbeat (a subset of the
  // above: with a shard list, only the pipeline of the host's capacity
  // shard sends them; GoodputAgentSilent watches these).
  std::map<std::string, int64_t> agent_last_heartbeat_ns;
  int64_t expired_agent_series = 0;  // agents dropped from the map above
  int64_t sequence_jumps = 0;        // batches refused by the jump limit
  // Batches refused because an acknowledged sequence came with other
  // events: two agents with one id (BatchFingerprints).
  int64_t diverging_sequences = 0;
  int64_t retired_jobs = 0;  // jobs whose raw events retention deleted
  int64_t evicted_jobs = 0;  // ended jobs dropped from memory
  // Failed store maintenance, a counter per operation (exported as
  // goodput_store_maintenance_failures_total{op}); none loses an accepted
  // event, and all but the first are retried at the next check. One
  // increment is one failed attempt: a check of the operation (or its step
  // of Recover) stops at its first failed store call and counts once; each
  // retry that fails counts again. Final snapshots of ended jobs (a
  // restart replays their events instead):
  int64_t snapshot_errors = 0;
  int64_t eviction_errors = 0;    // evictions (the jobs stay in memory)
  int64_t retirement_errors = 0;  // retention of held jobs (RetireLocked)
  int64_t evicted_retirement_errors = 0;   // ... of evicted ones
  int64_t heartbeat_retention_errors = 0;  // ... of heartbeats

  int64_t states_written = 0;        // running jobs' state records stored
  int64_t state_errors = 0;          // failed state writes (restores read more)
  int64_t fleet_states_written = 0;  // fleet state records (meta/fleet)
  int64_t fleet_state_errors = 0;    // ... failed writes (restarts scan more)
  // Batches whose fleet events (heartbeats, exclusions) retention deleted,
  // each once: a deletion that failed after its retention mark counts when
  // a later check redoes it. One left undone by the previous process is
  // redone by a later deletion but counted by neither.
  int64_t fleet_batches_deleted = 0;
  // Heartbeats of hosts whose capacity shard is another (set_shard):
  // neither stored nor answered, their own shard keeps them.
  int64_t other_shard_heartbeats = 0;
};

// What probes ask of the ingest path (ServerHealth), kept apart from the
// ingest lock so they can be answered while a batch holds it.
struct IngestHealth {
  int64_t store_failures_in_a_row = 0;  // failed batch writes since an OK one
  std::string last_store_error;         // of the newest failed write
  // Server clock time the batch in the ingest path entered it; nullopt when
  // none is.
  std::optional<int64_t> busy_since_ns;
};

// The ingest path of goodputd, independent of gRPC: judges each event of
// an agent's batch (validation, then admission against the live state),
// writes the accepted ones, the dead letters and the agent's sequence in
// one durable store write, then applies them to the live state and returns
// the ack. Batches at or below an agent's acknowledged sequence are
// acknowledged again as duplicates and change nothing. Does not own its
// collaborators, which must outlive it. Thread-safe: calls are serialized.
class Ingestor {
 public:
  // Named fault-injection points (tests, and goodputd --fault): called
  // with "before_store" once a batch (a group commit's batches) is judged
  // and before its write, and with "after_store" once it is durable and
  // before its ack;
  // "before_states" and "after_states" around a write of running jobs'
  // state records (after the batch's write, before its ack); "report_cut"
  // when a report as of now has taken its cut of the live state and
  // released the ingest lock, before it walks the jobs; "report_walk"
  // between two holds of the lock by that walk (set_report_walk_jobs);
  // "scrape_walk" the same for a metrics scrape (Scrape); "retire_read" when
  // RetireEvicted has read the snapshots, before it takes the lock.
  using FaultHook = std::function<void(const char* point)>;

  Ingestor(storage::EventStore* store, LiveState* live, Clock* clock,
           codec::ValidationLimits limits);

  // Loads the agents' acknowledged sequences, the ended jobs' snapshots and
  // every other stored event into the live state (restart recovery), then
  // snapshots the ended jobs that had none, finishes the deletions of
  // retirements cut short, and applies the retention and the eviction. A
  // failed store write of those last steps is counted (IngestStats) and
  // done again later (DeleteLeftovers, EvictLocked, RetireLocked), not
  // returned. Each step is tried once: if the leftover deletion fails, the
  // eviction (which would try it again first) waits for the next check.
  absl::Status Recover();

  // Raw events of jobs that ended more than `retention_ns` before the
  // clock are deleted (their final snapshot stays), and so are the
  // heartbeats (and HOSTS/FLEET exclusions) that a spaced fleet state record
  // at or before that horizon covers; nullopt keeps them forever. Checked on
  // Recover and on ingest at most every clamp(retention / 10, 1 s, 60 s). Call
  // before Recover.
  void set_retention(std::optional<int64_t> retention_ns);
  // Applies the retention now (no-op without one): RetireLocked, then
  // RetireEvicted.
  absl::Status EnforceRetention();
  // The retention of the evicted jobs (not in memory), which the ingest
  // path's check leaves out: reads every stored final snapshot outside the
  // ingest lock, then under it, for each due one that is still evicted and
  // unchanged (one point read each), stores it with events_deleted and
  // deletes its raw events. At most every clamp(retention / 10, 1 s, 60 s)
  // of the clock unless `force`; goodputd calls it every second from a
  // background thread.
  absl::Status RetireEvicted(bool force);

  // Ended jobs leave memory once the newest applied event time is more
  // than max(`grace_ns`, the lateness) after their job_ended (LiveState::
  // Evict; their final snapshot is stored first). nullopt keeps them.
  // Checked on Recover and on ingest at most every clamp(grace / 10, 1 s,
  // 60 s) of the clock. Call before Recover.
  void set_ended_job_grace(std::optional<int64_t> grace_ns);
  // Evicts the jobs due now (no-op without a grace), after the deletions
  // left by a recovery (DeleteLeftovers). On an error nothing left memory
  // (IngestStats::eviction_errors counts it, or retirement_errors for such
  // a deletion; the ingest path's check acks its batch anyway and the next
  // check evicts them).
  absl::Status EvictEndedJobs();
  // Rebuilds jobs queued by late events, reading up to about `budget`
  // stored events (LiveState::DrainRebuilds), under the ingest lock;
  // returns the jobs still queued. goodputd calls it every second, so a
  // quiet fleet's rebuilds do not wait for ingest to earn them credit.
  int64_t DrainRebuilds(int64_t budget);

  // Ingests one batch. An error means nothing was stored (the agent
  // retries; InvalidArgument for a batch without agent_id or sequence);
  // an ack means the batch is durable. Group commit: the batch is
  // validated and serialized on the caller's thread and queued; the caller that
  // next holds the ingest lock judges every queued batch (up to kMaxGroupEvents
  // events, one batch per agent) against the live state and stores them in one
  // store write (one batch id), then applies them and answers each caller. A
  // failed write fails each batch of it.
  absl::StatusOr<v1::Ack> Ingest(const v1::Batch& batch);
  // The same, moving the accepted events out of `*batch` instead of copying
  // them (the gRPC service's path; `*batch` keeps its other fields).
  absl::StatusOr<v1::Ack> IngestTaking(v1::Batch* batch);

  // The live report as of `as_of_ns`; exact for any as-of. When
  // `as_of_ns` or `since_ns` needs the store, it is read job by job from
  // the jobs' stored states (StoreReplay) outside the ingest lock, and
  // `cancelled` (if set) is polled between jobs. `segments`: whether the
  // segment totals are needed (core::BuildFleetReport).
  // A `since_ns` as of now (`as_of_ns` not before the newest applied
  // event) is snapped down to its window grid edge (LiveState::
  // window_grid(); the report's since_ns says which) and answered from the
  // live jobs' windows, and the jobs it cuts that keep no window since that
  // edge (ended jobs held as their final snapshot or evicted) each from the
  // store, from its state record at or before the edge (outside the
  // ingest lock); a since_ns older than the grid is replayed from the
  // store. With
  // `exact_since` (the default: drill-downs) the window starts at
  // `since_ns` itself (a replay); Query.Report passes the request's.
  absl::StatusOr<core::FleetReport> Report(
      int64_t as_of_ns, std::optional<int64_t> since_ns,
      const std::function<bool()>& cancelled = nullptr,
      core::FleetSegments segments = core::FleetSegments::kAll,
      bool exact_since = true);

  // One job's report, like Report's for that job, in O(that job): from
  // the live state, or from its stored states and events (outside the
  // ingest lock). nullopt if it has no event at or before `as_of_ns`.
  absl::StatusOr<std::optional<core::JobReport>> JobReport(
      const std::string& job_id, int64_t as_of_ns,
      std::optional<int64_t> since_ns,
      const std::function<bool()>& cancelled = nullptr);

  // Cluster mode's partition snapshots (docs/scaling.md, "Partition
  // snapshots"), under the ingest lock: the jobs `in` admits
  // (LiveState::ExportJobs) and `agent_id`'s high-water sequence, which
  // they are exactly the state through.
  absl::StatusOr<storage::JobImport> ExportJobs(
      const std::string& agent_id,
      const std::function<bool(const std::string&)>& in);
  // Takes `import` (another instance's ExportJobs) over: marks its records
  // imported, through the newest stored batch, stores them in one write
  // (EventStore::ImportJobs, with the agent's sequence) and loads them
  // (LiveState::ImportJobs). FailedPrecondition, changing nothing, unless
  // its sequence is above the agent's; the error of a state record that
  // does not load here (LiveState::CheckImport: another tracker state
  // version or config), changing nothing, so the caller reads the
  // partition's messages instead.
  absl::Status ImportJobs(storage::JobImport import);

  // When running jobs' states are recorded (LiveState::StatePolicy). Call
  // before Recover.
  void set_state_policy(LiveState::StatePolicy policy);
  // Records every job's state now, and the fleet state (graceful shutdown:
  // the next start reads no event twice and scans no batch).
  absl::Status SaveAllStates();
  // How often the fleet state (LiveState::FleetState: capacity and shared
  // exclusions) is recorded, so that a restart scans only the batches
  // after it, with a spaced record (FleetHistory) for past reports: after
  // `every_batches` stored batches or once the clock moved `every_ns` since the
  // last record, whichever comes first, and at SaveAllStates. Defaults: 10,000
  // batches, 300 s.
  void set_fleet_state_policy(int64_t every_batches, int64_t every_ns);

  // Calls `fn` with the live state under the ingest lock.
  void VisitLive(const std::function<void(const LiveState&)>& fn);
  // A metrics scrape (issue 12 item 4): calls `cut` with the live state at
  // the cut, then tells `fns` of every job held then (LiveState::
  // ScrapeSome), the report walk's number of jobs per hold of the ingest
  // lock (set_report_walk_jobs; the fault hook's "scrape_walk" between
  // two), each as it was at the cut. Ingest waits on a scrape for a few
  // jobs, not every job.
  void Scrape(const std::function<void(const LiveState&)>& cut,
              const LiveState::ScrapeFns& fns);

  // The attribution config of the live state (catalog, size buckets...),
  // for queries that replay a job's stored events.
  core::Config config();

  // A batch whose sequence is more than `jump` above its agent's
  // high-water mark (0 for a new agent) is refused OutOfRange and stores
  // nothing (--max_sequence_jump); 0 = no limit.
  void set_max_sequence_jump(uint64_t jump);
  // Agents silent for longer than `ttl_ns` leave stats().agent_last_seen_ns
  // (their goodput_agent_last_seen_timestamp_seconds series ends); checked
  // by every stats() and on ingest at most every clamp(ttl / 10, 1 s,
  // 60 s). nullopt keeps them.
  void set_agent_series_ttl(std::optional<int64_t> ttl_ns);

  // Whether events are checked against the server's clock (too far in the
  // future, older than the age limit); default true. Cluster mode's apply
  // side turns it off: the accepting instance checked them on receipt, and
  // a partition may be applied long after (a takeover replays its log).
  void set_check_event_times(bool check);
  // goodputd --shard=I/N: a heartbeat whose host's capacity shard
  // (goodput::CapacityShardOf) is not I is left out of the batch (not
  // stored, neither accepted nor rejected in the ack; counted in
  // IngestStats::other_shard_heartbeats), so that the shards' capacities add
  // up even when an agent sends every heartbeat to every shard. Default: keep
  // every heartbeat.
  void set_shard(ShardPosition shard);
  void set_fault_hook(FaultHook hook);
  // Where failed store maintenance (IngestStats::eviction_errors and the
  // other counters of goodput_store_maintenance_failures_total) is logged,
  // a warning each; default: nowhere (counted only).
  void set_log(Logger log);
  // How many jobs a report as of now or a metrics scrape reads per hold of
  // the ingest lock (LiveState::WalkSome, ScrapeSome; default 256, at least
  // 1): ingest waits on either for at most that many jobs.
  void set_report_walk_jobs(size_t jobs);
  // Applies --max_jobs from `limits` and counts the validator's size-limit
  // rejections there (not owned; null = no limit).
  void set_limits(IngestLimits* limits);
  IngestStats stats();
  // The highest batch sequence acknowledged for `agent_id` (0 if none),
  // as recovered from the store and advanced by every stored batch.
  uint64_t AckedSequence(const std::string& agent_id);
  // The final snapshot of `job_id` if retention deleted its raw events.
  absl::StatusOr<std::optional<storage::JobSnapshot>> DeletedJob(
      const std::string& job_id);
  std::optional<int64_t> retention_ns();
  LiveState::Stats live_stats();
  // How `--since` reports as of now were answered (Report).
  struct WindowStats {
    int64_t live = 0;        // from the live jobs' windows
    int64_t replayed = 0;    // replayed from the store (a job's rebuild
                             // could not be finished)
    int64_t store_jobs = 0;  // jobs of live answers read from the store
  };
  WindowStats window_stats();
  // Never waits for the ingest lock.
  IngestHealth health() const;
  // How many Ingest callers wait for the ingest lock now (their batches
  // queued for the next group commit).
  int batches_waiting() const {
    return ingest_waiting_.load(std::memory_order_relaxed);
  }

 private:
  // The most events one group commit stores (IngestTaking).
  static constexpr size_t kMaxGroupEvents = 16384;
  // What IngestTaking does before the lock: `pending`'s validity (codec::
  // ValidateEvent of each of `batch`'s events against the limits and, with
  // set_check_event_times, the clock now), wire bytes and fingerprint (of
  // those bytes).
  void Prepare(const v1::Batch& batch, IngestQueue::Pending* pending) const;
  // Event `index`'s serialization in `p.wire`.
  static absl::string_view Wire(const IngestQueue::Pending& p, int index);
  // A group commit's batch that is stored: its caller, its ack, and
  // whether it stored a heartbeat.
  struct Member {
    IngestQueue::Pending* pending = nullptr;
    v1::Ack ack;
    bool heartbeat = false;
  };
  // What a group's judgement carries from one of its batches to the next,
  // as if each were applied before the next is judged.
  struct GroupJudge {
    std::unordered_map<std::string, int64_t> ended_in_batch;
    std::unordered_set<std::string> new_jobs;
    uint32_t position = 0;  // events of the group's batches before this one
  };
  // Judges, stores in one write, applies and answers the batches of
  // `group` (IngestQueue::Take's), at `now_ns`: each gets its result. The
  // events the live state is done with go to `spent`, for the caller to
  // destroy after it releases mu_.
  void CommitGroup(const std::vector<IngestQueue::Pending*>& group,
                   int64_t now_ns, std::vector<std::vector<v1::Event>>* spent)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The result of a batch that stores nothing (a duplicate, a refused
  // sequence jump), else nullopt; counts the batch and sees its agent.
  std::optional<absl::StatusOr<v1::Ack>> Screen(const IngestQueue::Pending& p,
                                                int64_t now_ns)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Writes `write` (the fault hook's "before_store" and "after_store"
  // around it) and, once it is stored, advances the members' agents'
  // sequences and fingerprints.
  absl::StatusOr<uint64_t> StoreGroup(const storage::BatchWrite& write,
                                      std::vector<Member>* members)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Counts a stored member's events in stats_.
  void Count(const Member& m, int64_t now_ns)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Records the outcome of a batch's store write in health_.
  void NoteStoreWrite(const absl::Status& status);
  void SetBusySince(std::optional<int64_t> ns);
  // Adds the judgement of each event of `p`'s batch to `write` (its
  // accepted events moved there) and `m`.
  void Judge(IngestQueue::Pending* p, GroupJudge* judge,
             storage::BatchWrite* write, Member* m)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Rejects event `index` of `batch` for `s`: a rejection in `ack`, a dead
  // letter in `write` at key position `position` + `index`.
  static void Reject(const v1::Batch& batch, int index, const absl::Status& s,
                     uint32_t position, storage::BatchWrite* write,
                     v1::Ack* ack);
  // Whether `e` is a heartbeat of another shard's host (set_shard).
  bool OtherShardsHeartbeat(const v1::Event& e) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // A duplicate's ack, or AlreadyExists if its events differ from those of
  // the batch acknowledged under its sequence (`print`).
  absl::StatusOr<v1::Ack> Duplicate(const v1::Batch& batch, uint64_t print)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // OK, or OutOfRange if `batch`'s sequence jumps too far above `acked`.
  absl::Status CheckJump(const v1::Batch& batch, uint64_t acked)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Records `agent`'s batch at `now_ns`, then ExpireAgents if due.
  void SeeAgent(const std::string& agent, int64_t now_ns)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Forgets agents silent longer than the series TTL.
  void ExpireAgents(int64_t now_ns) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void SaveSnapshots() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Report, with the evicted jobs' snapshots read outside the ingest lock
  // (Aborted if a snapshot was stored after the cut) or, if `locked`,
  // under it.
  absl::StatusOr<core::FleetReport> ReportAt(
      int64_t as_of_ns, std::optional<int64_t> since_ns,
      const std::function<bool()>& cancelled, core::FleetSegments segments,
      bool exact_since, bool locked);
  // Under mu_: the walk of a report as of now (LiveState::BeginWalk) for
  // `*since_ns` (nullopt: the whole report; else snapped down to the
  // window grid, which it sets), after the queued rebuilds; nullptr when
  // the live state cannot answer (a past as-of, an exact or off-grid
  // window): the caller replays the store.
  std::unique_ptr<LiveState::Walk> BeginWalk(int64_t as_of_ns,
                                             std::optional<int64_t>* since_ns,
                                             bool exact_since)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // A walk's result with the evicted jobs added: `held` for the whole
  // report, `parts` for a window.
  struct Walked {
    std::optional<LiveState::HeldReport> held;
    std::optional<LiveState::WindowParts> parts;
  };
  // Walks `walk` (of the window from `edge_ns`, or the whole report)
  // walk_jobs_ jobs per hold of mu_, calling `hook` ("report_walk") between
  // two holds; Cancelled once `cancelled` says so; FailedPrecondition if a
  // window's job waits for its rebuild. Then ends it and takes its result.
  absl::StatusOr<Walked> Walk(LiveState::Walk* walk,
                              std::optional<int64_t> edge_ns,
                              const FaultHook& hook,
                              const std::function<bool()>& cancelled)
      ABSL_LOCKS_EXCLUDED(mu_);
  // Calls `step` (true once done) until it is done or fails, letting a
  // waiting batch take mu_ between two calls (WalkMayGo) and calling `hook`
  // with `point` there; Cancelled once `cancelled` says so. Holds mu_ when
  // it calls and returns, not in between.
  absl::Status StepLocked(const std::function<absl::StatusOr<bool>()>& step,
                          const char* point, const FaultHook& hook,
                          const std::function<bool()>& cancelled)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The same in one hold of mu_ (a retake), the evicted jobs read under it.
  absl::StatusOr<Walked> WalkLocked(LiveState::Walk* walk,
                                    std::optional<int64_t> edge_ns)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Unregisters `walk` and counts how a window was answered.
  void EndWalk(LiveState::Walk* walk, bool window, const absl::Status& walked)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // A done walk's result with the evicted jobs' snapshots added.
  absl::StatusOr<Walked> Take(LiveState::Walk* walk,
                              std::optional<int64_t> edge_ns);
  // Adds the evicted jobs' final reports to `held` (LiveState::Held's).
  absl::Status AddEvicted(LiveState::HeldReport* held);
  // Adds the evicted jobs' snapshots within the window since `edge_ns` to
  // `parts` (LiveState::FinalInWindow; those it cuts to from_store).
  absl::Status AddEvicted(int64_t edge_ns, LiveState::WindowParts* parts);
  // Report's live --since window: `parts` (a LiveState walk's) with
  // its from_store jobs read from the store through `through_batch`, as a
  // fleet report under `windowed` (no capacity). Outside the ingest lock.
  absl::StatusOr<core::FleetReport> WindowFromParts(
      core::Config windowed, uint64_t through_batch, int64_t as_of_ns,
      LiveState::WindowParts parts, const std::function<bool()>& cancelled,
      core::FleetSegments segments) ABSL_LOCKS_EXCLUDED(mu_);
  void SaveJobStates(bool all) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Records the fleet state if the policy says so at the server's clock
  // `now_ns` (the batch's receive time on ingest), or if `force`.
  // Retention of heartbeats: deletes the fleet events that the newest
  // spaced fleet state record with a cut at or before `horizon_ns` covers
  // (FleetHistory::DeleteBefore).
  absl::Status DeleteFleetEvents(int64_t horizon_ns)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status SaveFleetState(int64_t now_ns, bool force)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The retention of the jobs held in memory (and of the heartbeats).
  absl::Status RetireLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  int64_t RetentionEvery() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Stores `due` (final snapshots with events_deleted; held ones, or, if
  // `evicted`, evicted ones), then DeleteRetired.
  absl::Status RetireJobs(const std::vector<storage::JobSnapshot>& due,
                          bool evicted) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Deletes the raw events of the jobs of `retired` (their stored final
  // snapshots, events_deleted) and retires those in memory.
  absl::Status DeleteRetired(const std::vector<storage::JobSnapshot>& retired)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Of the snapshots `read` outside the lock: those of jobs still evicted
  // and stored unchanged, marked for retirement (`fresh`), and those
  // stored retired whose events were not deleted yet (`unfinished`).
  struct EvictedDue {
    std::vector<storage::JobSnapshot> fresh;
    std::vector<storage::JobSnapshot> unfinished;
  };
  // Retires what StillEvicted keeps of `stored`: DeleteRetired of the
  // unfinished ones, then RetireJobs of the fresh ones.
  absl::Status RetireStillEvicted(std::vector<storage::JobSnapshot> stored)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::StatusOr<EvictedDue> StillEvicted(
      std::vector<storage::JobSnapshot> read)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status EvictLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // After a batch received at `now_ns`: the retention and eviction checks
  // that are due, and the leftover deletions' retry.
  void CheckMaintenance(int64_t now_ns) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Deletes the events of the jobs whose retirement was cut short before
  // the restart (LiveState::TakeLeftoverDeletions), if not done yet and
  // still retired in memory. Until it succeeds no eviction runs: an
  // evicted retired job is indexed nowhere, so nothing would find its
  // events again (storage/KEY_LAYOUT.md, "Evicted jobs"). A failed one is
  // tried again by the next eviction check, or without --ended_job_grace
  // by the first batch kLeftoverRetryNs after the failure.
  absl::Status DeleteLeftovers() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  static constexpr int64_t kLeftoverRetryNs = 10'000'000'000;
  // Counts a failed store-maintenance operation `op` (its metric label) in
  // `*counter` and logs `status` (set_log).
  void MaintenanceFailed(int64_t* counter, const char* op,
                         const absl::Status& status)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  storage::EventStore* store_;
  Clock* clock_;
  mutable absl::Mutex health_mu_;  // never held while taking mu_
  IngestHealth health_ ABSL_GUARDED_BY(health_mu_);
  absl::Mutex mu_;
  LiveState* live_ ABSL_GUARDED_BY(mu_);
  const codec::ValidationLimits limits_;  // now_ns unset
  IngestQueue queue_;
  std::map<std::string, uint64_t> agent_sequence_ ABSL_GUARDED_BY(mu_);
  BatchFingerprints fingerprints_ ABSL_GUARDED_BY(mu_);
  FaultHook fault_hook_ ABSL_GUARDED_BY(mu_);
  std::optional<Logger> log_ ABSL_GUARDED_BY(mu_);
  // DeleteLeftovers' jobs, until their deletion succeeds.
  std::vector<storage::JobSnapshot> leftover_deletions_ ABSL_GUARDED_BY(mu_);
  // The batch through which this process saw the heartbeat retention's
  // deletion succeed and counted it (IngestStats::fleet_batches_deleted);
  // unset until the first check reads the retention mark.
  std::optional<uint64_t> fleet_counted_through_ ABSL_GUARDED_BY(mu_);
  size_t walk_jobs_ ABSL_GUARDED_BY(mu_) = 256;
  // Batches waiting for mu_, and how many had it: Walk lets one go first.
  std::atomic<int> ingest_waiting_{0};
  uint64_t ingest_turns_ ABSL_GUARDED_BY(mu_) = 0;
  struct WalkTurn {
    const std::atomic<int>* waiting;
    const uint64_t* turns;  // ingest_turns_
    uint64_t seen;          // ingest_turns_ when the walk released mu_
  };
  static bool WalkMayGo(WalkTurn* turn);
  IngestLimits* job_limits_ ABSL_GUARDED_BY(mu_) = nullptr;
  IngestStats stats_ ABSL_GUARDED_BY(mu_);
  WindowStats window_stats_ ABSL_GUARDED_BY(mu_);
  uint64_t last_batch_id_ ABSL_GUARDED_BY(mu_) = 0;
  std::atomic<bool> check_event_times_{true};
  std::optional<ShardPosition> shard_ ABSL_GUARDED_BY(mu_);
  std::optional<int64_t> retention_ns_ ABSL_GUARDED_BY(mu_);
  int64_t next_retention_ns_ ABSL_GUARDED_BY(mu_) = 0;  // next check
  std::optional<int64_t> grace_ns_ ABSL_GUARDED_BY(mu_);
  int64_t next_eviction_ns_ ABSL_GUARDED_BY(mu_) = 0;  // next check
  // Without a grace: DeleteLeftovers' next try after a failure.
  int64_t next_leftovers_ns_ ABSL_GUARDED_BY(mu_) = 0;
  // RetireEvicted's next check.
  int64_t next_evicted_retention_ns_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t max_sequence_jump_ ABSL_GUARDED_BY(mu_) = 0;
  std::optional<int64_t> agent_series_ttl_ns_ ABSL_GUARDED_BY(mu_);
  int64_t next_series_expiry_ns_ ABSL_GUARDED_BY(mu_) = 0;  // next check
  int64_t fleet_state_every_batches_ ABSL_GUARDED_BY(mu_) = 10'000;
  int64_t fleet_state_every_ns_ ABSL_GUARDED_BY(mu_) = 300'000'000'000;
  uint64_t fleet_state_batch_ ABSL_GUARDED_BY(mu_) = 0;  // last recorded
  int64_t next_fleet_state_ns_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace goodput::server

#endif  // GOODPUT_SERVER_INGESTOR_H_
