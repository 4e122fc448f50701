#include "core/testing/random_fleet.h"

#include <algorithm>
#include <map>
#include <random>
#include <string>

#include "core/event_order.h"

namespace goodput::core::testing {
namespace {

constexpr int64_t kStart = 1795341600;  // 2026-11-22T10:00:00Z

class JobGenerator {
 public:
  // Elastic choices (rule 14) come from a second generator, so that the
  // fixed-size jobs of a seed stay the ones it gave before elastic jobs.
  JobGenerator(std::mt19937* rng, uint32_t seed, int index)
      : rng_(*rng),
        side_(seed * 1000003u + static_cast<uint32_t>(index)),
        excl_(seed * 7919u + static_cast<uint32_t>(index) + 17u),
        id_("job-" + std::to_string(index)) {}

  void Generate(int n, std::vector<v1::Event>* out) {
    t_ms_ = Uniform(0, 600'000);
    if (Chance(0.8)) Submitted(Next(out));
    for (int i = 0; i < n && !ended_; ++i) {
      // A step at a resize's instant (rule 14); one kind only, so that the
      // apply order does not depend on arrival order.
      if (same_instant_) {
        Step(Next(out));
        continue;
      }
      RandomEvent(Next(out));
      if (!ended_ && !same_instant_ && ExclChance(0.04)) Exclusion(out);
    }
  }

 private:
  int64_t Uniform(int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng_);
  }
  bool Chance(double p) { return std::bernoulli_distribution(p)(rng_); }
  int64_t SideUniform(int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(side_);
  }
  bool SideChance(double p) { return std::bernoulli_distribution(p)(side_); }
  bool ExclChance(double p) { return std::bernoulli_distribution(p)(excl_); }

  // A JOB exclusion at the previous event's instant (it applies after it),
  // from its own generator so that the other events of a seed stay the
  // ones it gave before exclusions.
  void Exclusion(std::vector<v1::Event>* out) {
    v1::Event e = out->back();
    e.clear_body();
    e.clear_attempt();
    const int64_t until_ms =
        t_ms_ + std::uniform_int_distribution<int64_t>(1, 900'000)(excl_);
    auto* x = e.mutable_exclusion();
    x->mutable_until()->set_seconds(kStart + until_ms / 1000);
    x->mutable_until()->set_nanos(static_cast<int32_t>(until_ms % 1000) *
                                  1000000);
    x->set_reason("maintenance");
    x->set_scope(v1::Exclusion::JOB);
    out->push_back(std::move(e));
  }

  v1::Event* Next(std::vector<v1::Event>* out) {
    const int64_t step = Uniform(1, Chance(0.05) ? 1'500'000 : 30'000);
    // An elastic job's resize may share its instant with a step (rule 14).
    if (!same_instant_) t_ms_ += step;
    same_instant_ = false;
    v1::Event& e = out->emplace_back();
    e.mutable_time()->set_seconds(kStart + t_ms_ / 1000);
    e.mutable_time()->set_nanos(static_cast<int32_t>(t_ms_ % 1000) * 1000000);
    e.set_job_id(id_);
    if (use_attempts_ && !attempt_.empty()) e.set_attempt(attempt_);
    return &e;
  }

  void Submitted(v1::Event* e) {
    static const char* kAccel[] = {"tpu-v5p", "h100", "a100", "abacus", ""};
    auto* s = e->mutable_job_submitted();
    s->set_chips(1 << Uniform(0, 11));
    s->set_accelerator(kAccel[Uniform(0, 4)]);
    s->set_workload(static_cast<v1::JobSubmitted::Workload>(Uniform(1, 4)));
    s->set_framework(Chance(0.5) ? "jax" : "pytorch");
    (*s->mutable_labels())["team"] = Chance(0.5) ? "search" : "ads";
    if (Chance(0.7)) s->set_step_flops(1e15 * Uniform(1, 100));
    if (Chance(0.5)) s->set_step_bytes(1e12 * Uniform(1, 100));
    chips_ = s->chips();
    if (SideChance(0.35)) {
      min_chips_ = SideUniform(1, chips_);
      s->set_min_chips(min_chips_);
    }
  }

  void RandomEvent(v1::Event* e) {
    int64_t r = Uniform(0, 99);
    if (r < 40) return Step(e);
    if (r < 55) return Activity(e);
    if (r < 63)
      return e->mutable_checkpoint()->set_step(
          std::max<int64_t>(0, step_ - Uniform(0, 3)));
    if (r < 70) return Interruption(e);
    if (r < 78) return Started(e);
    if (r < 88) return Allocation(e);
    if (r < 90) return Ended(e);
    e->mutable_checkpoint()->set_step(step_);
  }

  void Step(v1::Event* e) {
    step_ = Chance(0.05) ? std::max<int64_t>(0, step_ - Uniform(1, 5))
                         : step_ + (Chance(0.2) ? Uniform(2, 10) : 1);
    auto* s = e->mutable_step();
    s->set_step(step_);
    if (Chance(0.3)) s->set_input_wait_seconds(Uniform(0, 20000) / 1000.0);
    if (Chance(0.2)) s->set_idle_seconds(Uniform(0, 20000) / 1000.0);
    if (Chance(0.3)) s->set_flops(1e15 * Uniform(1, 50));
  }

  void Allocation(v1::Event* e) {
    int64_t chips = Chance(0.3) ? Uniform(0, chips_) : chips_;
    if (min_chips_ > 0 && SideChance(0.7)) {
      // Resizes between min_chips and above chips, sometimes below min.
      chips = SideChance(0.8) ? SideUniform(min_chips_, chips_ + 2)
                              : SideUniform(0, min_chips_);
      same_instant_ = SideChance(0.3);
    }
    e->mutable_allocation()->set_chips(chips);
  }

  void Activity(v1::Event* e) {
    auto* a = e->mutable_activity();
    a->set_kind(static_cast<v1::Activity::Kind>(Uniform(1, 10)));
    if (SideChance(0.08)) a->set_kind(v1::Activity::RESHARD);
    if (a->kind() == v1::Activity::CUSTOM) a->set_name("eval");
    if (a->kind() == v1::Activity::RESTORE && Chance(0.7)) {
      a->set_step(std::max<int64_t>(0, step_ - Uniform(0, 20)));
    }
  }

  void Interruption(v1::Event* e) {
    auto* i = e->mutable_interruption();
    i->set_reason(static_cast<v1::Interruption::Reason>(Uniform(1, 5)));
    i->set_notice(Chance(0.2));
  }

  void Started(v1::Event* e) {
    use_attempts_ = Chance(0.5);
    attempt_ = "a" + std::to_string(++attempts_);
    if (use_attempts_) e->set_attempt(attempt_);
    e->mutable_started();
  }

  void Ended(v1::Event* e) {
    e->mutable_job_ended()->set_outcome(
        static_cast<v1::JobEnded::Outcome>(Uniform(1, 3)));
    ended_ = true;
  }

  std::mt19937& rng_;
  std::mt19937 side_, excl_;
  std::string id_, attempt_;
  int64_t t_ms_ = 0, step_ = 0, chips_ = 8, min_chips_ = 0;
  bool same_instant_ = false;
  int attempts_ = 0;
  bool use_attempts_ = false, ended_ = false;
};

void AddHeartbeats(std::mt19937* rng, std::vector<v1::Event>* out) {
  for (int h = 0; h < 3; ++h) {
    for (int64_t s = 0; s < 7200; s += 60 + (*rng)() % 400) {
      v1::Event& e = out->emplace_back();
      e.mutable_time()->set_seconds(kStart + s);
      e.set_host("host-" + std::to_string(h));
      e.mutable_heartbeat()->set_chips(256);
      e.mutable_heartbeat()->set_accelerator(h == 0 ? "h100" : "tpu-v5p");
    }
  }
}

std::string RandomHost(std::mt19937* rng) {
  return "host-" + std::to_string((*rng)() % 4);
}

// Gives each job event a host, moving the job now and then at a `started`.
void AddJobHosts(std::mt19937* rng, std::vector<v1::Event>* events) {
  std::map<std::string, std::string> host_of;
  for (v1::Event& e : *events) {
    if (e.job_id().empty()) continue;
    auto [it, added] = host_of.try_emplace(e.job_id(), RandomHost(rng));
    if (!added && e.has_started() && (*rng)() % 3 == 0) {
      it->second = RandomHost(rng);
    }
    e.set_host(it->second);
  }
}

v1::Event SharedExclusion(std::mt19937* rng) {
  v1::Event e;
  const int64_t start_ms = (*rng)() % 7'200'000;
  const int64_t until_ms = start_ms + 1 + (*rng)() % 1'200'000;
  e.mutable_time()->set_seconds(kStart + start_ms / 1000);
  e.mutable_time()->set_nanos(static_cast<int32_t>(start_ms % 1000) * 1000000);
  auto* x = e.mutable_exclusion();
  x->mutable_until()->set_seconds(kStart + until_ms / 1000);
  x->mutable_until()->set_nanos(static_cast<int32_t>(until_ms % 1000) *
                                1000000);
  x->set_reason("rack maintenance");
  if ((*rng)() % 5 < 2) {
    x->set_scope(v1::Exclusion::FLEET);
    return e;
  }
  x->set_scope(v1::Exclusion::HOSTS);
  x->add_hosts(RandomHost(rng));
  if ((*rng)() % 3 == 0) x->add_hosts(RandomHost(rng));
  return e;
}

}  // namespace

std::vector<v1::Event> RandomFleetWithFleetExclusions(uint32_t seed, int jobs,
                                                      int events_per_job) {
  std::vector<v1::Event> out = RandomFleet(seed, jobs, events_per_job);
  std::mt19937 rng(seed * 31u + 5u);
  AddJobHosts(&rng, &out);
  for (int i = 0; i < 1 + jobs / 4; ++i) out.push_back(SharedExclusion(&rng));
  std::stable_sort(out.begin(), out.end(),
                   [](const v1::Event& a, const v1::Event& b) {
                     return EventTimeNanos(a) < EventTimeNanos(b);
                   });
  return out;
}

std::vector<v1::Event> RandomFleet(uint32_t seed, int jobs,
                                   int events_per_job) {
  std::mt19937 rng(seed);
  std::vector<v1::Event> out;
  for (int j = 0; j < jobs; ++j) {
    JobGenerator(&rng, seed, j).Generate(events_per_job, &out);
  }
  AddHeartbeats(&rng, &out);
  std::stable_sort(out.begin(), out.end(),
                   [](const v1::Event& a, const v1::Event& b) {
                     return EventTimeNanos(a) < EventTimeNanos(b);
                   });
  return out;
}

}  // namespace goodput::core::testing
