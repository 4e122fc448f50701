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
// `allocated` is the time neither queued nor in recovery (RG's
// denominator), computed by the caller.
Ratios FromSums(double total, double queued, double recovery, double allocated,
                double productive, double ideal, double costed) {
  Ratios r;
  r.goodput = Divide(productive, total);
  if (total > 0) r.sg = 1.0 - (queued + recovery) / total;
  r.rg = Divide(productive, allocated);
  r.pg = Divide(ideal, costed);
  if (r.sg && r.rg && r.pg) r.mpg = *r.sg * *r.rg * *r.pg;
  return r;
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
  const int64_t queued = n[Index(Category::kQueued)];
  const int64_t recovery = n[Index(Category::kRecovery)];
  return FromSums(job.total_ns, queued, recovery,
                  job.total_ns - queued - recovery,
                  n[Index(Category::kProductive)],
                  job.ideal_seconds * static_cast<double>(kNanosPerSecond),
                  job.costed_productive_ns);
}

TotalsRatios ComputeRatios(const Totals& t) {
  const auto& c = t.chip_seconds;
  TotalsRatios out;
  // total - queued - recovery loses precision when queueing dominates; the
  // sum of the allocated categories present (all of them in a fleet
  // report, only productive in a window) bounds it from below and keeps RG
  // <= 1.
  double listed = 0;
  for (int i = 0; i < kNumCategories; ++i) {
    const Category cat = static_cast<Category>(i);
    if (cat != Category::kQueued && cat != Category::kRecovery) {
      listed += c[i];
    }
  }
  const double allocated =
      std::max(listed, t.total_chip_seconds - c[Index(Category::kQueued)] -
                           c[Index(Category::kRecovery)]);
  out.ratios = FromSums(t.total_chip_seconds, c[Index(Category::kQueued)],
                        c[Index(Category::kRecovery)], allocated,
                        c[Index(Category::kProductive)], t.ideal_chip_seconds,
                        t.costed_productive_chip_seconds);
  if (!t.capacity_chip_seconds || *t.capacity_chip_seconds <= 0) return out;
  out.sg_capacity = allocated / *t.capacity_chip_seconds;
  if (out.ratios.rg && out.ratios.pg) {
    out.mpg_capacity = *out.sg_capacity * *out.ratios.rg * *out.ratios.pg;
  }
  return out;
}

}  // namespace goodput::core
