// FleetMetrics: the families of docs/metrics.md, as plain data.
#include <algorithm>
#include <array>

#include "absl/strings/str_cat.h"
#include "core/badput_cost.h"
#include "core/checkpoint_advice.h"
#include "core/fleet_metrics.h"

namespace goodput::core {
namespace {

void Add(MetricFamilyData* f, MetricLabels labels, double value) {
  AddSample(f, std::move(labels), value);
}

MetricLabels With(MetricLabels labels, const std::string& name,
                  const std::string& value) {
  labels.emplace_back(name, value);
  return labels;
}

// The ratio gauges sg, rg, pg, mpg and (optional) goodput of one scope.
struct RatioSet {
  RatioSet(const std::string& scope, const std::string& of, bool with_goodput) {
    for (const char* r : {"sg", "rg", "pg", "mpg", "goodput"}) {
      if (!with_goodput && std::string(r) == "goodput") break;
      families.push_back(NewFamily(
          absl::StrCat("goodput_", scope, "_", r, "_ratio"),
          absl::StrCat(r, " of ", of, " over the window (recognition time)"),
          MetricKind::kGauge));
    }
  }
  void Add(const Ratios& r, const MetricLabels& labels) {
    const std::array<const std::optional<double>*, 5> values = {
        &r.sg, &r.rg, &r.pg, &r.mpg, &r.goodput};
    for (size_t i = 0; i < families.size(); ++i) {
      if (*values[i]) AddSample(&families[i], labels, **values[i]);
    }
  }
  void MoveTo(std::vector<MetricFamilyData>* out) {
    for (auto& f : families) out->push_back(std::move(f));
  }
  std::vector<MetricFamilyData> families;
};

// Rule 14's slice efficiency of one scope over each window (elastic jobs'
// held / requested all-allocated chip-seconds; absent without any).
struct SliceSet {
  explicit SliceSet(const std::string& scope, const std::string& of)
      : family(NewFamily(
            absl::StrCat("goodput_", scope, "_slice_efficiency_ratio"),
            absl::StrCat("slice_efficiency of ", of,
                         " over the window (elastic jobs, rule 14)"),
            MetricKind::kGauge)) {}
  void Add(const WindowAmounts& a, const MetricLabels& labels) {
    if (auto e = a.SliceEfficiency()) AddSample(&family, labels, *e);
  }
  MetricFamilyData family;
};

}  // namespace

std::vector<MetricFamilyData> FleetMetrics::Families() const {
  std::vector<MetricFamilyData> out;
  FleetFamilies(&out);
  SegmentCounterFamilies(&out);
  CostFamilies(&out);
  HistogramFamilies(&out);
  RatioFamilies(&out);
  SegmentRatioFamilies(&out);
  JobFamilies(&out);
  JobProgressFamilies(&out);
  JobStepTimeFamilies(&out);
  JobCheckpointAdviceFamilies(&out);
  JobRatioFamilies(&out);
  return out;
}

// A segment's chip-seconds x its accelerator's (key[0]) rates: a counter
// as long as the catalog does not change. Segments whose accelerator has
// no price (power) have no series; energy only for categories that draw
// power.
void FleetMetrics::CostFamilies(std::vector<MetricFamilyData>* out) const {
  auto usd = NewFamily("goodput_cost_usd_total",
                       "Chip-seconds by category priced at the catalog's $ "
                       "per chip-hour, recognition time.",
                       MetricKind::kCounter);
  auto kwh = NewFamily("goodput_energy_kwh_total",
                       "Chip-seconds by category (chips held) at the "
                       "catalog's W per chip, in kWh, recognition time.",
                       MetricKind::kCounter);
  for (const auto& [key, s] : segments_) {
    const ChipPeak* rates = config_->catalog.Find(key[0]);
    if (rates == nullptr) continue;
    const MetricLabels labels = SegmentLabels(key);
    for (int c = 0; c < kNumCategories; ++c) {
      const MetricLabels l =
          With(labels, "category", CategoryName(Category(c)));
      if (rates->usd_per_chip_hour > 0) {
        Add(&usd, l, s.chip_seconds[c] * rates->usd_per_chip_hour / 3600);
      }
      if (rates->watts_per_chip > 0 && DrawsPower(Category(c))) {
        Add(&kwh, l, s.chip_seconds[c] * rates->watts_per_chip / 3.6e6);
      }
    }
  }
  out->push_back(std::move(usd));
  out->push_back(std::move(kwh));
}

void FleetMetrics::FleetFamilies(std::vector<MetricFamilyData>* out) const {
  auto capacity = NewFamily("goodput_capacity_chip_seconds_total",
                            "Host capacity chip-seconds from heartbeats.",
                            MetricKind::kCounter);
  for (const auto& [a, v] : capacity_) {
    MetricLabels labels = {{"accelerator", a}};
    if (!options_.capacity_shard.empty()) {
      labels = With(labels, "capacity_shard", options_.capacity_shard);
    }
    Add(&capacity, labels, v);
  }
  auto jobs = NewFamily("goodput_jobs", "Jobs by state.", MetricKind::kGauge);
  for (const auto& [s, v] : jobs_by_state_) Add(&jobs, {{"state", s}}, v);
  auto no_chips = NewFamily("goodput_jobs_without_chips",
                            "Jobs left out of chip-weighted sums (no chips).",
                            MetricKind::kGauge);
  Add(&no_chips, {}, jobs_without_chips_);
  auto dup = NewFamily("goodput_duplicate_events_total",
                       "Events ignored as duplicates (SPEC rule 3).",
                       MetricKind::kCounter);
  Add(&dup, {}, duplicates_);
  auto clamped = NewFamily(
      "goodput_chip_seconds_clamped_total",
      "Chip-seconds a late-event rebuild took back from a category after "
      "its counter had counted them (counters never decrease).",
      MetricKind::kCounter);
  for (int c = 0; c < kNumCategories; ++c) {
    Add(&clamped, {{"category", CategoryName(static_cast<Category>(c))}},
        clamped_[c]);
  }
  for (auto* f : {&capacity, &jobs, &no_chips, &dup, &clamped}) {
    out->push_back(std::move(*f));
  }
}

void FleetMetrics::SegmentCounterFamilies(
    std::vector<MetricFamilyData>* out) const {
  auto chip = NewFamily("goodput_chip_seconds_total",
                        "Chip-seconds by category, recognition time.",
                        MetricKind::kCounter);
  auto ideal = NewFamily("goodput_ideal_chip_seconds_total",
                         "Ideal chip-seconds of productive costed steps.",
                         MetricKind::kCounter);
  auto costed = NewFamily("goodput_costed_productive_chip_seconds_total",
                          "Productive chip-seconds of costed steps.",
                          MetricKind::kCounter);
  auto risk =
      NewFamily("goodput_at_risk_chip_seconds",
                "Productive chip-seconds not durable yet.", MetricKind::kGauge);
  auto intr = NewFamily("goodput_interruptions_total",
                        "Attempts ended by an interruption (or a restart).",
                        MetricKind::kCounter);
  auto notices =
      NewFamily("goodput_interruption_notices_total",
                "Interruption notices (warnings).", MetricKind::kCounter);
  auto pg = NewFamily("goodput_pg_above_one_total",
                      "Completed steps whose program goodput exceeds 1.",
                      MetricKind::kCounter);
  auto degraded = NewFamily(
      "goodput_degraded_chip_seconds_total",
      "Elastic jobs' (chips - held chips) x all-allocated seconds (rule 14).",
      MetricKind::kCounter);
  auto elastic =
      NewFamily("goodput_elastic_allocated_chip_seconds_total",
                "Elastic jobs' chips x all-allocated seconds (rule 14).",
                MetricKind::kCounter);
  for (const auto& [key, s] : segments_) {
    const MetricLabels labels = SegmentLabels(key);
    for (int c = 0; c < kNumCategories; ++c) {
      Add(&chip, With(labels, "category", CategoryName(Category(c))),
          s.chip_seconds[c]);
    }
    Add(&ideal, labels, s.ideal);
    Add(&costed, labels, s.costed);
    Add(&risk, labels, s.at_risk);
    Add(&pg, labels, s.pg_above_one);
    Add(&degraded, labels, s.degraded);
    Add(&elastic, labels, s.elastic_allocated);
    for (int r = 0; r < kNumReasons; ++r) {
      Add(&intr, With(labels, "reason", ReasonName(r)), s.interruptions[r]);
      Add(&notices, With(labels, "reason", ReasonName(r)), s.notices[r]);
    }
  }
  for (auto* f : {&chip, &ideal, &costed, &risk, &intr, &notices, &pg,
                  &degraded, &elastic}) {
    out->push_back(std::move(*f));
  }
}

void FleetMetrics::HistogramFamilies(std::vector<MetricFamilyData>* out) const {
  static constexpr const char* kNames[kNumHistograms][2] = {
      {"goodput_startup_seconds", "Attempt start to its first completed step."},
      {"goodput_time_to_recover_seconds",
       "Interruption to the next attempt's first completed step."},
      {"goodput_time_between_interruptions_seconds",
       "An attempt's start to its interruption."}};
  const std::vector<double>& bounds = DurationBucketBounds();
  for (int h = 0; h < kNumHistograms; ++h) {
    auto f = NewFamily(kNames[h][0], kNames[h][1], MetricKind::kHistogram);
    f.bounds = bounds;
    for (const auto& [key, s] : segments_) {
      const Histogram& hist = s.histograms[h];
      MetricSample sample;
      sample.labels = SegmentLabels(key);
      uint64_t cumulative = 0;
      for (size_t b = 0; b < bounds.size(); ++b) {
        cumulative += b < hist.counts.size() ? hist.counts[b] : 0;
        sample.cumulative.push_back(cumulative);
      }
      sample.count = hist.count;
      sample.sum = hist.sum;
      f.samples.push_back(std::move(sample));
    }
    out->push_back(std::move(f));
  }
}

void FleetMetrics::RatioFamilies(std::vector<MetricFamilyData>* out) const {
  RatioSet fleet("fleet", "the fleet", true);
  SliceSet slice("fleet", "the fleet");
  auto cap_sg = NewFamily("goodput_fleet_capacity_sg_ratio",
                          "sg_capacity over the window.", MetricKind::kGauge);
  auto cap_mpg = NewFamily("goodput_fleet_capacity_mpg_ratio",
                           "mpg_capacity over the window.", MetricKind::kGauge);
  for (size_t w = 0; w < options_.windows.size(); ++w) {
    WindowAmounts sum = capacity_windows_[w].Sum(now_ns_);
    for (const auto& [key, s] : segments_) sum.Add(s.windows[w].Sum(now_ns_));
    const MetricLabels labels = {{"window", options_.windows[w].first}};
    const TotalsRatios r = sum.Ratios(/*with_capacity=*/true);
    fleet.Add(r.ratios, labels);
    slice.Add(sum, labels);
    if (r.sg_capacity) Add(&cap_sg, labels, *r.sg_capacity);
    if (r.mpg_capacity) Add(&cap_mpg, labels, *r.mpg_capacity);
  }
  fleet.MoveTo(out);
  out->push_back(std::move(slice.family));
  out->push_back(std::move(cap_sg));
  out->push_back(std::move(cap_mpg));
}

void FleetMetrics::SegmentRatioFamilies(
    std::vector<MetricFamilyData>* out) const {
  // (dimension index, value) -> per-window sums over segment keys.
  std::map<std::pair<size_t, std::string>, std::vector<WindowAmounts>> sums;
  for (const auto& [key, s] : segments_) {
    for (size_t d = 0; d < dimensions_.size(); ++d) {
      auto& v = sums[{d, key[d]}];
      v.resize(options_.windows.size());
      for (size_t w = 0; w < v.size(); ++w) v[w].Add(s.windows[w].Sum(now_ns_));
    }
  }
  RatioSet seg("segment", "one segment value", false);
  SliceSet slice("segment", "one segment value");
  for (const auto& [dv, windows] : sums) {
    for (size_t w = 0; w < windows.size(); ++w) {
      const MetricLabels labels = {{"dimension", dimensions_[dv.first]},
                                   {"value", dv.second},
                                   {"window", options_.windows[w].first}};
      seg.Add(windows[w].Ratios(false).ratios, labels);
      slice.Add(windows[w], labels);
    }
  }
  seg.MoveTo(out);
  out->push_back(std::move(slice.family));
}

void FleetMetrics::JobFamilies(std::vector<MetricFamilyData>* out) const {
  auto info =
      NewFamily("goodput_job_info", "1; joins a job to its segment and state.",
                MetricKind::kGauge);
  auto chips = NewFamily("goodput_job_chips", "The job's chip weight.",
                         MetricKind::kGauge);
  auto chip = NewFamily("goodput_job_chip_seconds_total",
                        "The job's chip-seconds by category, recognition time.",
                        MetricKind::kCounter);
  for (const auto* entry : series_) {
    const Job& job = entry->second;
    const MetricLabels id = {{"job_id", entry->first}};
    MetricLabels labels = id;
    for (auto& l : SegmentLabels(job.key)) labels.push_back(l);
    Add(&info, With(labels, "state", JobStateName(job.last.state)), 1);
    Add(&chips, id, static_cast<double>(job.last.chips));
    const double w = static_cast<double>(job.last.chips) * 1e-9;
    for (int c = 0; c < kNumCategories; ++c) {
      Add(&chip, With(id, "category", CategoryName(Category(c))),
          static_cast<double>(job.ledger.counted().nanos[c]) * w);
    }
  }
  for (auto* f : {&info, &chips, &chip}) out->push_back(std::move(*f));
}

void FleetMetrics::JobProgressFamilies(
    std::vector<MetricFamilyData>* out) const {
  auto risk = NewFamily("goodput_job_at_risk_seconds",
                        "The job's productive seconds not durable yet.",
                        MetricKind::kGauge);
  auto steps =
      NewFamily("goodput_job_steps_total", "Highest completed step not lost.",
                MetricKind::kCounter);
  auto last_step = NewFamily("goodput_job_last_step_timestamp_seconds",
                             "Event time of the job's last completed step.",
                             MetricKind::kGauge);
  auto last_ckpt =
      NewFamily("goodput_job_last_checkpoint_timestamp_seconds",
                "Event time of the job's last checkpoint.", MetricKind::kGauge);
  for (const auto* entry : series_) {
    const Recognized& r = entry->second.last;
    const MetricLabels id = {{"job_id", entry->first}};
    Add(&risk, id, static_cast<double>(r.at_risk_ns) * 1e-9);
    Add(&steps, id, static_cast<double>(entry->second.ledger.counted().steps));
    if (r.last_step_ns) {
      Add(&last_step, id, static_cast<double>(*r.last_step_ns) * 1e-9);
    }
    if (r.last_checkpoint_ns) {
      Add(&last_ckpt, id, static_cast<double>(*r.last_checkpoint_ns) * 1e-9);
    }
  }
  for (auto* f : {&risk, &steps, &last_step, &last_ckpt}) {
    out->push_back(std::move(*f));
  }
  auto suppressed = NewFamily(
      "goodput_job_series_suppressed_total",
      "Job series the --max_job_series cap left out (per job per scrape).",
      MetricKind::kCounter);
  Add(&suppressed, {}, suppressed_);
  auto count = NewFamily("goodput_job_series", "Jobs with series now.",
                         MetricKind::kGauge);
  Add(&count, {}, static_cast<double>(series_.size()));
  out->push_back(std::move(suppressed));
  out->push_back(std::move(count));
}

// Issue 18, slow steps: the step-time baseline and recent window of the
// jobs with series (docs/semantics.md "Slow steps").
void FleetMetrics::JobStepTimeFamilies(
    std::vector<MetricFamilyData>* out) const {
  std::vector<MetricFamilyData> f = {
      NewFamily("goodput_job_step_time_baseline_seconds",
                "Median per-step time of the job's steps (not first of an "
                "attempt).",
                MetricKind::kGauge),
      NewFamily("goodput_job_step_time_baseline_mad_seconds",
                "Median absolute deviation of the job's per-step time.",
                MetricKind::kGauge),
      NewFamily("goodput_job_step_time_baseline_steps",
                "Steps in the job's step-time baseline.", MetricKind::kGauge),
      NewFamily("goodput_job_step_time_recent_seconds",
                "Median per-step time of the job's last 100 steps (at most "
                "15 min).",
                MetricKind::kGauge),
      NewFamily("goodput_job_step_time_recent_steps",
                "Steps in the job's recent step-time window.",
                MetricKind::kGauge)};
  for (const auto* entry : series_) {
    const std::optional<StepTimeSummary>& st = entry->second.last.step_time;
    if (!st) continue;
    const MetricLabels id = {{"job_id", entry->first}};
    Add(&f[0], id, st->baseline_median_s);
    Add(&f[1], id, st->baseline_mad_s);
    Add(&f[2], id, static_cast<double>(st->baseline_steps));
    Add(&f[3], id, st->recent_p50_s);
    Add(&f[4], id, static_cast<double>(st->recent_steps));
  }
  for (auto& family : f) out->push_back(std::move(family));
}

// Issue 18, checkpoint advice: the advised and the actual interval between
// saves of the jobs with series (docs/semantics.md "Checkpoint advice").
void FleetMetrics::JobCheckpointAdviceFamilies(
    std::vector<MetricFamilyData>* out) const {
  auto advised = NewFamily(
      "goodput_job_checkpoint_interval_advised_seconds",
      "Young/Daly checkpoint interval sqrt(2 C M) of a TRAINING job: M "
      "from its own interruptions with at least 3, else from its "
      "accelerator's rate scaled to its chips.",
      MetricKind::kGauge);
  auto actual = NewFamily(
      "goodput_job_checkpoint_interval_actual_seconds",
      "The job's running time over its checkpoints, beside the advised one.",
      MetricKind::kGauge);
  const std::map<std::string, double> rates = InterruptionRates();
  for (const auto* entry : series_) {
    const Recognized& r = entry->second.last;
    auto rate = rates.find(entry->second.key[0]);
    const std::optional<CheckpointAdvice> a =
        r.checkpoint ? AdviseCheckpoint(*r.checkpoint,
                                        rate == rates.end() ? 0 : rate->second)
                     : std::nullopt;
    // A state saved before observations were kept: the job's own advice.
    const std::optional<double> interval =
        a ? std::optional<double>(a->advised_interval_seconds)
          : r.checkpoint_advised_s;
    if (!interval) continue;
    const MetricLabels id = {{"job_id", entry->first}};
    Add(&advised, id, *interval);
    const std::optional<double> now =
        a ? a->actual_interval_seconds : r.checkpoint_actual_s;
    if (now) Add(&actual, id, *now);
  }
  out->push_back(std::move(advised));
  out->push_back(std::move(actual));
}

void FleetMetrics::JobRatioFamilies(std::vector<MetricFamilyData>* out) const {
  RatioSet job_ratios("job", "the job", true);
  SliceSet slice("job", "the job");
  for (const auto* entry : series_) {
    const Job& job = entry->second;
    for (size_t w = 0; w < job.windows.size(); ++w) {
      const WindowAmounts sum = job.windows[w].Sum(now_ns_);
      const MetricLabels labels = {{"job_id", entry->first},
                                   {"window", options_.windows[w].first}};
      job_ratios.Add(sum.Ratios(false).ratios, labels);
      slice.Add(sum, labels);
    }
  }
  job_ratios.MoveTo(out);
  out->push_back(std::move(slice.family));
}

}  // namespace goodput::core
