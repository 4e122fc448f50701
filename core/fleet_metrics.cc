// FleetMetrics: taking each scrape's recognized time into counters,
// windows and the per-job selection. Families are in
// fleet_metrics_families.cc.
#include "core/fleet_metrics.h"

#include <algorithm>
#include <tuple>

#include "absl/numeric/int128.h"
#include "core/checkpoint_advice.h"
#include "core/fleet_report.h"
#include "core/report.h"

namespace goodput::core {
namespace {

// Window amounts of `up`, with time weighted by `per_ns` (chips / 1e9 for
// chip-seconds, 1 / 1e9 for seconds) and ideal seconds by `ideal_weight`.
WindowAmounts Amounts(const CounterIncrease& up, double per_ns,
                      double ideal_weight) {
  WindowAmounts a;
  for (int64_t n : up.nanos) a.total += static_cast<double>(n) * per_ns;
  // Excluded time is left out of every ratio (docs/semantics.md).
  a.total -= static_cast<double>(up.nanos[Index(Category::kExcluded)]) * per_ns;
  a.unallocated = static_cast<double>(up.nanos[Index(Category::kQueued)] +
                                      up.nanos[Index(Category::kRecovery)]) *
                  per_ns;
  a.productive =
      static_cast<double>(up.nanos[Index(Category::kProductive)]) * per_ns;
  a.costed = static_cast<double>(up.costed_productive_ns) * per_ns;
  a.ideal = up.ideal_seconds * ideal_weight;
  return a;
}

// Rule 14: an elastic job's all-allocated time in `up` at its held chips
// and at its requested `chips`, in chip-seconds (slice efficiency).
void AddSliceAmounts(const CounterIncrease& up, double chips, double scale,
                     WindowAmounts* a) {
  for (int c = 0; c < kNumCategories; ++c) {
    if (c == Index(Category::kQueued) || c == Index(Category::kRecovery) ||
        c == Index(Category::kExcluded)) {
      continue;
    }
    a->elastic_held += up.chip_seconds[c] * scale;
    a->elastic_requested +=
        static_cast<double>(up.nanos[c]) * 1e-9 * chips * scale;
  }
}

// An elastic job's own (time) window amounts: SG, RG and goodput in time,
// PG as ideal over productive chip-seconds (rule 14), both / chips.
WindowAmounts TimeAmounts(const CounterIncrease& up, double chips) {
  WindowAmounts a = Amounts(up, 1e-9, 1);
  a.costed = up.costed_productive_chip_seconds / chips;
  AddSliceAmounts(up, chips, 1 / chips, &a);
  return a;
}

// Rule 14: the window amounts of an elastic job's increase, from its
// allocation-weighted chip-seconds; `scale` turns them into the unit of the
// windows (1 for chip-seconds, 1 / chips for a job's own time windows);
// ideal seconds are weighted by the requested `chips`.
WindowAmounts ElasticAmounts(const CounterIncrease& up, double scale,
                             double chips) {
  WindowAmounts a;
  AddSliceAmounts(up, chips, scale, &a);
  for (double cs : up.chip_seconds) a.total += cs * scale;
  a.total -= up.chip_seconds[Index(Category::kExcluded)] * scale;
  a.unallocated = (up.chip_seconds[Index(Category::kQueued)] +
                   up.chip_seconds[Index(Category::kRecovery)]) *
                  scale;
  a.productive = up.chip_seconds[Index(Category::kProductive)] * scale;
  a.costed = up.costed_productive_chip_seconds * scale;
  a.ideal = up.ideal_seconds * chips;
  return a;
}

void AddToWindows(int64_t time_ns, const WindowAmounts& a,
                  std::vector<SlidingWindow>* windows) {
  if (a.total == 0 && a.ideal == 0 && a.capacity == 0) return;
  for (SlidingWindow& w : *windows) w.Add(time_ns, a);
}

// An ended job's totals from its final report: all its time is settled,
// split as the report splits it. Interruptions and notices by reason and
// steps above PG 1 are not in a report; they stay 0.
Recognized RecognizedOf(const JobReport& report, int64_t ended_ns) {
  Recognized r;
  r.nanos = report.nanos;
  r.costed_productive_ns = report.costed_productive_ns;
  r.chip_seconds = report.chip_seconds;
  r.costed_productive_chip_seconds = report.costed_productive_chip_seconds;
  r.min_chips = report.min_chips;
  r.ideal_seconds = report.ideal_seconds;
  r.duplicates = report.duplicates;
  r.steps = std::max<int64_t>(0, report.last_step.value_or(0));
  r.at_risk_ns = report.at_risk_ns;
  r.state = report.state;
  r.chips = report.chips;
  r.last_event_ns = ended_ns;
  r.step_time = report.step_time;
  r.checkpoint = ObserveJob(report, report.checkpoints);
  if (const std::optional<CheckpointAdvice> a = AdviseJob(report, 0)) {
    r.checkpoint_advised_s = a->advised_interval_seconds;
    r.checkpoint_actual_s = a->actual_interval_seconds;
  }
  return r;
}

}  // namespace

const std::vector<double>& DurationBucketBounds() {
  static const std::vector<double> kBounds = {
      10, 30, 60, 120, 300, 600, 1200, 1800, 3600, 7200, 14400, 43200, 86400};
  return kBounds;
}

FleetMetrics::FleetMetrics(const Config* config, MetricsOptions options)
    : config_(config), options_(std::move(options)) {
  dimensions_ = {"accelerator", "workload", "framework", "size"};
  for (const std::string& key : options_.segment_labels) {
    dimensions_.push_back("label_" + key);
  }
  capacity_windows_ = NewWindows();
}

std::vector<SlidingWindow> FleetMetrics::NewWindows() const {
  std::vector<SlidingWindow> windows;
  for (const auto& [label, ns] : options_.windows) {
    windows.emplace_back(ns, options_.window_buckets);
  }
  return windows;
}

void FleetMetrics::Begin() {
  newest_job_event_ns_ = 0;
  ++update_;
  for (auto& [key, group] : groups_) {
    group.sum = Recognized();
    group.jobs = 0;
  }
}

bool FleetMetrics::Changed(const std::string& job_id, uint64_t generation) {
  Job& job = jobs_[job_id];
  job.seen = update_;
  const bool changed =
      !job.updated || job.restored || job.generation != generation;
  job.generation = generation;
  return changed;
}

void FleetMetrics::Unchanged(const std::string& job_id) {
  auto it = jobs_.find(job_id);
  if (it != jobs_.end()) it->second.seen = update_;
}

void FleetMetrics::UpdateJob(const JobTracker& tracker) {
  Job& job = jobs_[tracker.job_id()];
  Recognized now = tracker.Recognize();
  if (job.key_event_ns != now.last_event_ns) {
    job.key = KeyOf(tracker.Spec());
    job.key_event_ns = now.last_event_ns;
  }
  Segment& segment = Count(std::move(now), &job);
  AddObservations(tracker, &job, &segment);
}

void FleetMetrics::UpdateEndedJob(const JobReport& report, int64_t ended_ns) {
  Job& job = jobs_[report.job_id];
  if (job.restored && job.last.state == JobStateKind::kEnded) {
    job.restored = false;  // its totals as the tracker had them (LoadState)
    return;
  }
  job.key = KeyOf(report);
  job.key_event_ns = ended_ns;
  Count(RecognizedOf(report, ended_ns), &job);
}

void FleetMetrics::UpdateEndedGroup(const JobReport& totals, int64_t jobs,
                                    int64_t newest_ended_ns) {
  Group& g = groups_[GroupKey(KeyOf(totals), totals.chips)];
  const Recognized r = RecognizedOf(totals, newest_ended_ns);
  AddCounters(r, &g.sum);
  g.sum.at_risk_ns += r.at_risk_ns;
  g.sum.state = JobStateKind::kEnded;
  g.sum.chips = totals.chips;
  g.sum.min_chips = totals.min_chips;
  g.sum.last_event_ns = std::max(g.sum.last_event_ns, newest_ended_ns);
  g.jobs += jobs;
}

void FleetMetrics::Sweep() {
  for (auto it = jobs_.begin(); it != jobs_.end();) {
    Job& job = it->second;
    if (job.seen == 0 || job.seen == update_) {
      ++it;
      continue;
    }
    if (job.updated) {
      groups_[GroupKey(job.key, job.last.chips)].ledger.Absorb(job.ledger);
    }
    if (!job.windows.empty()) --windowed_jobs_;
    it = jobs_.erase(it);
  }
}

void FleetMetrics::CountGroups() {
  for (auto& [key, group] : groups_) {
    if (group.jobs == 0) continue;
    const CounterIncrease up = group.ledger.Update(group.sum);
    AddToSegment(group.sum, up, &SegmentFor(key.first));
    newest_job_event_ns_ =
        std::max(newest_job_event_ns_, group.sum.last_event_ns);
  }
}

FleetMetrics::Segment& FleetMetrics::Count(Recognized now, Job* job) {
  job->updated = true;
  job->restored = false;
  job->last = std::move(now);
  const CounterIncrease up = job->ledger.Update(job->last);
  Segment& segment = SegmentFor(job->key);
  AddToSegment(job->last, up, &segment);
  // A new job gets windows at once while under the cap (SelectJobs
  // decides who keeps them), so its first increases are in them.
  if (job->windows.empty() && windowed_jobs_ < options_.max_job_series) {
    job->windows = NewWindows();
    ++windowed_jobs_;
  }
  const int64_t t = job->last.last_event_ns;
  // A job's own windows are in time; an elastic job's PG there is still
  // ideal over productive chip-seconds (both / chips).
  const double chips = static_cast<double>(job->last.chips);
  AddToWindows(t,
               job->last.min_chips && chips > 0 ? TimeAmounts(up, chips)
                                                : Amounts(up, 1e-9, 1),
               &job->windows);
  newest_job_event_ns_ = std::max(newest_job_event_ns_, t);
  job->rank = static_cast<double>(job->last.chips) * 1e-9 *
              job->ledger.counted().nanos[Index(Category::kLost)];
  return segment;
}

FleetMetrics::SegmentKey FleetMetrics::KeyOf(const JobReport& spec) const {
  SegmentKey key = {OrUnknown(spec.accelerator),
                    v1::JobSubmitted::Workload_Name(spec.workload),
                    OrUnknown(spec.framework),
                    SizeBucket(*config_, spec.chips)};
  for (const std::string& label : options_.segment_labels) {
    auto it = spec.labels.find(label);
    key.push_back(it == spec.labels.end() ? "unknown" : OrUnknown(it->second));
  }
  return key;
}

FleetMetrics::Segment& FleetMetrics::SegmentFor(const SegmentKey& key) {
  auto [it, inserted] = segments_.try_emplace(key);
  if (inserted) it->second.windows = NewWindows();
  return it->second;
}

void FleetMetrics::AddToSegment(const Recognized& last,
                                const CounterIncrease& up, Segment* s) {
  AddCheckpointRate(last, up, s);
  if (last.min_chips) return AddElasticToSegment(last, up, s);
  const double chips = static_cast<double>(std::max<int64_t>(0, last.chips));
  const double w = chips * 1e-9;
  for (int c = 0; c < kNumCategories; ++c) {
    s->chip_seconds[c] += static_cast<double>(up.nanos[c]) * w;
    clamped_[c] += static_cast<double>(up.clamped[c]) * w;
  }
  s->ideal += up.ideal_seconds * chips;
  s->costed += static_cast<double>(up.costed_productive_ns) * w;
  AddEventCounts(up, s);
  AddToWindows(last.last_event_ns, Amounts(up, w, chips), &s->windows);
}

// Issue 18: as core::AddCheckpointSums, the segment's part of the rate a
// job with fewer than kMinOwnInterruptions is advised with.
void FleetMetrics::AddCheckpointRate(const Recognized& last,
                                     const CounterIncrease& up, Segment* s) {
  if (last.chips <= 0) return;
  int64_t run_ns = 0;
  for (int c = 0; c < kNumCategories; ++c) run_ns += up.nanos[c];
  run_ns -=
      up.nanos[Index(Category::kQueued)] + up.nanos[Index(Category::kRecovery)];
  s->checkpoint_run +=
      static_cast<double>(run_ns) * 1e-9 * static_cast<double>(last.chips);
  for (const int64_t n : up.interruptions) {
    s->checkpoint_interruptions += static_cast<double>(n);
  }
}

std::map<std::string, double> FleetMetrics::InterruptionRates() const {
  std::map<std::string, std::pair<double, double>> sums;  // run, count
  for (const auto& [key, s] : segments_) {
    if (key[1] != v1::JobSubmitted::Workload_Name(v1::JobSubmitted::TRAINING))
      continue;
    std::pair<double, double>& sum = sums[key[0]];
    sum.first += s.checkpoint_run;
    sum.second += s.checkpoint_interruptions;
  }
  std::map<std::string, double> rates;
  for (const auto& [accelerator, sum] : sums) {
    rates[accelerator] = sum.first > 0 ? sum.second / sum.first : 0;
  }
  return rates;
}

// Interruptions, notices, steps above PG 1 and duplicates of `up`.
void FleetMetrics::AddEventCounts(const CounterIncrease& up, Segment* s) {
  for (int r = 0; r < kNumReasons; ++r) {
    s->interruptions[r] += static_cast<double>(up.interruptions[r]);
    s->notices[r] += static_cast<double>(up.notices[r]);
  }
  s->pg_above_one += static_cast<double>(up.pg_above_one_steps);
  duplicates_ += static_cast<double>(up.duplicates);
}

// Rule 14: an elastic job's increases in its own allocation-weighted
// chip-seconds, and its degraded and requested all-allocated chip-seconds.
void FleetMetrics::AddElasticToSegment(const Recognized& last,
                                       const CounterIncrease& up, Segment* s) {
  const double chips = static_cast<double>(std::max<int64_t>(0, last.chips));
  double held = 0;
  int64_t allocated_ns = 0;
  for (int c = 0; c < kNumCategories; ++c) {
    s->chip_seconds[c] += up.chip_seconds[c];
    clamped_[c] += up.clamped_chip_seconds[c];
    if (c == Index(Category::kQueued) || c == Index(Category::kRecovery) ||
        c == Index(Category::kExcluded)) {
      continue;
    }
    held += up.chip_seconds[c];
    allocated_ns += up.nanos[c];
  }
  const double requested = static_cast<double>(allocated_ns) * chips * 1e-9;
  s->elastic_allocated += requested;
  s->degraded += std::max(0.0, requested - held);
  s->ideal += up.ideal_seconds * chips;
  s->costed += up.costed_productive_chip_seconds;
  AddEventCounts(up, s);
  AddToWindows(last.last_event_ns, ElasticAmounts(up, 1, chips), &s->windows);
}

void FleetMetrics::AddObservations(const JobTracker& tracker, Job* job,
                                   Segment* s) {
  const std::vector<Observation>& all = tracker.observations();
  const std::vector<double>& bounds = DurationBucketBounds();
  for (size_t i = job->ledger.Consume(all.size()); i < all.size(); ++i) {
    Histogram& h = s->histograms[static_cast<int>(all[i].kind)];
    const double seconds = static_cast<double>(all[i].nanos) * 1e-9;
    h.counts.resize(bounds.size() + 1);
    const size_t b = std::lower_bound(bounds.begin(), bounds.end(), seconds) -
                     bounds.begin();
    ++h.counts[b];
    ++h.count;
    h.sum += seconds;
  }
}

void FleetMetrics::Finish(const std::map<std::string, double>& capacity,
                          int64_t now_ns) {
  Sweep();
  CountGroups();
  now_ns_ = std::max({now_ns_, now_ns, newest_job_event_ns_});
  AddCapacity(capacity);
  AddGauges();
  SelectJobs(now_ns_);
}

void FleetMetrics::AddCapacity(const std::map<std::string, double>& capacity) {
  for (const auto& [accelerator, chip_seconds] : capacity) {
    double& high = capacity_[OrUnknown(accelerator)];
    if (chip_seconds <= high) continue;
    WindowAmounts a;
    a.capacity = chip_seconds - high;
    high = chip_seconds;
    AddToWindows(now_ns_, a, &capacity_windows_);
  }
}

// Gauges from every job's last totals: at risk, jobs by state, no chips.
// At risk is summed in integer chip-nanoseconds, so that the order of the
// jobs (a hash map's) cannot change it.
void FleetMetrics::AddGauges() {
  std::map<SegmentKey, absl::int128> at_risk;  // chip-nanoseconds
  for (JobStateKind s : {JobStateKind::kQueued, JobStateKind::kRunning,
                         JobStateKind::kRecovering, JobStateKind::kEnded}) {
    jobs_by_state_[JobStateName(s)] = 0;
  }
  jobs_without_chips_ = 0;
  for (const auto& [id, job] : jobs_) {
    if (!job.updated) continue;
    jobs_by_state_[JobStateName(job.last.state)] += 1;
    if (job.last.chips <= 0) ++jobs_without_chips_;
    at_risk[job.key] += absl::int128(job.last.at_risk_ns) *
                        std::max<int64_t>(0, job.last.chips);
  }
  for (const auto& [key, group] : groups_) {
    jobs_by_state_[JobStateName(JobStateKind::kEnded)] +=
        static_cast<double>(group.jobs);
    if (key.second <= 0) jobs_without_chips_ += static_cast<double>(group.jobs);
    at_risk[key.first] +=
        absl::int128(group.sum.at_risk_ns) * std::max<int64_t>(0, key.second);
  }
  for (auto& [key, segment] : segments_) segment.at_risk = 0;
  for (const auto& [key, ns] : at_risk) {
    SegmentFor(key).at_risk = static_cast<double>(ns) / 1e9;
  }
}

// Series for the top --max_job_series jobs: jobs not ended first, then by
// chips x lost seconds, then by id; ended jobs leave after the grace.
void FleetMetrics::SelectJobs(int64_t now_ns) {
  using Entry = std::pair<const std::string, Job>;
  std::vector<Entry*> candidates;
  for (Entry& entry : jobs_) {
    const Recognized& r = entry.second.last;
    const bool gone = r.state == JobStateKind::kEnded &&
                      now_ns - r.last_event_ns > options_.ended_job_grace_ns;
    if (!gone && entry.second.updated) candidates.push_back(&entry);
    entry.second.series = false;
  }
  auto order = [](const Entry* a, const Entry* b) {
    const bool a_ended = a->second.last.state == JobStateKind::kEnded;
    const bool b_ended = b->second.last.state == JobStateKind::kEnded;
    return std::make_tuple(a_ended, -a->second.rank, a->first) <
           std::make_tuple(b_ended, -b->second.rank, b->first);
  };
  const size_t n = std::min(options_.max_job_series, candidates.size());
  std::partial_sort(candidates.begin(), candidates.begin() + n,
                    candidates.end(), order);
  suppressed_ += static_cast<double>(candidates.size() - n);
  candidates.resize(n);
  for (Entry* e : candidates) e->second.series = true;
  for (Entry& entry : jobs_) {
    Job& job = entry.second;
    if (job.series || job.windows.empty()) continue;
    job.windows.clear();
    --windowed_jobs_;
  }
  for (Entry* e : candidates) {
    if (!e->second.windows.empty()) continue;
    e->second.windows = NewWindows();
    ++windowed_jobs_;
  }
  std::sort(candidates.begin(), candidates.end(),
            [](const Entry* a, const Entry* b) { return a->first < b->first; });
  series_.assign(candidates.begin(), candidates.end());
}

std::vector<std::string> FleetMetrics::SeriesJobIds() const {
  std::vector<std::string> ids;
  ids.reserve(series_.size());
  for (const auto* entry : series_) ids.push_back(entry->first);
  return ids;
}

MetricLabels FleetMetrics::SegmentLabels(const SegmentKey& key) const {
  MetricLabels labels;
  for (size_t i = 0; i < dimensions_.size(); ++i) {
    labels.emplace_back(dimensions_[i], key[i]);
  }
  return labels;
}

}  // namespace goodput::core
