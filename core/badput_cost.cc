#include "core/badput_cost.h"

#include <algorithm>
#include <string>
#include <utility>

#include "core/config.h"

namespace goodput::core {
namespace {

constexpr double kSecondsPerHour = 3600;
constexpr double kJoulesPerKwh = 3.6e6;

double Sum(const CategoryChipSeconds& v) {
  double sum = 0;
  for (double x : v) sum += x;
  return sum;
}

}  // namespace

bool DrawsPower(Category c) {
  return c != Category::kQueued && c != Category::kRecovery;
}

CategoryChipSeconds JobCategoryChipSeconds(const JobReport& job) {
  if (job.chips <= 0) return {};
  if (job.min_chips) return job.chip_seconds;
  CategoryChipSeconds out{};
  const double w = static_cast<double>(job.chips) / kNanosPerSecond;
  for (int c = 0; c < kNumCategories; ++c) {
    out[c] = static_cast<double>(job.nanos[c]) * w;
  }
  return out;
}

void PriceJob(const Catalog& catalog, JobReport* job) {
  PriceJob(catalog.Find(job->accelerator), job);
}

void PriceJobs(const Catalog& catalog, std::vector<JobReport>* jobs) {
  constexpr size_t kKept = 8;
  std::vector<std::pair<const std::string*, const ChipPeak*>> found;
  found.reserve(kKept);
  for (JobReport& job : *jobs) {
    auto it = std::find_if(found.begin(), found.end(), [&](const auto& f) {
      return *f.first == job.accelerator;
    });
    if (it != found.end()) {
      PriceJob(it->second, &job);
      continue;
    }
    const ChipPeak* entry = catalog.Find(job.accelerator);
    if (found.size() < kKept) found.emplace_back(&job.accelerator, entry);
    PriceJob(entry, &job);
  }
}

void PriceJob(const ChipPeak* entry, JobReport* job) {
  if (entry == nullptr) return;
  if (!job->usd_per_chip_hour && entry->usd_per_chip_hour > 0) {
    job->usd_per_chip_hour = entry->usd_per_chip_hour;
  }
  if (!job->watts_per_chip && entry->watts_per_chip > 0) {
    job->watts_per_chip = entry->watts_per_chip;
  }
}

std::optional<CategoryChipSeconds> JobCostUsd(const JobReport& job) {
  if (!job.usd_per_chip_hour || job.chips <= 0) return std::nullopt;
  CategoryChipSeconds out = JobCategoryChipSeconds(job);
  for (double& x : out) x *= *job.usd_per_chip_hour / kSecondsPerHour;
  return out;
}

std::optional<CategoryChipSeconds> JobEnergyKwh(const JobReport& job) {
  if (!job.watts_per_chip || job.chips <= 0) return std::nullopt;
  CategoryChipSeconds out = JobCategoryChipSeconds(job);
  for (int c = 0; c < kNumCategories; ++c) {
    out[c] = DrawsPower(Category(c))
                 ? out[c] * *job.watts_per_chip / kJoulesPerKwh
                 : 0;
  }
  return out;
}

void AddJobCost(const JobReport& job, Totals* totals) {
  if (job.chips <= 0) return;
  const std::optional<CategoryChipSeconds> cost = JobCostUsd(job);
  const std::optional<CategoryChipSeconds> energy = JobEnergyKwh(job);
  if (!cost || !energy) {
    const double chip_seconds = Sum(JobCategoryChipSeconds(job));
    if (!cost) totals->unpriced_chip_seconds += chip_seconds;
    if (!energy) totals->unpowered_chip_seconds += chip_seconds;
  }
  for (int c = 0; c < kNumCategories; ++c) {
    if (cost) totals->cost_usd[c] += (*cost)[c];
    if (energy) totals->energy_kwh[c] += (*energy)[c];
  }
}

}  // namespace goodput::core
