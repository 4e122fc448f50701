// Heap bytes per ended job in goodputd's state, with and without the
// eviction of ended jobs (BENCHMARKS.md section 8). Not Google Benchmark:
// prints one line per stage. Soak-like jobs (job_submitted, allocation,
// started, TRAINING, 100-400 steps with a checkpoint every 10, job_ended),
// 20 at a time, through the Ingestor into RocksDB in a temp dir, with a
// MetricsSource scraped every `scrape_every` batches.
//   build/bench/eviction_bench [jobs=4000]
#include <malloc.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "core/fleet_tracker.h"
#include "server/ingestor.h"
#include "server/metrics_source.h"
#include "storage/rocksdb_event_store.h"
#include "util/clock.h"

namespace goodput::bench {
namespace {

constexpr int64_t kStart = 1795341600LL * core::kNanosPerSecond;
constexpr int kConcurrent = 20;
constexpr size_t kBatch = 500;
constexpr int kScrapeEvery = 20;

size_t Heap() { return mallinfo2().uordblks; }

v1::Event At(int64_t t, const std::string& job) {
  v1::Event e;
  e.mutable_time()->set_seconds(t / core::kNanosPerSecond);
  e.mutable_time()->set_nanos(static_cast<int32_t>(t % core::kNanosPerSecond));
  e.set_job_id(job);
  e.set_attempt("a1");
  return e;
}

// One job's events from `t0`, one every 100 ms.
void AddJob(int index, int64_t t0, std::mt19937* rng,
            std::vector<std::vector<v1::Event>>* jobs) {
  const std::string id = "soak-" + std::to_string(index);
  std::vector<v1::Event>& out = jobs->emplace_back();
  int64_t t = t0;
  auto next = [&]() -> v1::Event& {
    t += 100'000'000;
    return out.emplace_back(At(t, id));
  };
  auto* s = next().mutable_job_submitted();
  s->set_chips(8);
  s->set_accelerator("tpu-v5p");
  s->set_framework("jax");
  s->set_workload(v1::JobSubmitted::TRAINING);
  s->set_step_flops(1e15);
  (*s->mutable_labels())["team"] = "soak";
  next().mutable_allocation()->set_chips(8);
  next().mutable_started();
  next().mutable_activity()->set_kind(v1::Activity::TRAINING);
  const int steps = std::uniform_int_distribution<int>(100, 400)(*rng);
  for (int i = 1; i <= steps; ++i) {
    next().mutable_step()->set_step(i);
    if (i % 10 == 0) next().mutable_checkpoint()->set_step(i);
  }
  next().mutable_job_ended()->set_outcome(v1::JobEnded::SUCCEEDED);
}

// Every job's events, `kConcurrent` jobs running at a time, in time order.
std::vector<v1::Event> Fleet(int jobs) {
  std::mt19937 rng(7);
  std::vector<std::vector<v1::Event>> per_job;
  for (int i = 0; i < jobs; ++i) {
    AddJob(i, kStart + (i / kConcurrent) * 45 * core::kNanosPerSecond, &rng,
           &per_job);
  }
  std::vector<v1::Event> all;
  for (auto& job : per_job) {
    for (v1::Event& e : job) all.push_back(std::move(e));
  }
  std::stable_sort(all.begin(), all.end(), [](const auto& a, const auto& b) {
    return a.time().seconds() * core::kNanosPerSecond + a.time().nanos() <
           b.time().seconds() * core::kNanosPerSecond + b.time().nanos();
  });
  return all;
}

struct Result {
  double live_per_job = 0;     // after ingest, before the first scrape
  double metrics_per_job = 0;  // what the scrapes added
  size_t jobs_in_memory = 0;
};

Result Run(const std::vector<v1::Event>& events, int jobs,
           std::optional<int64_t> grace_ns, bool scrape,
           int64_t lateness_ns = 5 * core::kNanosPerSecond) {
  char tmpl[] = "/tmp/goodput-evict-bench-XXXXXX";
  if (mkdtemp(tmpl) == nullptr) std::abort();
  Result r;
  {
    auto store = storage::RocksDbEventStore::Open(tmpl, {});
    if (!store.ok()) std::abort();
    core::Config config;
    FakeClock clock(kStart);
    server::LiveState live(&config, lateness_ns, store->get());
    server::Ingestor ingestor(store->get(), &live, &clock,
                              codec::ValidationLimits());
    ingestor.set_ended_job_grace(grace_ns);
    if (!ingestor.Recover().ok()) std::abort();
    core::MetricsOptions options;
    if (grace_ns) options.ended_job_grace_ns = *grace_ns;
    server::MetricsSource metrics(&config, options, &ingestor, &clock);
    const size_t before = Heap();
    uint64_t seq = 0;
    for (size_t i = 0; i < events.size(); i += kBatch) {
      v1::Batch batch;
      batch.set_agent_id("bench");
      batch.set_sequence(++seq);
      for (size_t j = i; j < std::min(events.size(), i + kBatch); ++j) {
        *batch.add_events() = events[j];
      }
      const auto& last = batch.events(batch.events_size() - 1).time();
      clock.Advance(
          std::max<int64_t>(0, last.seconds() * goodput::core::kNanosPerSecond +
                                   last.nanos() - clock.NowNanos()));
      auto ack = ingestor.IngestTaking(&batch);
      if (!ack.ok()) std::abort();
      if (ack->rejections_size() > 0) {
        std::fprintf(stderr, "%s\n", ack->rejections(0).reason().c_str());
        std::abort();
      }
      if (scrape && seq % kScrapeEvery == 0) (void)metrics.Collect();
    }
    const double ingested = static_cast<double>(Heap());
    (void)metrics.Collect();
    r.live_per_job = (ingested - before) / jobs;
    r.metrics_per_job = (static_cast<double>(Heap()) - ingested) / jobs;
    r.jobs_in_memory = live.job_count();
    if (ingestor.stats().rejected_events != 0) {
      std::fprintf(stderr, "%lld events rejected\n",
                   static_cast<long long>(ingestor.stats().rejected_events));
      std::abort();
    }
  }
  std::filesystem::remove_all(tmpl);
  return r;
}

// The store alone (RocksDB's memtable holds the batches until a flush).
double StorePerJob(const std::vector<v1::Event>& events, int jobs) {
  char tmpl[] = "/tmp/goodput-evict-bench-XXXXXX";
  if (mkdtemp(tmpl) == nullptr) std::abort();
  double per_job = 0;
  {
    auto store = storage::RocksDbEventStore::Open(tmpl, {});
    if (!store.ok()) std::abort();
    const size_t before = Heap();
    uint64_t seq = 0;
    for (size_t i = 0; i < events.size(); i += kBatch) {
      storage::BatchWrite write;
      write.agent_id = "bench";
      write.sequence = ++seq;
      write.accepted.assign(
          events.begin() + i,
          events.begin() + std::min(events.size(), i + kBatch));
      if (!(*store)->Write(write).ok()) std::abort();
    }
    per_job = (static_cast<double>(Heap()) - before) / jobs;
  }
  std::filesystem::remove_all(tmpl);
  return per_job;
}

double TrackersPerJob(const std::vector<v1::Event>& events, int jobs) {
  core::Config config;
  const size_t before = Heap();
  auto fleet = std::make_unique<core::FleetTracker>(&config);
  for (const v1::Event& e : events) (void)fleet->Apply(e);
  return static_cast<double>(Heap() - before) / jobs;
}

}  // namespace
}  // namespace goodput::bench

int main(int argc, char** argv) {
  using namespace goodput::bench;  // NOLINT
  const int jobs = argc > 1 ? std::atoi(argv[1]) : 4000;
  const std::vector<goodput::v1::Event> events = Fleet(jobs);
  std::printf("%d ended jobs, %zu events\n", jobs, events.size());
  std::printf("core::FleetTracker alone: %.0f B/job\n",
              TrackersPerJob(events, jobs));
  std::printf("RocksDB store alone (memtable): %.0f B/job\n",
              StorePerJob(events, jobs));
  for (bool evict : {false, true}) {
    const std::optional<int64_t> grace =
        evict ? std::optional<int64_t>(60 * goodput::core::kNanosPerSecond)
              : std::nullopt;
    for (bool scrape : {false, true}) {
      Result r = Run(events, jobs, grace, scrape);
      std::printf(
          "%-17s %-13s live state + store %6.0f B/job, last scrape %6.0f "
          "B/job, %zu jobs in memory\n",
          evict ? "evict (grace 1m)" : "keep ended jobs",
          scrape ? "scraped" : "scraped once", r.live_per_job,
          r.metrics_per_job, r.jobs_in_memory);
    }
  }
  // An ended job keeps the events of its last `lateness` in its reorder
  // buffer (events every 100 ms here: about 10 per second of lateness).
  Result r = Run(events, jobs, std::nullopt, false, 500'000'000);
  std::printf(
      "keep, lateness 0.5 s (5 s above): live state + store %6.0f "
      "B/job\n",
      r.live_per_job);
  return 0;
}
