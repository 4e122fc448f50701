// FleetMetrics' whole state as an internal::v1::FleetMetricsState
// (proto/metrics_state.proto), and back (SaveState, LoadState).
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/fleet_metrics.h"
#include "core/state_fields.h"

namespace goodput::core {
namespace {

using Proto = internal::v1::FleetMetricsState;

std::string Indexed(absl::string_view field, int i) {
  return absl::StrCat(field, "[", i, "]");
}

// `s` with `field` + "." in front of its message (errors of nested parts
// name the field from the top).
absl::Status Prefixed(const absl::Status& s, absl::string_view field) {
  if (s.ok()) return s;
  return absl::Status(s.code(), absl::StrCat(field, ".", s.message()));
}

void SaveWindows(
    const std::vector<SlidingWindow>& windows,
    google::protobuf::RepeatedPtrField<internal::v1::SlidingWindowState>* out) {
  for (const SlidingWindow& w : windows) w.SaveState(out->Add());
}

template <typename T, size_t n>
void SaveDoubles(const std::array<T, n>& in,
                 google::protobuf::RepeatedField<double>* out) {
  for (const T& v : in) out->Add(static_cast<double>(v));
}

// "5m=300000000000,1h=..." of (label, length) pairs, for errors.
template <typename Windows>
std::string WindowsText(const Windows& windows, int buckets) {
  return absl::StrCat(absl::StrJoin(windows, ",",
                                    [](std::string* out, const auto& w) {
                                      absl::StrAppend(out, w.first, "=",
                                                      w.second, "ns");
                                    }),
                      " with ", buckets, " buckets");
}

absl::Status Refused(absl::string_view field, absl::string_view saved,
                     absl::string_view now) {
  return absl::InvalidArgumentError(absl::StrCat(
      field, ": the state was saved under ", saved, ", this server has ", now));
}

}  // namespace

void FleetMetrics::SaveState(Proto* state) const {
  state->Clear();
  state->set_version(kFleetMetricsStateVersion);
  SaveOptions(state);
  SaveJobs(state);
  SaveSegments(state);
  SaveGroups(state);
  SaveTotals(state);
}

void FleetMetrics::SaveOptions(Proto* state) const {
  for (const auto& [label, ns] : options_.windows) {
    Proto::Window* w = state->add_windows();
    w->set_label(label);
    w->set_length_ns(ns);
  }
  state->set_window_buckets(options_.window_buckets);
  for (const std::string& l : options_.segment_labels) {
    state->add_segment_labels(l);
  }
}

void FleetMetrics::SaveJobs(Proto* state) const {
  std::vector<const std::pair<const std::string, Job>*> sorted;
  for (const auto& entry : jobs_) sorted.push_back(&entry);
  std::sort(sorted.begin(), sorted.end(),
            [](const auto* a, const auto* b) { return a->first < b->first; });
  for (const auto* entry : sorted) {
    const Job& job = entry->second;
    Proto::Job* out = state->add_jobs();
    out->set_id(entry->first);
    job.ledger.SaveState(out->mutable_ledger());
    out->mutable_key()->Add(job.key.begin(), job.key.end());
    out->set_key_event_ns(job.key_event_ns);
    SaveRecognized(job.last, out->mutable_last());
    out->set_updated(job.updated);
    out->set_seen(job.seen != 0 && job.seen == update_);
    out->set_series(job.series);
    SaveWindows(job.windows, out->mutable_windows());
  }
}

void FleetMetrics::SaveSegments(Proto* state) const {
  for (const auto& [key, s] : segments_) {
    Proto::Segment* out = state->add_segments();
    out->mutable_key()->Add(key.begin(), key.end());
    SaveDoubles(s.chip_seconds, out->mutable_chip_seconds());
    out->set_ideal(s.ideal);
    out->set_costed(s.costed);
    out->set_pg_above_one(s.pg_above_one);
    SaveDoubles(s.interruptions, out->mutable_interruptions());
    SaveDoubles(s.notices, out->mutable_notices());
    for (const Histogram& h : s.histograms) {
      Proto::Histogram* hist = out->add_histograms();
      hist->mutable_counts()->Add(h.counts.begin(), h.counts.end());
      hist->set_count(h.count);
      hist->set_sum(h.sum);
    }
    out->set_at_risk(s.at_risk);
    out->set_degraded(s.degraded);
    out->set_elastic_allocated(s.elastic_allocated);
    out->set_checkpoint_run(s.checkpoint_run);
    out->set_checkpoint_interruptions(s.checkpoint_interruptions);
    SaveWindows(s.windows, out->mutable_windows());
  }
}

void FleetMetrics::SaveGroups(Proto* state) const {
  for (const auto& [key, g] : groups_) {
    Proto::Group* out = state->add_groups();
    out->mutable_key()->Add(key.first.begin(), key.first.end());
    out->set_chips(key.second);
    g.ledger.SaveState(out->mutable_ledger());
    SaveRecognized(g.sum, out->mutable_sum());
    out->set_jobs(g.jobs);
  }
}

void FleetMetrics::SaveTotals(Proto* state) const {
  for (const auto& [accelerator, chip_seconds] : capacity_) {
    Proto::Capacity* c = state->add_capacity();
    c->set_accelerator(accelerator);
    c->set_chip_seconds(chip_seconds);
  }
  SaveWindows(capacity_windows_, state->mutable_capacity_windows());
  SaveDoubles(clamped_, state->mutable_clamped());
  state->set_duplicates(duplicates_);
  state->set_suppressed(suppressed_);
  for (const auto& [name, jobs] : jobs_by_state_) {
    Proto::StateCount* c = state->add_jobs_by_state();
    c->set_state(name);
    c->set_jobs(jobs);
  }
  state->set_jobs_without_chips(jobs_without_chips_);
  state->set_now_ns(now_ns_);
}

absl::Status FleetMetrics::LoadState(const Proto& state) {
  if (absl::Status s = CheckOptions(state); !s.ok()) return s;
  FleetMetrics loaded(config_, options_);
  if (absl::Status s = loaded.LoadParts(state); !s.ok()) return s;
  *this = std::move(loaded);
  RebuildSeries();
  return absl::OkStatus();
}

absl::Status FleetMetrics::CheckOptions(const Proto& state) const {
  if (state.version() != kFleetMetricsStateVersion && state.version() != 2) {
    return Refused("version", absl::StrCat(state.version()),
                   absl::StrCat(kFleetMetricsStateVersion));
  }
  std::vector<std::pair<std::string, int64_t>> windows;
  for (const Proto::Window& w : state.windows()) {
    windows.emplace_back(w.label(), w.length_ns());
  }
  if (windows != options_.windows ||
      state.window_buckets() != options_.window_buckets) {
    return Refused("windows", WindowsText(windows, state.window_buckets()),
                   WindowsText(options_.windows, options_.window_buckets));
  }
  const std::vector<std::string> labels(state.segment_labels().begin(),
                                        state.segment_labels().end());
  if (labels != options_.segment_labels) {
    return Refused("segment_labels", absl::StrJoin(labels, ","),
                   absl::StrJoin(options_.segment_labels, ","));
  }
  return absl::OkStatus();
}

absl::Status FleetMetrics::LoadParts(const Proto& state) {
  update_ = 1;  // the saved update: jobs it saw have seen == 1
  for (int i = 0; i < state.jobs_size(); ++i) {
    absl::Status s = LoadJob(state.jobs(i), Indexed("jobs", i));
    if (!s.ok()) return s;
  }
  for (int i = 0; i < state.segments_size(); ++i) {
    absl::Status s = LoadSegment(state.segments(i), Indexed("segments", i));
    if (!s.ok()) return s;
  }
  for (int i = 0; i < state.groups_size(); ++i) {
    absl::Status s = LoadGroup(state.groups(i), Indexed("groups", i));
    if (!s.ok()) return s;
  }
  return LoadTotals(state);
}

template <typename Repeated>
absl::Status FleetMetrics::LoadKey(const Repeated& in, const std::string& field,
                                   bool empty_ok, SegmentKey* key) const {
  if (static_cast<size_t>(in.size()) != dimensions_.size() &&
      !(empty_ok && in.empty())) {
    return CorruptField(
        field, absl::StrCat(in.size(), " values, want ", dimensions_.size()));
  }
  key->assign(in.begin(), in.end());
  return absl::OkStatus();
}

template <typename Repeated>
absl::Status FleetMetrics::LoadWindows(
    const Repeated& in, const std::string& field, bool empty_ok,
    std::vector<SlidingWindow>* windows) const {
  windows->clear();
  if (empty_ok && in.empty()) return absl::OkStatus();
  if (static_cast<size_t>(in.size()) != options_.windows.size()) {
    return CorruptField(field, absl::StrCat(in.size(), " windows, want ",
                                            options_.windows.size()));
  }
  *windows = NewWindows();
  for (int w = 0; w < in.size(); ++w) {
    absl::Status s = (*windows)[w].LoadState(in[w]);
    if (!s.ok()) return Prefixed(s, Indexed(field, w));
  }
  return absl::OkStatus();
}

absl::Status FleetMetrics::LoadJob(const Proto::Job& in,
                                   const std::string& field) {
  Job job;
  absl::Status s = job.ledger.LoadState(in.ledger(), field + ".ledger");
  if (s.ok()) s = LoadKey(in.key(), field + ".key", !in.updated(), &job.key);
  if (s.ok()) s = LoadRecognized(in.last(), field + ".last", &job.last);
  if (s.ok()) {
    s = LoadWindows(in.windows(), field + ".windows", true, &job.windows);
  }
  if (!s.ok()) return s;
  job.key_event_ns = in.key_event_ns();
  job.updated = in.updated();
  job.seen = in.seen() ? update_ : 0;
  job.series = in.series() && in.updated();
  job.restored = true;
  job.rank = static_cast<double>(job.last.chips) * 1e-9 *
             job.ledger.counted().nanos[Index(Category::kLost)];
  const bool windowed = !job.windows.empty();
  if (!jobs_.emplace(in.id(), std::move(job)).second) {
    return CorruptField(field + ".id", absl::StrCat("\"", in.id(), "\" twice"));
  }
  windowed_jobs_ += windowed ? 1 : 0;
  return absl::OkStatus();
}

absl::Status FleetMetrics::LoadSegment(const Proto::Segment& in,
                                       const std::string& field) {
  SegmentKey key;
  Segment seg;
  absl::Status s = LoadKey(in.key(), field + ".key", false, &key);
  if (s.ok()) {
    s = LoadCategoryArray(in.chip_seconds(), field + ".chip_seconds",
                          &seg.chip_seconds);
  }
  if (s.ok()) {
    s = LoadArray(in.interruptions(), field + ".interruptions",
                  &seg.interruptions);
  }
  if (s.ok()) s = LoadArray(in.notices(), field + ".notices", &seg.notices);
  if (s.ok()) {
    s = LoadWindows(in.windows(), field + ".windows", false, &seg.windows);
  }
  if (s.ok()) s = LoadHistograms(in, field + ".histograms", &seg);
  if (!s.ok()) return s;
  seg.ideal = in.ideal();
  seg.costed = in.costed();
  seg.pg_above_one = in.pg_above_one();
  seg.at_risk = in.at_risk();
  seg.degraded = in.degraded();
  seg.elastic_allocated = in.elastic_allocated();
  seg.checkpoint_run = in.checkpoint_run();
  seg.checkpoint_interruptions = in.checkpoint_interruptions();
  if (!segments_.emplace(std::move(key), std::move(seg)).second) {
    return CorruptField(field + ".key", "twice");
  }
  return absl::OkStatus();
}

absl::Status FleetMetrics::LoadHistograms(const Proto::Segment& in,
                                          const std::string& field,
                                          Segment* seg) {
  if (in.histograms_size() != kNumHistograms) {
    return CorruptField(
        field, absl::StrCat(in.histograms_size(), ", want ", kNumHistograms));
  }
  const size_t counts = DurationBucketBounds().size() + 1;
  for (int h = 0; h < kNumHistograms; ++h) {
    const Proto::Histogram& hist = in.histograms(h);
    if (!hist.counts().empty() &&
        static_cast<size_t>(hist.counts_size()) != counts) {
      return CorruptField(Indexed(field, h) + ".counts",
                          absl::StrCat(hist.counts_size(), ", want ", counts));
    }
    Histogram& out = seg->histograms[h];
    out.counts.assign(hist.counts().begin(), hist.counts().end());
    out.count = hist.count();
    out.sum = hist.sum();
  }
  return absl::OkStatus();
}

absl::Status FleetMetrics::LoadGroup(const Proto::Group& in,
                                     const std::string& field) {
  SegmentKey key;
  Group g;
  absl::Status s = LoadKey(in.key(), field + ".key", false, &key);
  if (s.ok()) s = g.ledger.LoadState(in.ledger(), field + ".ledger");
  if (s.ok()) s = LoadRecognized(in.sum(), field + ".sum", &g.sum);
  if (!s.ok()) return s;
  g.jobs = in.jobs();
  if (!groups_.emplace(GroupKey(std::move(key), in.chips()), std::move(g))
           .second) {
    return CorruptField(field + ".key", "twice (with its chips)");
  }
  return absl::OkStatus();
}

absl::Status FleetMetrics::LoadTotals(const Proto& state) {
  absl::Status s = LoadWindows(state.capacity_windows(), "capacity_windows",
                               false, &capacity_windows_);
  if (s.ok()) s = LoadCategoryArray(state.clamped(), "clamped", &clamped_);
  if (!s.ok()) return s;
  for (const Proto::Capacity& c : state.capacity()) {
    capacity_[c.accelerator()] = c.chip_seconds();
  }
  for (const Proto::StateCount& c : state.jobs_by_state()) {
    jobs_by_state_[c.state()] = c.jobs();
  }
  duplicates_ = state.duplicates();
  suppressed_ = state.suppressed();
  jobs_without_chips_ = state.jobs_without_chips();
  now_ns_ = state.now_ns();
  return absl::OkStatus();
}

// series_ from the jobs' series flags, by id (as SelectJobs leaves it).
void FleetMetrics::RebuildSeries() {
  series_.clear();
  for (const auto& entry : jobs_) {
    if (entry.second.series) series_.push_back(&entry);
  }
  std::sort(series_.begin(), series_.end(),
            [](const auto* a, const auto* b) { return a->first < b->first; });
}

}  // namespace goodput::core
