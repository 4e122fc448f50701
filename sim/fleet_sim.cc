#include "sim/fleet_sim.h"

#include <algorithm>
#include <limits>

#include "absl/strings/str_cat.h"

namespace goodput::sim {
namespace {

// Chips per host of each accelerator generation.
int ChipsPerHost(const std::string& accelerator) {
  return accelerator == "tpu-v4" || accelerator == "tpu-v5p" ? 4 : 8;
}

// How many waiting jobs one scheduling pass looks at (backfill depth).
constexpr size_t kBackfillDepth = 256;

}  // namespace

FleetSim::FleetSim(const SimConfig& config)
    : config_(config),
      catalog_(core::Catalog::Default()),
      rng_(config.seed),
      arrivals_rng_(config.seed ^ 0x5eed5eed5eed5eedULL) {
  BuildHosts();
  BuildJobs();
}

void FleetSim::BuildHosts() {
  const auto& accels = config_.accelerators;
  for (int64_t i = 0; i < config_.hosts; ++i) {
    const std::string& accel = accels[i % accels.size()];
    pool_.AddHost({absl::StrCat("host-", i), accel, ChipsPerHost(accel)});
  }
}

JobSpec FleetSim::MakeSpec(JobSpecFactory& factory, int64_t index) {
  const auto& accels = config_.accelerators;
  const std::string& accel = accels[rng_.Between(0, accels.size() - 1)];
  return factory.Make(index, accel, pool_.Capacity(accel),
                      pool_.ChipsPerHost(accel));
}

void FleetSim::BuildJobs() {
  JobSpecFactory factory(&config_, &catalog_, &rng_);
  std::vector<JobSpec> specs;
  for (int64_t i = 0; i < config_.jobs; ++i) {
    JobSpec spec = MakeSpec(factory, i);
    const bool initial = steady() || rng_.Chance(config_.initial_jobs);
    spec.submit_ms =
        config_.start_ms + (initial ? rng_.Between(0, 60'000)
                                    : rng_.Between(0, config_.duration_ms));
    specs.push_back(std::move(spec));
  }
  std::stable_sort(
      specs.begin(), specs.end(),
      [](const auto& a, const auto& b) { return a.submit_ms < b.submit_ms; });
  for (JobSpec& spec : specs) {
    jobs_.push_back(std::make_unique<JobRun>(std::move(spec), &rng_));
  }
  grants_.resize(jobs_.size());
  if (steady())
    AddSteadyArrival(jobs_.empty() ? config_.start_ms
                                   : jobs_.back()->spec().submit_ms);
}

// Steady mode: the next job arrives an exponential time after `after_ms`,
// at a rate of `jobs` per median job length, so that (Little's law) about
// `jobs` jobs are in the fleet at a time.
void FleetSim::AddSteadyArrival(int64_t after_ms) {
  JobSpecFactory factory(&config_, &catalog_, &rng_);
  JobSpec spec = MakeSpec(factory, static_cast<int64_t>(jobs_.size()));
  const double mean_gap = static_cast<double>(config_.job_duration_ms) /
                          std::max<int64_t>(config_.jobs, 1);
  spec.submit_ms =
      after_ms + 1 + static_cast<int64_t>(arrivals_rng_.Exponential(mean_gap));
  jobs_.push_back(std::make_unique<JobRun>(std::move(spec), &rng_));
  grants_.emplace_back();
}

absl::Status FleetSim::Run(EventSink& sink) {
  const int64_t end = steady() ? std::numeric_limits<int64_t>::max()
                               : config_.start_ms + config_.duration_ms;
  if (!jobs_.empty()) Push(jobs_[0]->spec().submit_ms, kArrivals);
  if (config_.hosts > 0) Push(config_.start_ms, kHeartbeats);
  while (!heap_.empty() && heap_.top().time < end && !sink.Stopped()) {
    const Due due = heap_.top();
    heap_.pop();
    if (due.who == kArrivals) {
      FireArrival(due.time, sink);
    } else if (due.who == kHeartbeats) {
      FireHeartbeat(sink);
    } else if (due.who < 0) {
      waiting_.push_back(Requeued(due.who));
      Schedule(due.time, sink);
    } else {
      FireJob(due.who, sink);
    }
  }
  Close();
  return sink.Finish();
}

void FleetSim::Push(int64_t time, int64_t who) {
  heap_.push(Due{time, order_++, who});
}

void FleetSim::FireJob(int64_t index, EventSink& sink) {
  JobRun& job = *jobs_[index];
  const int64_t now = job.next_ms();
  const JobRun::Outcome outcome = job.Fire(sink);
  if (outcome == JobRun::Outcome::kRunning) {
    Push(job.next_ms(), index);
    return;
  }
  pool_.Release(grants_[index]);
  grants_[index] = HostPool::Grant{};
  if (outcome == JobRun::Outcome::kRequeue) {
    // The scheduler sees the job again only after a while, so a preempted
    // job does not get its own chips back at the same instant.
    Push(now + rng_.Between(10, 120) * 1000, Requeue(index));
  } else if (steady()) {
    jobs_[index].reset();  // ended: nothing refers to it any more
  }
  Schedule(now, sink);
}

void FleetSim::FireArrival(int64_t now, EventSink& sink) {
  while (next_arrival_ < jobs_.size() &&
         jobs_[next_arrival_]->spec().submit_ms <= now) {
    jobs_[next_arrival_]->Submit(sink);
    waiting_.push_back(static_cast<int64_t>(next_arrival_++));
    if (steady() && next_arrival_ == jobs_.size()) AddSteadyArrival(now);
  }
  Schedule(now, sink);
  if (next_arrival_ < jobs_.size()) {
    Push(jobs_[next_arrival_]->spec().submit_ms, kArrivals);
  }
}

void FleetSim::FireHeartbeat(EventSink& sink) {
  const Host& host = pool_.hosts()[next_heartbeat_host_];
  const int64_t n = config_.hosts, interval = config_.heartbeat_interval_ms;
  const int64_t t = config_.start_ms + heartbeat_round_ * interval +
                    next_heartbeat_host_ * interval / n;
  v1::Event e;
  e.mutable_time()->set_seconds(t / 1000);
  e.mutable_time()->set_nanos(static_cast<int32_t>(t % 1000) * 1'000'000);
  e.set_host(host.name);
  e.mutable_heartbeat()->set_chips(host.chips);
  e.mutable_heartbeat()->set_accelerator(host.accelerator);
  sink.Emit(e);
  if (++next_heartbeat_host_ == n) {
    next_heartbeat_host_ = 0;
    ++heartbeat_round_;
  }
  Push(config_.start_ms + heartbeat_round_ * interval +
           next_heartbeat_host_ * interval / n,
       kHeartbeats);
}

void FleetSim::Schedule(int64_t now, EventSink& sink) {
  size_t looked = 0;
  for (auto it = waiting_.begin();
       it != waiting_.end() && looked < kBackfillDepth && pool_.FreeChips() > 0;
       ++looked) {
    JobRun& job = *jobs_[*it];
    auto grant = pool_.Allocate(job.spec().accelerator, job.spec().chips);
    if (!grant) {
      ++it;
      continue;
    }
    job.Allocate(now, pool_.hosts()[grant->hosts[0]].name, sink);
    grants_[*it] = std::move(*grant);
    Push(job.next_ms(), *it);
    it = waiting_.erase(it);
  }
}

void FleetSim::Close() {
  const int64_t end = config_.start_ms + config_.duration_ms;
  truth_.start_ms = config_.start_ms;
  truth_.end_ms = end;
  for (size_t i = 0; i < next_arrival_; ++i) {
    if (jobs_[i]) truth_.jobs.push_back(jobs_[i]->Close(end));
  }
  const int64_t n = config_.hosts, interval = config_.heartbeat_interval_ms;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t first = config_.start_ms + i * interval / n;
    if (first < end) {
      truth_.capacity_chip_seconds +=
          pool_.hosts()[i].chips * (end - first) / 1e3;
    }
  }
}

}  // namespace goodput::sim
