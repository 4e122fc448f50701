#ifndef GOODPUT_CORE_BADPUT_COST_H_
#define GOODPUT_CORE_BADPUT_COST_H_

#include <optional>
#include <vector>

#include "core/catalog.h"
#include "core/category.h"
#include "core/report.h"

namespace goodput::core {

// Badput in $ and kWh (issue 18 part 3, docs/semantics.md): a job's
// chip-seconds per category priced at its accelerator's catalog entry.
// Cost covers every category (queued and recovery are chip-time the job
// waited for, priced as the capacity it would have used); energy covers
// only the categories in which the job holds its chips (not queued, not
// recovery). Stateless, thread-safe functions.

// The job's chip-seconds per category: its nanoseconds x chips for a
// fixed-size job, its own chip-seconds for an elastic one (rule 14); all
// zero for a job with unknown chips.
CategoryChipSeconds JobCategoryChipSeconds(const JobReport& job);

// Sets the job's rates from `catalog` where the job has none yet (a report
// from a server keeps the rates the server priced it at).
void PriceJob(const Catalog& catalog, JobReport* job);
// The same with the job's catalog entry already found (nullptr: none).
void PriceJob(const ChipPeak* entry, JobReport* job);

// PriceJob for every job of `jobs`, each distinct accelerator looked up in
// `catalog` once (of the first 8 distinct ones; others at each job).
void PriceJobs(const Catalog& catalog, std::vector<JobReport>* jobs);

// $ per category, or nullopt if the job has no price (or no chips).
std::optional<CategoryChipSeconds> JobCostUsd(const JobReport& job);

// kWh per category, or nullopt if the job has no power (or no chips).
std::optional<CategoryChipSeconds> JobEnergyKwh(const JobReport& job);

// Adds the job's cost and energy (or its chip-seconds to the unpriced and
// unpowered sums) to `totals`.
void AddJobCost(const JobReport& job, Totals* totals);

// Whether category `c` draws power (energy_kwh counts it).
bool DrawsPower(Category c);

}  // namespace goodput::core

#endif  // GOODPUT_CORE_BADPUT_COST_H_
