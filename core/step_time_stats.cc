// StepTimeStats: a job's step-time baseline and recent window (issue 18).
#include "core/step_time_stats.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "absl/strings/str_cat.h"
#include "core/state_fields.h"

namespace goodput::core {
namespace {

using Proto = internal::v1::JobTrackerState::StepTimes;
using Weighted = std::vector<std::pair<double, int64_t>>;  // value, steps

// The lower weighted median: the smallest value whose cumulative weight
// reaches half the total. `v` is not empty.
double LowerMedian(Weighted v) {
  std::sort(v.begin(), v.end());
  int64_t total = 0;
  for (const auto& [value, w] : v) total += w;
  int64_t cum = 0;
  for (const auto& [value, w] : v) {
    cum += w;
    if (2 * cum >= total) return value;
  }
  return v.back().first;
}

// Per-step nanoseconds and steps of one report; no initializers, so an
// array of them on the stack costs nothing until filled.
struct Entry {
  int64_t ns;
  int64_t steps;
};

bool ByNanos(const Entry& a, const Entry& b) { return a.ns < b.ns; }

// LowerMedian of `n` > 0 entries, each of weight 1: the element at
// (n - 1) / 2 in order.
int64_t UnitLowerMedian(Entry* v, size_t n) {
  Entry* mid = v + (n - 1) / 2;
  std::nth_element(v, mid, v + n, ByNanos);
  return mid->ns;
}

// LowerMedian of `n` > 0 weighted entries (sorts them).
int64_t WeightedLowerMedian(Entry* v, size_t n) {
  std::sort(v, v + n, ByNanos);
  int64_t total = 0;
  for (size_t i = 0; i < n; ++i) total += v[i].steps;
  int64_t cum = 0;
  for (size_t i = 0; i < n; ++i) {
    cum += v[i].steps;
    if (2 * cum >= total) return v[i].ns;
  }
  return v[n - 1].ns;
}

}  // namespace

int32_t StepTimeStats::BucketOf(int64_t per_step_ns) {
  if (per_step_ns <= 1) return 0;
  return static_cast<int32_t>(std::floor(
      kBucketsPerDoubling * std::log2(static_cast<double>(per_step_ns))));
}

double StepTimeStats::BucketSeconds(int32_t index) {
  return std::exp2((index + 0.5) / kBucketsPerDoubling) / kNanosPerSecond;
}

void StepTimeStats::Add(int64_t time_ns, int64_t steps, int64_t at_ns) {
  if (steps <= 0) return;
  summary_current_ = false;
  const int64_t per_step = std::max<int64_t>(0, time_ns) / steps;
  AddToBaseline(BucketOf(per_step), steps);
  const Report r{per_step, at_ns, steps};
  if (recent_.size() < kRecentReports) {
    if (recent_.size() == recent_.capacity()) {  // grow to 100, not 128
      recent_.reserve(std::min(kRecentReports, 2 * recent_.size() + 4));
    }
    recent_.push_back(r);
    return;
  }
  recent_[next_] = r;
  next_ = (next_ + 1) % kRecentReports;
}

void StepTimeStats::AddToBaseline(int32_t index, int64_t steps) {
  auto it =
      std::lower_bound(baseline_.begin(), baseline_.end(), index,
                       [](const Bucket& b, int32_t i) { return b.index < i; });
  if (it != baseline_.end() && it->index == index) {
    it->steps += steps;
  } else {
    baseline_.insert(it, Bucket{index, steps});
  }
}

const StepTimeStats::Report& StepTimeStats::Newest(size_t i) const {
  const size_t n = recent_.size();
  return recent_[(next_ + n - 1 - i) % n];
}

std::optional<StepTimeSummary> StepTimeStats::Summary() const {
  if (summary_current_) return summary_;
  summary_current_ = true;
  summary_.reset();
  if (recent_.empty()) return summary_;
  StepTimeSummary s;
  Baseline(&s);
  Recent(&s);
  s.SetRatio();
  summary_ = s;
  return summary_;
}

void StepTimeStats::Baseline(StepTimeSummary* s) const {
  Weighted times;
  for (const Bucket& b : baseline_) {
    times.emplace_back(BucketSeconds(b.index), b.steps);
    s->baseline_steps += b.steps;
  }
  s->baseline_median_s = LowerMedian(times);
  for (auto& [value, w] : times) value = std::abs(value - s->baseline_median_s);
  s->baseline_mad_s = LowerMedian(std::move(times));
}

// Called for every job on every report: no allocation, and with one step
// per report (the usual case) a selection instead of a sort. Per-step
// nanoseconds order as their seconds do, so the result is the same value.
void StepTimeStats::Recent(StepTimeSummary* s) const {
  const int64_t since = Newest(0).at_ns - kRecentWindowNs;
  Entry times[kRecentReports];
  size_t n = 0;
  bool unit = true;
  for (size_t i = 0; i < recent_.size(); ++i) {
    const Report& r = Newest(i);
    if (i > 0 && (s->recent_steps >= kRecentSteps || r.at_ns < since)) break;
    times[n++] = {r.per_step_ns, r.steps};
    unit = unit && r.steps == 1;
    s->recent_steps += r.steps;
  }
  s->recent_p50_s = static_cast<double>(unit ? UnitLowerMedian(times, n)
                                             : WeightedLowerMedian(times, n)) /
                    kNanosPerSecond;
}

void StepTimeStats::SaveState(Proto* out) const {
  out->Clear();
  for (const Bucket& b : baseline_) {
    Proto::Bucket* p = out->add_baseline();
    p->set_index(b.index);
    p->set_steps(b.steps);
  }
  if (recent_.empty()) return;
  Proto::ReportColumns* c = out->mutable_recent_columns();
  const int n = static_cast<int>(recent_.size());
  c->mutable_per_step_ns()->Reserve(n);
  c->mutable_at_delta_ns()->Reserve(n);
  c->mutable_steps()->Reserve(n);
  int64_t at_ns = 0;
  for (size_t i = recent_.size(); i-- > 0;) {  // oldest first
    const Report& r = Newest(i);
    c->add_per_step_ns(r.per_step_ns);
    c->add_at_delta_ns(WrappingSub(r.at_ns, at_ns));
    c->add_steps(r.steps);
    at_ns = r.at_ns;
  }
}

absl::StatusOr<std::vector<StepTimeStats::Report>> StepTimeStats::RecentOf(
    const Proto& in) {
  const Proto::ReportColumns& c = in.recent_columns();
  const int n = in.has_recent_columns() ? c.steps_size() : in.recent_size();
  if (in.has_recent_columns() && in.recent_size() > 0) {
    return CorruptField("step_times.recent", "both messages and columns");
  }
  if (c.per_step_ns_size() != c.steps_size() ||
      c.at_delta_ns_size() != c.steps_size()) {
    return CorruptField("step_times.recent_columns",
                        "columns differ in length");
  }
  if (static_cast<size_t>(n) > kRecentReports) {
    return CorruptField("step_times.recent", absl::StrCat(n, " reports"));
  }
  std::vector<Report> out;
  out.reserve(static_cast<size_t>(n));
  for (const Proto::Report& r : in.recent()) {
    out.push_back(Report{r.per_step_ns(), r.at_ns(), r.steps()});
  }
  int64_t at_ns = 0;
  for (int i = 0; i < c.steps_size(); ++i) {
    at_ns = WrappingAdd(at_ns, c.at_delta_ns(i));
    out.push_back(Report{c.per_step_ns(i), at_ns, c.steps(i)});
  }
  return out;
}

absl::Status StepTimeStats::LoadState(const Proto& in) {
  StepTimeStats loaded;
  for (int i = 0; i < in.baseline_size(); ++i) {
    const Proto::Bucket& b = in.baseline(i);
    if (b.steps() <= 0 || (i > 0 && b.index() <= in.baseline(i - 1).index())) {
      return CorruptField("step_times.baseline",
                          absl::StrCat("bucket ", i, " empty or unsorted"));
    }
    loaded.baseline_.push_back(Bucket{b.index(), b.steps()});
  }
  absl::StatusOr<std::vector<Report>> recent = RecentOf(in);
  if (!recent.ok()) return recent.status();
  for (const Report& r : *recent) {
    if (r.steps <= 0) return CorruptField("step_times.recent", "steps <= 0");
  }
  loaded.recent_ = *std::move(recent);
  if (loaded.baseline_.empty() != loaded.recent_.empty()) {
    return CorruptField("step_times", "baseline and recent disagree");
  }
  *this = std::move(loaded);
  return absl::OkStatus();
}

}  // namespace goodput::core
