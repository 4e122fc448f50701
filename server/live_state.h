#ifndef GOODPUT_SERVER_LIVE_STATE_H_
#define GOODPUT_SERVER_LIVE_STATE_H_

#include <cstdint>
#include <deque>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "absl/container/btree_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/capacity_tracker.h"
#include "core/config.h"
#include "core/fleet_report.h"
#include "core/job_hosts.h"
#include "core/job_tracker.h"
#include "core/job_windows.h"
#include "core/report.h"
#include "proto/event.pb.h"
#include "proto/storage.pb.h"
#include "server/ended_job_totals.h"
#include "server/evicted_at_cut.h"
#include "server/shared_exclusions.h"
#include "storage/event_store.h"

namespace goodput::server {

// The aggregator's live per-job and fleet state (SPEC section 3 rule 8).
// Each job's durable events go to its core::JobTracker in apply order: they
// wait in a per-job reorder buffer until the job's newest event time has
// moved `lateness_ns` past them; an event that sorts before one already
// applied is later than that, and the job is rebuilt from the store. HOSTS
// and FLEET exclusions (SharedExclusions) join every job's apply order the
// same way, each job deciding there whether one covers it. So a report
// equals the replay of the stored events at the same as-of.
// An ended job can be held as its final snapshot alone (after a restart, or
// once retention deleted its raw events). Every job's live state is recorded
// in the store now and then (TakeJobStates), so that a restart or a late
// event restores a job from its newest fitting record plus the events after
// it, never from its first event.
// An ended job past the eviction grace leaves memory (Evict): its final
// report is read from the store's snapshot when a query needs it, its
// totals stay in evicted_totals() (for counters), and an event for it
// brings it back from the store (docs/delivery.md, "Retention").
// Owns its trackers; `config` and `store` must outlive it. Not thread-safe:
// the Ingestor serializes all calls.
class LiveState {
 public:
  struct Stats {
    int64_t applied = 0;              // events applied to trackers
    int64_t duplicates = 0;           // of those, duplicates (rule 3)
    int64_t late_rebuilds = 0;        // jobs rebuilt from the store
    int64_t heartbeats_dropped = 0;   // older than the host's last one
    int64_t apply_errors = 0;         // rejected by a tracker (a bug if > 0)
    int64_t restores = 0;             // jobs restored from the store
    int64_t restores_from_state = 0;  // ... starting from a stored state
    int64_t restored_events = 0;      // stored events read by restores
    int64_t stale_states = 0;         // stored states skipped (a later event
                                      // sorts before them)
    int64_t unreadable_states = 0;    // stored states that did not load
    int64_t unreadable_windows = 0;   // ... loaded without their --since
                                      // edges (those did not load)
    int64_t states_taken = 0;         // state records handed to the caller
    int64_t rebuilds_pending = 0;     // jobs waiting for a late-event rebuild
    int64_t imported_jobs = 0;        // jobs taken over from partition
                                      // snapshots (cluster mode)
    int64_t imported_exclusions_missed = 0;  // imported states kept though a
                                             // late HOSTS/FLEET exclusion
                                             // starts before them
    // Recover: whether the fleet state record (FleetState) was restored,
    // or did not load (then every batch is scanned); batches with fleet
    // events its scan read.
    int64_t fleet_state_restored = 0;
    int64_t unreadable_fleet_states = 0;
    // RestoreEvictedTotals: the record did not load; the totals were
    // summed from every evicted snapshot instead.
    int64_t evicted_totals_rebuilt = 0;
    int64_t fleet_batches_scanned = 0;
    // Capacity rebuilds after a late HOSTS/FLEET exclusion: those that
    // started from a fleet state record (the rest scan every batch), and
    // those that had to start from one the exclusion starts before, since
    // retention deleted the heartbeats before it (the exclusion's time
    // before that record stays in capacity).
    int64_t capacity_rebuilds_from_record = 0;
    int64_t capacity_rebuilds_inexact = 0;
  };

  // When a job's live state is recorded (TakeJobStates): after `every_events`
  // of its events, or once its newest event time moved `every_ns` past the
  // last record; at most `keep` (>= 2) records per job: the oldest, the
  // newest and others thinning out with age, so that a late event finds one
  // not long before it.
  struct StatePolicy {
    int64_t every_events = 1000;
    int64_t every_ns = 60LL * 1'000'000'000;
    int keep = 12;
  };

  LiveState(const core::Config* config, int64_t lateness_ns,
            storage::EventStore* store);

  void set_state_policy(StatePolicy policy) { policy_ = policy; }

  // Whether `e` may be accepted after everything accepted so far and the
  // events judged before it in the same batch (`ended_in_batch`: job id ->
  // job_ended time, updated for an admitted job_ended). OK, or
  // FailedPrecondition naming the field and reason. `*held`: whether `e`'s
  // job is held in memory (has_job), false for an event of no job.
  absl::Status Admit(const v1::Event& e,
                     std::unordered_map<std::string, int64_t>* ended_in_batch,
                     bool* held) const;

  // Takes the accepted events of stored batch `batch_id`, the newest in the
  // store. A job with an event later than the lateness is rebuilt from the
  // store (which holds the event): it waits in a queue, taking no events
  // into memory (they are read back from the store), so that several late
  // batches of one job cost one rebuild. Each batch earns a credit of the
  // events it carried, and queued jobs are rebuilt while the credit lasts,
  // each taking kRebuildReadWeight per stored event it read (a stored event
  // read back and applied costs about that many ingested ones), so a storm
  // of late events slows the rest of ingest by about half at most. Moves
  // from `*events`; on return `*events` holds the events the live state is
  // done with (the batch's own and older ones it applied, in no order) for
  // the caller to destroy, e.g. after releasing the ingest lock.
  void ApplyBatch(uint64_t batch_id, std::vector<v1::Event>* events);
  static constexpr int64_t kRebuildReadWeight = 4;

  // Rebuilds every queued job now (reports and snapshots need them exact).
  void FinishRebuilds();
  // Rebuilds queued jobs while `budget` (stored events to read) lasts, the
  // last one possibly past it: the server's idle-time drain, so that a
  // quiet fleet's rebuilds do not wait for ingest credit. Returns the jobs
  // still queued.
  int64_t DrainRebuilds(int64_t budget);

  // --- Restart recovery (live_state_recovery.cc), on a fresh LiveState:
  // LoadSnapshots, then Recover. The reports then equal those after
  // ApplyBatch of the same batches.
  //
  // Holds each ended job of `snapshots` as its final report; its stored
  // events in batches the snapshot covers are skipped.
  void LoadSnapshots(std::vector<storage::JobSnapshot> snapshots);
  // Takes evicted_totals() from the stored record (storage/KEY_LAYOUT.md,
  // "Evicted jobs") instead of from every evicted job; none without a
  // record (nothing evicted yet); if it does not load, sums the evicted
  // snapshots (counted). Before LoadSnapshots and Recover.
  absl::Status RestoreEvictedTotals();
  // Applies the stored heartbeats, then restores every stored job through
  // `through_batch` (the newest stored batch): from its newest stored state
  // that still fits plus the events after it (storage/KEY_LAYOUT.md).
  absl::Status Recover(uint64_t through_batch);
  // The final snapshots of the jobs whose events were deleted by retention
  // but still had stored events (a deletion cut short); the caller deletes
  // them again.
  std::vector<storage::JobSnapshot> TakeLeftoverDeletions();

  // --- Running jobs' states (live_state_recovery.cc).
  // Records of the jobs due for one under the StatePolicy (every job held
  // in memory with a tracker if `all`), valid after batch `through_batch`
  // (the newest stored batch), into `put`; the records to delete (beyond
  // the policy's `keep`, or found stale) into `remove`. The caller stores
  // both in one write; a lost write only costs a longer restore.
  void TakeJobStates(uint64_t through_batch, bool all,
                     std::vector<internal::v1::StoredJobState>* put,
                     std::vector<std::pair<std::string, uint64_t>>* remove);

  // --- Partition snapshots of cluster mode (live_state_recovery.cc;
  // docs/scaling.md, "Partition snapshots").
  // Every job `in` admits: held in memory with a tracker, as its state
  // record (through the newest stored batch) into `states`; held as its
  // final snapshot, or evicted (read from the store), into `finals`.
  // Finishes the queued rebuilds first.
  absl::Status ExportJobs(const std::function<bool(const std::string&)>& in,
                          std::vector<internal::v1::StoredJobState>* states,
                          std::vector<storage::JobSnapshot>* finals);
  // Replaces the jobs of `import` (just stored by EventStore::ImportJobs,
  // records marked imported) by its state records and final snapshots.
  // An imported job refuses, in Admit, an event that sorts before the
  // imported record's last applied one (a final one: every event): this
  // instance lacks the events before it to rebuild the job.
  void ImportJobs(const storage::JobImport& import);
  // OK if every state record of `import` loads here (its tracker state's
  // version and config: --stall_after, the catalog); else the error of the
  // first that does not, naming its job. An import is all or nothing: a
  // job whose record did not load would be held without its past.
  absl::Status CheckImport(const storage::JobImport& import) const;

  // --- Snapshots and retention (live_state_recovery.cc).
  // Snapshots of the ended jobs changed since the last call, valid through
  // `through_batch` (the newest stored batch).
  std::vector<storage::JobSnapshot> TakeSnapshots(uint64_t through_batch);
  // --- Eviction of ended jobs (live_state_recovery.cc). A job is due
  // once the newest applied event time is more than max(`grace_ns`, the
  // lateness) after its job_ended.
  // What an eviction stores (EventStore::EvictJobs) before Evict: the
  // final snapshots of the due jobs (through `through_batch` for those
  // without a stored one), and evicted_totals() with them folded in (a
  // job evicted before, and back since, revised: its evicted snapshot is
  // read from the store if memory does not hold it), as its stored
  // record. Changes nothing.
  struct Eviction {
    std::vector<storage::JobSnapshot> snapshots;
    EndedJobTotals totals;
    std::string record;  // StoredEvictedTotals, serialized
  };
  absl::StatusOr<Eviction> PlanEviction(int64_t grace_ns,
                                        uint64_t through_batch) const;
  // Drops the jobs of `eviction` (now stored) from memory and takes its
  // totals. Returns how many.
  int64_t Evict(Eviction eviction);
  const EndedJobTotals& evicted_totals() const { return evicted_; }

  // Final snapshots (events_deleted set) of the jobs held in memory that
  // ended before `horizon_ns` and still have raw events. Changes nothing.
  // O(held jobs); the evicted jobs are the caller's (Ingestor::
  // RetireEvicted reads them from the store outside the ingest lock).
  std::vector<storage::JobSnapshot> RetirementsDue(int64_t horizon_ns) const;
  // Holds the job of `snapshot` (from RetirementsDue, now stored) as its
  // final report (if it is in memory) and rejects its events from now on.
  void Retire(const storage::JobSnapshot& snapshot);
  // The snapshots of the jobs whose raw events retention deleted (from
  // the store: evicted ones are not in memory).
  absl::StatusOr<std::vector<storage::JobSnapshot>> DeletedJobs() const;
  // The snapshot of `job_id` if retention deleted its raw events.
  absl::StatusOr<std::optional<storage::JobSnapshot>> DeletedJob(
      const std::string& job_id) const;

  // The fleet report as of `as_of_ns`, evicted jobs read from the store.
  // Exact when `as_of_ns` is not before an applied event (see
  // applied_through_ns()) and no rebuild is queued (FinishRebuilds);
  // callers replay the store for earlier as-ofs.
  // `segments`: core::BuildFleetReport's.
  absl::StatusOr<core::FleetReport> Report(
      int64_t as_of_ns,
      core::FleetSegments segments = core::FleetSegments::kAll) const;

  // Report in two parts, so that the ingest lock is held only for the
  // first: what memory holds as of `as_of_ns` (same exactness as Report),
  // O(held jobs), no store read. The evicted jobs' final snapshots are read
  // from the store afterwards (`evicted`, cut at the newest stored batch).
  struct HeldReport {
    std::vector<core::JobReport> jobs;       // held jobs with an event by then
    std::map<std::string, double> capacity;  // chip-seconds by accelerator
    // Knows the held jobs that `jobs` does not name (the caller adds
    // those).
    EvictedAtCut evicted;
  };
  HeldReport Held(int64_t as_of_ns) const;

  // A `--since` window as of now, split by where each job's answer comes
  // from (a walk's, TakeParts).
  struct WindowParts {
    // The reports within the window of the jobs that keep it (or that it
    // holds whole, or leaves out), in no particular order.
    std::vector<core::JobReport> jobs;
    // The jobs the window cuts that keep no window since its edge: held
    // as their final snapshot (after a restart) or evicted, or recovered
    // from a record without that edge. The caller reads each from the
    // store (StoreReplay::Job: from its state record at or before the
    // edge, so O(its events in the window)).
    std::vector<std::string> from_store;
    // The evicted jobs, whose final snapshots the caller reads from the
    // store and adds with FinalInWindow: it knows the held jobs that
    // `jobs` and `from_store` do not name (the caller adds those).
    EvictedAtCut evicted;
  };
  // Held, or a --since window's parts, a few jobs per hold of the ingest
  // lock (issue 12 item 4), so that ingest waits on a report for a few
  // jobs' reports, not every job's. BeginWalk takes the cut: the held jobs in
  // id order (jobs added later are not in it), the capacity, whether jobs were
  // evicted. WalkSome reports the next jobs. Until EndWalk, ingest first keeps
  // the answer as of the cut of any job it is about to change or drop before
  // the walk reached it, and the walk takes that answer: the result is
  // Held's or the window's at the cut. The caller owns the walk; this points
  // to it from BeginWalk to EndWalk, and every call is under the caller's
  // ingest lock.
  struct Walk;
  // A walk as of `as_of_ns` (as Report's exactness: FinishRebuilds first)
  // of the whole report (`edge_ns` nullopt: Held) or of the --since window
  // from `edge_ns`, an edge of window_grid() snapped for this as_of
  // (core::WindowGrid::Snap(since, as_of_ns)): the jobs within it from
  // their kept windows, no store read (the evicted jobs are left to the
  // caller: WindowParts::evicted).
  std::unique_ptr<Walk> BeginWalk(int64_t as_of_ns,
                                  std::optional<int64_t> edge_ns);
  // Reports up to `n` more jobs of `walk`: true once every job is.
  // FailedPrecondition (a window) if a job waits for its rebuild.
  absl::StatusOr<bool> WalkSome(Walk* walk, size_t n) const;
  // Unregisters `walk` (begun by BeginWalk; done or not).
  void EndWalk(Walk* walk);
  size_t walk_count() const { return walks_.size(); }  // registered now
  // A done walk's result: Held's (`edge_ns` nullopt) or the window's.
  static HeldReport TakeHeld(Walk* walk);
  static WindowParts TakeParts(Walk* walk);
  // A job's final snapshot `s` within the window since `edge_ns`: its whole
  // report if the window holds all of it, nullopt if it ended before the
  // window; FailedPrecondition if the window cuts it (as StoreReplay).
  static absl::StatusOr<std::optional<core::JobReport>> FinalInWindow(
      const storage::JobSnapshot& s, int64_t edge_ns);
  // Adds `report`, job `job_id`'s within a window (WindowJob or
  // FinalInWindow), to `parts`: to from_store if it failed
  // FailedPrecondition (the window cuts a job that keeps no window).
  static absl::Status TakeWindow(
      const std::string& job_id,
      absl::StatusOr<std::optional<core::JobReport>> report,
      WindowParts* parts);
  const core::WindowGrid& window_grid() const { return grid_; }

  // The fleet-wide state through the newest applied batch (capacity from
  // the heartbeats, the HOSTS and FLEET exclusions), for the store's
  // record kFleetStateMeta: Recover restores it and scans only the batches
  // after it. nullopt while the capacity waits for a rebuild (a late
  // exclusion). O(hosts + exclusions).
  std::optional<internal::v1::StoredFleetState> FleetState() const;
  // The meta record name of FleetState (EventStore::WriteMeta).
  static constexpr char kFleetStateMeta[] = "fleet";

  // One job's report as of `as_of_ns` (same exactness as Report): O(that
  // job), or one store read for an evicted job; a job queued for a rebuild
  // is rebuilt first. nullopt if the job has no event at or before
  // `as_of_ns`.
  absl::StatusOr<std::optional<core::JobReport>> ReportOne(
      const std::string& job_id, int64_t as_of_ns);

  // The newest event time applied to any tracker (not buffered).
  int64_t applied_through_ns() const { return applied_through_ns_; }
  const Stats& stats() const { return stats_; }
  const core::Config& config() const { return *config_; }
  size_t job_count() const { return jobs_.size(); }  // held in memory
  // The hosts job `job_id` currently runs on, from its applied events'
  // `host` (core::JobHosts; empty for a job not held or never hosted).
  std::vector<std::string> HostsOf(const std::string& job_id) const;
  bool has_job(const std::string& job_id) const {
    return jobs_.count(job_id) > 0;
  }
  // What a metrics scrape (BeginScrape, ScrapeSome) is told of each job
  // held at its cut: asked `changed(job_id, generation)` (the generation
  // grows whenever an event of the job arrives), a job that may have
  // changed goes to `job` with its tracker (applied events only, but for an
  // ended job, whose last events wait in its reorder buffer for good, a copy
  // with them applied), or to `final` with its final snapshot if it is held
  // as that alone (after a restart, or retention). A job queued for a
  // rebuild goes to `waits` instead (its counters lag until it is rebuilt,
  // never go wrong). Evicted jobs brought back by a late event are skipped
  // (their totals are in evicted_totals(), revised when they are evicted
  // again), and so are jobs without an applied event.
  struct ScrapeFns {
    std::function<bool(const std::string&, uint64_t)> changed;
    std::function<void(const core::JobTracker&)> job;
    std::function<void(const storage::JobSnapshot&)> final;
    std::function<void(const std::string&)> waits;
  };
  // A metrics scrape as a walk (issue 12 item 4; see Walk): BeginScrape
  // takes the cut, the held jobs in id order; ScrapeSome tells `fns` of up
  // to `n` more of them (true once every job is), each as it was at the
  // cut: ingest keeps a copy of the tracker or snapshot of a job it is
  // about to change or drop before the scrape reached it. End it with
  // EndWalk. Same ownership and locking as Walk.
  std::unique_ptr<Walk> BeginScrape();
  bool ScrapeSome(Walk* walk, size_t n, const ScrapeFns& fns) const;
  const core::CapacityTracker& capacity() const { return capacity_; }

 private:
  struct Pending {
    int64_t time_ns = 0;
    int rank = 0;
    uint64_t arrival = 0;
    v1::Event event;
  };
  // A state record of a job in the store: its through_batch and the
  // job's newest event time then.
  struct StateRef {
    uint64_t through_batch;
    int64_t newest_ns;
  };
  struct LiveJob {
    explicit LiveJob(core::JobWindows w) : windows(std::move(w)) {}
    const core::JobTracker& tracker() const { return windows.live(); }
    int64_t newest_ns = 0;  // newest event time seen
    int64_t first_ns = std::numeric_limits<int64_t>::max();  // oldest seen
    std::optional<int64_t> ended_ns;  // of an accepted job_ended
    bool rebuild = false;             // its tracker is stale: rebuild it
    bool queued = false;              // in rebuild_queue_
    uint64_t generation = 0;          // events taken (for scrapes)
    uint64_t born = 0;  // unique: the order in which jobs_ entries were made
    uint64_t touched_round = 0;  // the apply_round_ that last handled it
    bool snapshot_due = false;   // ended and changed since its snapshot
    // Set: the job is this final snapshot alone (tracker and buffer empty).
    std::unique_ptr<storage::JobSnapshot> final;
    // Set: the job was evicted with this snapshot and a late event brought
    // it back; its report is in evicted_ as this snapshot's.
    std::unique_ptr<storage::JobSnapshot> evicted;
    // The job's tracker and its --since windows (core::JobWindows): both
    // stored in its state records and restored from them.
    core::JobWindows windows;
    // Hosts that reported within 15 min of the job's newest applied event,
    // at most 4096 (goodput_job_host_info).
    core::JobHosts hosts{900 * core::kNanosPerSecond, 4096};
    // Every host its applied events came from (HOSTS exclusions cover the
    // job by these; kept in its state records).
    std::set<std::string> all_hosts;
    std::vector<Pending> buffer;  // sorted by (time, rank, arrival)
    // Reports' cache: `tracker` with the whole `buffer` applied, made by
    // the first report after a change to either (View) and dropped at the
    // next one, so that repeated queries of a job whose newest events wait
    // in its buffer do not copy and re-apply them each time. At most one
    // tracker copy per job queried since its last event.
    mutable std::unique_ptr<core::JobWindows> view;
    std::optional<std::pair<int64_t, int>> last_applied;  // (time, rank)
    int64_t applied_events = 0;    // events given to the tracker
    int64_t since_state = 0;       // events taken since the last state record
    int64_t state_newest_ns = 0;   // newest_ns at the last state record
    bool state_due = false;        // in state_due_
    std::vector<StateRef> states;  // stored state records, oldest first
    // Taken over from a partition snapshot: the (time, rank) of the last
    // event the imported record applied; earlier events are refused.
    std::optional<std::pair<int64_t, int>> import_floor;
  };
  using JobMap = std::unordered_map<std::string, LiveJob>;
  // A held job as a walk's cut names it: its map entry (valid while the
  // job is held) and its `born`.
  struct JobRef {
    const JobMap::value_type* entry;
    uint64_t born;
  };
  // A job as a scrape takes it (ScrapeFns): what it is told, pointing into
  // the held job or into a kept copy (WalkAnswer).
  struct ScrapeJob {
    enum class Kind { kSkip, kTracker, kFinal, kWaits };
    Kind kind = Kind::kSkip;
    uint64_t generation = 0;
    const core::JobTracker* tracker = nullptr;    // kTracker
    const storage::JobSnapshot* final = nullptr;  // kFinal
  };
  // A job's part of a walk as of its cut (Walk).
  struct WalkAnswer {
    bool waits_rebuild = false;  // a window's job queued for its rebuild
    // Its report (nullopt: no event by then, or none in the window);
    // FailedPrecondition if the window cuts a job that keeps no window.
    absl::StatusOr<std::optional<core::JobReport>> report;
    // A scrape's (Walk::scrape): the job as ScrapeJobOf saw it at the cut,
    // pointing into the copies below.
    ScrapeJob scrape;
    std::unique_ptr<const core::JobTracker> tracker;
    std::unique_ptr<const storage::JobSnapshot> final;
  };
  // Takes the cut into `walk` (BeginWalk's; not registered).
  void StartWalk(int64_t as_of_ns, std::optional<int64_t> edge_ns,
                 Walk* walk) const;
  WalkAnswer AnswerOf(const LiveJob& job, const Walk& walk) const;
  // Calls `take(job_id, kept, job)` for up to `n` more jobs of `walk`, in
  // its order: with the answer ingest kept (`job` null) or the held job
  // (`kept` null); stops at the first error.
  absl::Status Advance(
      Walk* walk, size_t n,
      const std::function<absl::Status(const std::string&, WalkAnswer*,
                                       const LiveJob*)>& take) const;
  ScrapeJob ScrapeJobOf(const LiveJob& job) const;
  // ScrapeJobOf's with copies of what it points to (kept for a scrape).
  WalkAnswer KeptScrapeJob(const LiveJob& job) const;
  static void TellScrape(const std::string& job_id, const ScrapeJob& job,
                         const ScrapeFns& fns);
  // Adds `job_id`'s `answer` to `walk`'s result.
  static absl::Status TakeAnswer(const std::string& job_id, WalkAnswer answer,
                                 Walk* walk);
  // Before ingest changes or drops held job `job` (`job_id`): keeps its
  // answer as of the cut of each registered walk that has not reached it.
  void KeepForWalks(const std::string& job_id, const LiveJob& job) {
    if (!walks_.empty()) KeepForWalksSlow(job_id, job);
  }
  void KeepForWalksSlow(const std::string& job_id, const LiveJob& job);
  JobMap::iterator JobEntry(const std::string& job_id);  // created if new
  LiveJob& JobFor(const std::string& job_id);
  // Buffers `e` (moving from it) or marks its job for rebuild; returns the
  // job and its id (the map's key) if a job was touched.
  std::pair<const std::string*, LiveJob*> Take(v1::Event* e);
  // If `job_id` was evicted, its stored snapshot (read from the store);
  // errors name the job.
  absl::StatusOr<std::optional<storage::JobSnapshot>> EvictedSnapshot(
      const std::string& job_id) const;
  // Whether `e` may come to `job`, taken over from a partition snapshot.
  static absl::Status AdmitImported(const v1::Event& e, const LiveJob& job);
  // Whether `e` may come after the job's end, from what is known of it.
  absl::Status AdmitAfterEnd(const v1::Event& e,
                             std::optional<int64_t> ended) const;
  // Fills `job` (new in jobs_) from its eviction snapshot, if it has one:
  // it is rebuilt from the store at the end of the batch.
  void Revive(const std::string& job_id, LiveJob* job);
  bool EvictionDue(const LiveJob& job, int64_t grace_ns) const;
  void ApplyHeartbeat(const v1::Event& e);
  // A HOSTS or FLEET exclusion: kept, taken out of capacity, and given to
  // every job it may cover, in its reorder buffer or, if it sorts before
  // an event the job applied, by a rebuild (`touched` gets those jobs).
  void TakeShared(
      const v1::Event& e,
      std::vector<std::pair<const std::string*, LiveJob*>>* touched);
  // Takes shared exclusion `e`, stored in batch `batch`, into shared_ and
  // the capacity (or marks the capacity for RebuildCapacity if a heartbeat
  // after its start was applied).
  void KeepShared(const v1::Event& e, uint64_t batch);
  // Capacity anew from the newest fleet state record that no exclusion
  // stored after it starts before its newest heartbeat (or from nothing)
  // plus the stored heartbeats after it, with every shared exclusion known
  // before them (core::CapacityTracker takes no late exclusion).
  void RebuildCapacity();
  // RebuildCapacity's start: restores capacity_ and host_last_ns_ from the
  // record that fits and returns its through_batch, or empties them and
  // returns 0.
  uint64_t CapacityRebuildStart();
  // Recover: restores FleetState's record (or else the newest spaced one,
  // FleetHistory) if it loads; the batch it covers (0: none restored, scan
  // every batch).
  uint64_t RestoreFleetState();
  // Restores capacity_ and host_last_ns_ (not the exclusions) from
  // `state`'s live capacity; false (nothing changed) if it does not load.
  bool LoadCapacity(const internal::v1::StoredFleetState& state);
  // Recover's scan of one stored batch's fleet events.
  void RecoverFleetEvents(uint64_t batch, const std::vector<v1::Event>& events);
  // Queues for a rebuild the evicted jobs that `e` (shared) may cover.
  void ReviveCovered(
      const v1::Event& e,
      std::vector<std::pair<const std::string*, LiveJob*>>* touched);
  // The time from which shared exclusions are pending for `job` (not yet
  // applied: from its last applied event, or its first buffered one before
  // any; earlier ones are core::FleetTracker's first-event rule's), or
  // nullopt if none can be.
  std::optional<int64_t> SharedFrom(const LiveJob& job) const;
  // Calls fn(event, time, rank, buffered) for `job`'s pending events at or
  // before `through_ns` in apply order: its buffer's and the shared
  // exclusions pending for it.
  template <typename Fn>
  void ForEachPending(const LiveJob& job, int64_t through_ns, Fn fn) const;
  // Whether `job` has a pending event at or before `as_of_ns` (`all`:
  // whether every pending event is).
  bool PendingBy(const LiveJob& job, int64_t as_of_ns, bool all) const;
  // A copy of `live` (the job's tracker or windows) with the pending events
  // through `as_of_ns` applied.
  template <typename Tracker>
  Tracker WithPending(const LiveJob& job, const Tracker& live,
                      int64_t as_of_ns) const;
  bool IsLate(const LiveJob& job, int64_t t, int rank) const;
  // Buffers `*e`, swapping it out (`*e` is left empty).
  void Buffer(LiveJob* job, v1::Event* e);
  // Where Flush puts the buffered events it applied, so that their
  // destruction is the caller's (ApplyBatch): swapped into `events` from
  // slot `next` on (the batch's own events, which Buffer emptied), then
  // appended.
  struct Spent {
    std::vector<v1::Event>* events;
    size_t next = 0;
  };
  // Applies `job`'s pending events through `through_ns`; the buffered ones
  // go to `spent` if it is set, else are destroyed here.
  void Flush(LiveJob* job, int64_t through_ns, Spent* spent);
  void ApplyToTracker(LiveJob* job, const v1::Event& e, int64_t t, int rank);
  // A late event: Restore, counted.
  void Rebuild(const std::string& job_id, uint64_t through_batch, LiveJob* job);
  // Makes `job` what the store holds of it through `through_batch`: its
  // newest stored state that fits (or nothing) plus the events after it.
  void Restore(const std::string& job_id, uint64_t through_batch, LiveJob* job);
  // The same from `states` (the job's stored states, oldest first) and
  // `events` (a reader of the job's stored events).
  // With `defer_stale` (restart recovery), a job whose newest record no
  // longer fits (a late event sorts before it) is queued for its rebuild
  // instead (QueueRebuild), so that the server serves first.
  void Restore(const std::string& job_id, uint64_t through_batch,
               std::vector<internal::v1::StoredJobState>* states,
               storage::JobEventsReader* events, LiveJob* job,
               bool defer_stale = false);
  // Queues `job` for a rebuild with what the store says of it without a
  // replay: its stale newest record `state` and `tail`, the events after it.
  void QueueRebuild(const std::string& job_id,
                    const internal::v1::StoredJobState& state,
                    const std::vector<v1::Event>& tail, LiveJob* job);
  // Takes `e`'s time and end into `job`'s newest, first and ended times.
  static void NoteStored(const v1::Event& e, LiveJob* job);
  // Loads `state` into `job` if it fits `tail` (the job's stored events
  // after it) and parses; false (counted) if not.
  // Replaces `job` by a fresh one on `tracker`, keeping what is not about
  // its events (eviction snapshot, generation, state_due, born).
  void ResetJob(LiveJob* job, core::JobTracker tracker);
  bool LoadState(const internal::v1::StoredJobState& state,
                 const std::vector<v1::Event>& tail, LiveJob* job);
  // Gives `job`, just loaded from `state`'s tracker, the --since edges
  // stored beside it (none for a record without them; counted if they do
  // not load).
  void RestoreEdges(const internal::v1::StoredJobState& state, LiveJob* job);
  void RecoverJob(const std::string& job_id, uint64_t through_batch,
                  std::vector<internal::v1::StoredJobState>* states,
                  storage::JobEventsReader* events);
  bool StateDue(const LiveJob& job) const;
  void NoteTaken(const std::string* job_id, LiveJob* job);
  internal::v1::StoredJobState StateRecord(const std::string& job_id,
                                           const LiveJob& job,
                                           uint64_t through_batch) const;
  // Drops records of `job` beyond the policy's `keep` into `remove`.
  void PruneStates(const std::string& job_id, LiveJob* job,
                   std::vector<std::pair<std::string, uint64_t>>* remove);
  core::JobReport ReportJob(const LiveJob& job, int64_t as_of_ns) const;
  // `job.windows` with every event of `job.buffer` applied (the cached
  // `job.view`, made if missing).
  const core::JobWindows& View(const LiveJob& job) const;
  // The job within the window `windowed` (since one of its grid edges)
  // as of `as_of_ns`, or nullopt if it has no time in it;
  // FailedPrecondition if the job keeps no such window.
  absl::StatusOr<std::optional<core::JobReport>> WindowJob(
      const LiveJob& job, int64_t as_of_ns, const core::Config& windowed) const;
  // The stored snapshots of the evicted jobs: those of the store's
  // snapshots whose job is not in memory (none while nothing was evicted).
  absl::StatusOr<std::vector<storage::JobSnapshot>> EvictedSnapshots() const;
  // RestoreEvictedTotals without its record: adds every evicted snapshot
  // (those of `all` not in `held`, and the evicted ones of `held`'s jobs).
  absl::Status SumEvicted(const std::vector<storage::JobSnapshot>& all,
                          const std::vector<storage::JobSnapshot>& held);
  storage::JobSnapshot Snapshot(const std::string& job_id, const LiveJob& job,
                                uint64_t through_batch) const;

  const core::Config* config_;
  core::WindowGrid grid_;  // of the jobs' --since windows
  const int64_t lateness_ns_;
  storage::EventStore* store_;
  JobMap jobs_;
  // jobs_ in job id order (a walk's, the fleet report's): O(log jobs)
  // compares on ingest per job added or erased, so that a walk's cut is
  // O(1) (BeginWalk keeps `born`'s limit) and each step finds where it
  // stopped by id.
  struct ById {
    using is_transparent = void;
    static std::string_view Id(const JobRef& r) { return r.entry->first; }
    static std::string_view Id(std::string_view id) { return id; }
    template <typename A, typename B>
    bool operator()(const A& a, const B& b) const {
      return Id(a) < Id(b);
    }
  };
  absl::btree_set<JobRef, ById> by_id_;
  uint64_t next_born_ = 0;    // LiveJob::born of the next new entry
  std::vector<Walk*> walks_;  // registered (BeginWalk to EndWalk)
  core::CapacityTracker capacity_;
  SharedExclusions shared_;  // HOSTS and FLEET exclusions, stored
  std::unordered_map<std::string, int64_t> host_last_ns_;
  int64_t newest_beat_ns_ = std::numeric_limits<int64_t>::min();
  bool capacity_stale_ = false;  // a shared exclusion came late for it
  EndedJobTotals evicted_;
  uint64_t arrivals_ = 0;
  uint64_t apply_round_ = 0;  // ApplyBatch calls (LiveJob::touched_round)
  std::vector<storage::JobSnapshot> leftover_deletions_;
  StatePolicy policy_;
  // Jobs due for a state record since the last TakeJobStates (map nodes
  // are stable until a job is erased, which clears this first).
  std::vector<std::pair<const std::string*, LiveJob*>> state_due_;
  std::vector<std::pair<std::string, uint64_t>> stale_states_;
  std::deque<std::string> rebuild_queue_;  // jobs with `rebuild`, in order
  // Ended jobs changed since their snapshot (snapshot_due), so that
  // TakeSnapshots visits them and not every job.
  std::vector<std::string> snapshot_due_;
  void MarkSnapshotDue(const std::string& job_id, LiveJob* job);
  uint64_t last_batch_id_ = 0;  // the newest stored batch
  // Flush's list of the events due, kept so that a flush allocates nothing.
  std::vector<std::tuple<const v1::Event*, int64_t, int>> flush_due_;
  int64_t rebuild_credit_ = 0;  // stored events rebuilds may read now
  // Rebuilds queued jobs while `*credit` > 0, taking `weight` times the
  // stored events each read from it.
  void RunRebuilds(int64_t* credit, int64_t weight);
  int64_t applied_through_ns_ = 0;
  Stats stats_;
};

struct LiveState::Walk {
  bool scrape = false;  // BeginScrape's (as_of_ns, windowed unused)
  int64_t as_of_ns = 0;
  std::optional<core::Config> windowed;  // set: a --since window
  uint64_t born_limit = 0;  // jobs born at or after it came after the cut
  bool started = false;     // last_id names the last job taken
  bool done = false;        // every job of the cut taken
  std::string last_id;      // ids after it are ahead
  // Answers ingest kept as of the cut (before it changed or dropped a job
  // the walk had not reached), by job id.
  std::map<std::string, WalkAnswer> kept;
  std::map<std::string, double> capacity;  // at the cut
  WindowParts parts;  // the result so far (the whole report: jobs, evicted)
};

}  // namespace goodput::server

#endif  // GOODPUT_SERVER_LIVE_STATE_H_
