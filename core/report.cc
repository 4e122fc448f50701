#include "core/report.h"

#include <algorithm>

#include "core/config.h"

namespace goodput::core {
namespace {

std::optional<double> Divide(double num, double den) {
  if (den <= 0) return std::nullopt;
  return num / den;
}

// Fills goodput/sg/rg/pg/mpg from the category sums shared by jobs and
// chip-weighted totals.
Ratios FromSums(double total, double queued, double recovery, double productive,
                double ideal, double costed) {
  Ratios r;
  r.goodput = Divide(productive, total);
  if (total > 0) r.sg = 1.0 - (queued + recovery) / total;
  // The allocated time is at least the productive time; in chip-seconds
  // the difference below can fall under it by rounding when queueing
  // dominates, which would put RG above 1.
  r.rg = Divide(productive, std::max(productive, total - queued - recovery));
  r.pg = Divide(ideal, costed);
  if (r.sg && r.rg && r.pg) r.mpg = *r.sg * *r.rg * *r.pg;
  return r;
}

// Excluded time is left out of every ratio (docs/semantics.md).
bool Counted(int c) {
  return c != Index(Category::kQueued) && c != Index(Category::kRecovery) &&
         c != Index(Category::kExcluded);
}

}  // namespace

const char* JobStateName(JobStateKind s) {
  switch (s) {
    case JobStateKind::kQueued:
      return "QUEUED";
    case JobStateKind::kRunning:
      return "RUNNING";
    case JobStateKind::kRecovering:
      return "RECOVERING";
    case JobStateKind::kEnded:
      return "ENDED";
  }
  return "UNKNOWN";
}

Ratios JobRatios(const JobReport& job) {
  const auto& n = job.nanos;
  Ratios r = FromSums(
      job.total_ns - n[Index(Category::kExcluded)], n[Index(Category::kQueued)],
      n[Index(Category::kRecovery)], n[Index(Category::kProductive)],
      job.ideal_seconds * static_cast<double>(kNanosPerSecond),
      job.costed_productive_ns);
  if (!job.min_chips) return r;
  // Rule 14: ideal chip-seconds over productive chip-seconds.
  r.pg = Divide(job.ideal_seconds * static_cast<double>(job.chips),
                job.costed_productive_chip_seconds);
  r.mpg.reset();
  if (r.sg && r.rg && r.pg) r.mpg = *r.sg * *r.rg * *r.pg;
  return r;
}

namespace {

ElasticMeasures Measures(double held, double requested) {
  ElasticMeasures m;
  m.held_chip_seconds = held;
  m.requested_chip_seconds = requested;
  m.degraded_chip_seconds = std::max(0.0, requested - held);
  if (requested > 0) m.slice_efficiency = std::min(1.0, held / requested);
  return m;
}

}  // namespace

std::optional<ElasticMeasures> JobElastic(const JobReport& job) {
  if (!job.min_chips) return std::nullopt;
  int64_t allocated_ns = 0;
  double held = 0;
  for (int c = 0; c < kNumCategories; ++c) {
    if (!Counted(c)) continue;
    allocated_ns += job.nanos[c];
    held += job.chip_seconds[c];
  }
  const double requested = static_cast<double>(allocated_ns) *
                           static_cast<double>(job.chips) / kNanosPerSecond;
  return Measures(held, requested);
}

ElasticMeasures TotalsElastic(const Totals& t) {
  return Measures(t.held_chip_seconds, t.requested_chip_seconds);
}

TotalsRatios ComputeRatios(const Totals& t) {
  const auto& c = t.chip_seconds;
  TotalsRatios out;
  const double counted = t.total_chip_seconds - c[Index(Category::kExcluded)];
  out.ratios =
      FromSums(counted, c[Index(Category::kQueued)],
               c[Index(Category::kRecovery)], c[Index(Category::kProductive)],
               t.ideal_chip_seconds, t.costed_productive_chip_seconds);
  if (!t.capacity_chip_seconds || *t.capacity_chip_seconds <= 0) return out;
  double allocated =
      counted - c[Index(Category::kQueued)] - c[Index(Category::kRecovery)];
  out.sg_capacity = allocated / *t.capacity_chip_seconds;
  if (out.ratios.rg && out.ratios.pg) {
    out.mpg_capacity = *out.sg_capacity * *out.ratios.rg * *out.ratios.pg;
  }
  return out;
}

}  // namespace goodput::core
