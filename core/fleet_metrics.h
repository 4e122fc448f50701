#ifndef GOODPUT_CORE_FLEET_METRICS_H_
#define GOODPUT_CORE_FLEET_METRICS_H_

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "core/config.h"
#include "core/job_ledger.h"
#include "core/job_tracker.h"
#include "core/metric_family.h"
#include "core/sliding_window.h"
#include "proto/metrics_state.pb.h"

namespace goodput::core {

// Options of the exported goodput metrics (goodputd flags).
struct MetricsOptions {
  // (label, length) of each ratio window; --windows.
  std::vector<std::pair<std::string, int64_t>> windows = {
      {"5m", 300 * kNanosPerSecond},
      {"1h", 3600 * kNanosPerSecond},
      {"24h", 86400 * kNanosPerSecond}};
  int window_buckets = 30;  // buckets per window (resolution window / 30)
  size_t max_job_series = 1000;
  int64_t ended_job_grace_ns = 900 * kNanosPerSecond;
  std::vector<std::string> segment_labels;  // --segment_labels keys
  // --shard's "I/N": the capacity counter's `capacity_shard` label, so that
  // the recording rules add the shards' capacities (docs/scaling.md);
  // empty: no such label.
  std::string capacity_shard;
};

// The FleetMetricsState layout that SaveState writes and LoadState reads
// (and version 2, the same fields: its server kept every job in `jobs`).
inline constexpr uint32_t kFleetMetricsStateVersion = 3;

// Upper bounds (seconds) of the duration histograms' buckets.
const std::vector<double>& DurationBucketBounds();

// The goodput metrics of docs/metrics.md as plain families: the fleet's and
// segments' counters in recognition time (from each job's JobLedger),
// sliding-window ratios in event time, histograms, and the per-job series
// of the top jobs. Fed one scrape at a time: Begin, Changed (and UpdateJob
// if changed) or Unchanged for every job, UpdateEndedGroup for every group
// of evicted jobs, Finish. A job that Changed saw once and no longer sees has
// been evicted into a group: Finish folds its ledger into the group's, so its
// time counts once. Memory: one ledger per job held and per group,
// windows per segment and per job with series. Its whole state can be
// saved and loaded (SaveState, LoadState) so that a restarted server goes
// on as if it had not stopped. `config` must outlive it. Not thread-safe.
class FleetMetrics {
 public:
  FleetMetrics(const Config* config, MetricsOptions options);

  void Begin();
  // Whether job `job_id` may have changed since the last update, given a
  // number that grows whenever it may (e.g. events taken); records it.
  // Jobs not updated keep their last totals and gauges.
  bool Changed(const std::string& job_id, uint64_t generation);
  // Job `job_id` is still held but cannot be taken now (it waits for its
  // rebuild): it keeps its last totals and gauges, and Finish does not fold
  // it away as evicted. (Changed sees it again once it can be taken.)
  void Unchanged(const std::string& job_id);
  // Takes `job`'s new recognized time; increases go to the window bucket
  // of the job's newest applied event time.
  void UpdateJob(const JobTracker& job);
  // Takes an ended job held as its final report alone (a snapshot, after a
  // restart or retention), which ended at `ended_ns`: its settled time is
  // the report's, and it has no observations (histograms).
  void UpdateEndedJob(const JobReport& report, int64_t ended_ns);
  // Takes a group of `jobs` ended jobs no longer held one by one (server::
  // EndedJobTotals): `totals` has their label set and summed final
  // reports; the newest ended at `newest_ended_ns`. Counted like
  // UpdateEndedJob, with one ledger per segment and chips.
  void UpdateEndedGroup(const JobReport& totals, int64_t jobs,
                        int64_t newest_ended_ns);
  // Capacity chip-seconds per accelerator so far; `now_ns` is the newest
  // applied event time (the windows' "now"). Picks the jobs with series.
  void Finish(const std::map<std::string, double>& capacity, int64_t now_ns);

  std::vector<MetricFamilyData> Families() const;

  // The ids of the jobs with per-job series (after Finish), sorted.
  std::vector<std::string> SeriesJobIds() const;

  // Everything future updates and families depend on, between updates
  // (after Finish): counters, histograms, every window's buckets, each
  // job's and group's ledger and last totals. Deterministic: the same
  // state gives the same bytes.
  void SaveState(internal::v1::FleetMetricsState* state) const;
  // Replaces the state by `state`. A state saved under other options
  // (windows, buckets per window, segment labels) or another version is
  // InvalidArgument; one that does not hold together is DataLoss; both
  // name the field, and leave this as it was. The generations of the jobs
  // are not kept (they count a process's events): the first update asks
  // for every job again, and a job that had ended comes back unchanged if
  // it is then held as its final snapshot (UpdateEndedJob), as a server
  // that had not stopped would still hold its tracker's totals.
  absl::Status LoadState(const internal::v1::FleetMetricsState& state);

  // Issue 18, checkpoint advice: per accelerator, the interruptions per
  // running chip-second of its TRAINING jobs with chips, in recognition
  // time (0 with none); what a job with fewer than kMinOwnInterruptions of
  // its own is advised with (its gauges, and `goodputctl job`).
  std::map<std::string, double> InterruptionRates() const;

 private:
  struct Histogram {
    std::vector<uint64_t> counts;  // per bound, not cumulative; +Inf last
    uint64_t count = 0;
    double sum = 0;
  };
  static constexpr int kNumHistograms = 3;  // ObservationKind order
  struct Segment {
    CategoryChipSeconds chip_seconds{};
    double ideal = 0, costed = 0, pg_above_one = 0;
    std::array<double, kNumReasons> interruptions{}, notices{};
    std::array<Histogram, kNumHistograms> histograms;
    double at_risk = 0;  // gauge, chip-seconds
    // Rule 14, elastic jobs' all-allocated time: (chips - held) and chips
    // in chip-seconds, recognition time.
    double degraded = 0, elastic_allocated = 0;
    // Issue 18, checkpoint advice: the running chip-seconds (allocated
    // less queued and recovery, at the job's chips) and interruptions of
    // its jobs with chips, in recognition time.
    double checkpoint_run = 0, checkpoint_interruptions = 0;
    std::vector<SlidingWindow> windows;
  };
  using SegmentKey = std::vector<std::string>;
  struct Job {
    JobLedger ledger;
    SegmentKey key;
    int64_t key_event_ns = -1;  // last_event_ns the key was computed at
    Recognized last;
    double rank = 0;  // chips x lost seconds
    uint64_t generation = 0;
    uint64_t seen = 0;     // the last update whose Changed asked for it
    bool updated = false;  // ever
    bool series = false;
    bool restored = false;  // loaded by LoadState, not updated since
    std::vector<SlidingWindow> windows;  // only while it has series
  };

  // Evicted jobs of one segment and chip count, summed.
  struct Group {
    JobLedger ledger;  // with the ledgers of its jobs that were held
    Recognized sum;    // this update's
    int64_t jobs = 0;  // this update's
  };
  using GroupKey = std::pair<SegmentKey, int64_t>;  // and chips

  std::vector<SlidingWindow> NewWindows() const;
  // Folds the jobs Changed no longer sees into their groups' ledgers.
  void Sweep();
  void CountGroups();
  Segment& SegmentFor(const SegmentKey& key);
  SegmentKey KeyOf(const JobReport& spec) const;
  // Takes `now` as the job's totals into its ledger, segment and windows.
  Segment& Count(Recognized now, Job* job);
  void AddToSegment(const Recognized& last, const CounterIncrease& up,
                    Segment* s);
  void AddElasticToSegment(const Recognized& last, const CounterIncrease& up,
                           Segment* s);
  void AddEventCounts(const CounterIncrease& up, Segment* s);
  static void AddCheckpointRate(const Recognized& last,
                                const CounterIncrease& up, Segment* s);
  void AddObservations(const JobTracker& tracker, Job* job, Segment* s);
  void AddCapacity(const std::map<std::string, double>& capacity);
  void AddGauges();
  void SelectJobs(int64_t now_ns);
  MetricLabels SegmentLabels(const SegmentKey& key) const;

  // SaveState and LoadState by part (fleet_metrics_state.cc).
  void SaveOptions(internal::v1::FleetMetricsState* state) const;
  void SaveJobs(internal::v1::FleetMetricsState* state) const;
  void SaveSegments(internal::v1::FleetMetricsState* state) const;
  void SaveGroups(internal::v1::FleetMetricsState* state) const;
  void SaveTotals(internal::v1::FleetMetricsState* state) const;
  absl::Status CheckOptions(const internal::v1::FleetMetricsState& state) const;
  absl::Status LoadJob(const internal::v1::FleetMetricsState::Job& in,
                       const std::string& field);
  absl::Status LoadSegment(const internal::v1::FleetMetricsState::Segment& in,
                           const std::string& field);
  static absl::Status LoadHistograms(
      const internal::v1::FleetMetricsState::Segment& in,
      const std::string& field, Segment* seg);
  absl::Status LoadGroup(const internal::v1::FleetMetricsState::Group& in,
                         const std::string& field);
  absl::Status LoadTotals(const internal::v1::FleetMetricsState& state);
  absl::Status LoadParts(const internal::v1::FleetMetricsState& state);
  // `in` as a segment key: dimensions_.size() values (or none if `empty_ok`).
  template <typename Repeated>
  absl::Status LoadKey(const Repeated& in, const std::string& field,
                       bool empty_ok, SegmentKey* key) const;
  // `in` as one window per option (or none if `empty_ok`).
  template <typename Repeated>
  absl::Status LoadWindows(const Repeated& in, const std::string& field,
                           bool empty_ok,
                           std::vector<SlidingWindow>* windows) const;
  void RebuildSeries();

  // Families, by table of docs/metrics.md.
  void FleetFamilies(std::vector<MetricFamilyData>* out) const;
  void SegmentCounterFamilies(std::vector<MetricFamilyData>* out) const;
  // Issue 18: goodput_chip_seconds_total priced by the catalog.
  void CostFamilies(std::vector<MetricFamilyData>* out) const;
  void HistogramFamilies(std::vector<MetricFamilyData>* out) const;
  void RatioFamilies(std::vector<MetricFamilyData>* out) const;
  void SegmentRatioFamilies(std::vector<MetricFamilyData>* out) const;
  void JobFamilies(std::vector<MetricFamilyData>* out) const;
  void JobProgressFamilies(std::vector<MetricFamilyData>* out) const;
  void JobStepTimeFamilies(std::vector<MetricFamilyData>* out) const;
  void JobCheckpointAdviceFamilies(std::vector<MetricFamilyData>* out) const;
  void JobRatioFamilies(std::vector<MetricFamilyData>* out) const;

  const Config* config_;
  MetricsOptions options_;
  std::vector<std::string> dimensions_;  // segment key names, in key order
  std::map<SegmentKey, Segment> segments_;
  std::unordered_map<std::string, Job> jobs_;
  std::map<GroupKey, Group> groups_;
  uint64_t update_ = 0;  // updates begun
  std::vector<const std::pair<const std::string, Job>*> series_;  // by id
  std::map<std::string, double> capacity_;  // high-water marks
  std::vector<SlidingWindow> capacity_windows_;
  CategoryChipSeconds clamped_{};
  double duplicates_ = 0, suppressed_ = 0;
  std::map<std::string, double> jobs_by_state_;
  double jobs_without_chips_ = 0;
  int64_t now_ns_ = 0;
  int64_t newest_job_event_ns_ = 0;  // this update's
  size_t windowed_jobs_ = 0;         // jobs with windows, <= the cap
};

}  // namespace goodput::core

#endif  // GOODPUT_CORE_FLEET_METRICS_H_
