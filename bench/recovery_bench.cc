// Restart-recovery time of goodputd for a large store (SPEC section 7). Not
// a test; run by hand (commands and results in BENCHMARKS.md).
//
//   recovery_bench fill DIR [--jobs=10000 --steps=1000 --batch=500
//                            --crash=0 --end_every=0 --hosts=0
//                            --checkpoint_every=100]
//       Fills a fresh goodputd data dir with bench_events Fleet(jobs, steps)
//       (10000 x 1000 = 10.12M events) through the ingest path minus gRPC:
//       an in-process Goodputd (Goodputd::Start on DIR) and
//       Ingestor::Ingest(batch) per batch of 500, i.e. validation,
//       admission, one RocksDB write (WAL on, no fsync), the live state
//       apply and the running jobs' state records per batch, exactly what
//       an acknowledged gRPC batch writes. --crash=1 ends the process
//       without a shutdown (as kill -9 would: no final state records).
//       --since_queries=N then times `report --since=1h` as of the newest
//       event N times from the live windows (issue 12 item 3) and once with
//       --exact_since. --end_every=K ends every K-th job (job-0, job-K, ...)
//       45 min of event time before the fleet's newest event (its later
//       events become one job_ended), so a --since=1h window cuts it after
//       it was evicted (--ended_job_grace, 15 min). --hosts=N adds a
//       heartbeat of each of N hosts every 60 s of event time.
//
//   recovery_bench time DIR [--reps=1]
//                      [--phases=start,open,scan,parse,store,recover]
//       Times the phases in the order given, each on a fresh open of DIR:
//        start    Goodputd::Start until it serves (open RocksDB, load agent
//                 sequences, Ingestor::Recover = scan every batch, parse it,
//                 apply it to LiveState; then gRPC up), and one Query.Report;
//        open     RocksDbEventStore::Open alone;
//        scan     raw RocksDB iteration of the job_events family (values
//                 touched; what a restore without state records would read);
//        parse    the same plus StoredJobEvents::ParseFromArray per value;
//        list     RocksDbEventStore::ListJobs (one seek per job);
//        recover  LiveState::RestoreEvictedTotals + LoadSnapshots (the
//                 held ones) + Recover (Recover's work: each job from its
//                 newest state record plus the events after);
//        capacity a past as-of's capacity alone, as of the first heartbeat
//                 + 5 min and the newest - 1 h: from the spaced fleet state
//                 records (server::FleetHistory) and from every batch (the
//                 reference, main's way), alternated 5 times, with the
//                 batches the first read;
//        queries  on a started Goodputd, 5 times each: Ingestor::Report with
//                 --since = the newest event - 1h (snapped to the grid as
//                 goodputctl does: from the windows restored with the jobs'
//                 state records; then once with --exact_since, a replay),
//                 with --as_of = the newest event - 1h, and
//                 Ingestor::JobReport of one job (in-process, no gRPC or
//                 JSON), with the process RSS before and after; it says
//                 how many jobs of the --since answers came from the
//                 store (ended jobs it cuts, see fill --end_every).
//       The first `start` after `fill` also replays RocksDB's WAL.
//
//   recovery_bench evicted DIR [--ended=20000 --jobs=100 --steps=2000
//                               --batch=500 --window=0
//                               --retention_checks=0]
//       Issue 12 item 4 on a fresh DIR: `ended` short jobs (10 steps and a
//       job_ended each, in the first minute) are ingested and evicted
//       (Ingestor::EvictEndedJobs, grace 15 min), then Fleet(jobs, steps)
//       40 min later: half alone, half while a second thread loops
//       Ingestor::Report as of now (with --window=1 the live `--since=1h`
//       window), back to back. Prints both ingest rates, the reports done
//       and their mean time, and the longest and 99th-percentile time of
//       one ingest batch alone and beside the loop: a report that holds the
//       ingest lock while it reads every evicted job shows up there.
//       --scrape=1 loops GET /metrics instead of the report (goodputd
//       serves metrics on a free port).
//       --retention_checks=1 instead times the batches whose ingest runs
//       the --retention check (800 days: nothing is deleted), every 10th.
//
//   recovery_bench mixed DIR [--jobs=10000 --steps=1000 --new_jobs=200
//                             --new_steps=1000 --batch=500 --queries=100
//                             --query_nice=10 --phases=alone,loop,loop,
//                             alone,loop,alone,alone,loop --loop=1]
//       On a filled store, in an in-process Goodputd (--query_nice as
//       goodputd's flag): ingests a fresh fleet (Ingestor calls) in equal
//       parts, one per phase: `alone`, or `loop` while a second thread
//       asks, once a second or back to back if a round takes longer,
//       report --since=1h, report --as_of=<1 h before the newest event> and
//       job ID over gRPC on loopback (as goodputctl does; before session 13
//       these were Ingestor calls) and scrapes /metrics (HTTP on loopback).
//       The default order balances the two kinds in time, since the rate
//       alone drifts as the store fills; --loop=0 leaves the loop off in
//       the `loop` phases (the control: its ratio is the measurement's
//       own). Prints both ingest rates and their ratio, the rounds asked;
//       then asks the queries `queries` times back to back and prints a
//       round's time (each query's) and the RSS before and after.
//
//   recovery_bench storm DIR [--jobs=1000 --steps=10000 --late=10
//                             --new_jobs=200 --new_steps=1000 --batch=500]
//       On a store filled with `fill --jobs --steps` (same numbers), in an
//       in-process Goodputd: ingests half of a fresh fleet (new_jobs jobs,
//       new ids) alone and times it; then, in two threads, the other half
//       while `late` events per stored job, with times spread over the 10
//       minutes before that job's newest event (an agent cut off for ten
//       minutes draining its spool), go in as late batches. Prints both
//       rates of the fresh fleet and their ratio, the restores' reads, and
//       ends without a shutdown (as kill -9) so that `time DIR
//       --phases=start` measures the restart right after.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <iterator>
#include <limits>
#include <map>
#include <numeric>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "bench/bench_events.h"
#include "bench/bench_util.h"
#include "bench/ingest_client.h"
#include "clients/cpp/query_client.h"
#include "core/event_order.h"
#include "proto/storage.pb.h"
#include "rocksdb/db.h"
#include "server/fleet_history.h"
#include "server/goodputd.h"
#include "server/live_state.h"
#include "storage/rocksdb_event_store.h"
#include "util/proto_time.h"
#include "util/testing/http_client.h"

namespace goodput::bench {
namespace {

void Die(const absl::Status& s) {
  std::fprintf(stderr, "error: %s\n", std::string(s.message()).c_str());
  std::exit(1);
}

uint64_t DirBytes(const std::string& dir) {
  uint64_t total = 0;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir)) {
    if (e.is_regular_file()) total += e.file_size();
  }
  return total;
}

// A FakeClock time after every event of the default fill; the store holds
// the data, so only validation's "not in the future" check depends on it.
int64_t NowFor(const std::vector<v1::Event>& events) {
  return MaxEventTimeNanos(events) + core::kNanosPerSecond;
}

// An in-process goodputd on `dir` (gRPC on a free loopback port); dies on
// an error.
std::unique_ptr<server::Goodputd> StartOn(const std::string& dir, Clock* clock,
                                          bool metrics = false,
                                          int query_nice = 10) {
  server::GoodputdOptions options;
  options.query_nice = query_nice;
  options.data_dir = dir;
  options.grpc_address = "127.0.0.1:0";
  if (metrics) options.metrics_address = "127.0.0.1:0";
  auto d = server::Goodputd::Start(options, clock);
  if (!d.ok()) Die(d.status());
  return *std::move(d);
}

// Issue 12 item 3, in the process that ingested the store: `report
// --since=1h` as of the newest event
// `n` times from the live windows, then once with --exact_since (a replay).
void SinceQueries(server::Ingestor* ingestor, int n) {
  int64_t newest = 0;
  ingestor->VisitLive([&](const server::LiveState& live) {
    newest = live.applied_through_ns();
  });
  const int64_t since = newest - 3600 * core::kNanosPerSecond;
  std::vector<double> ms;
  size_t jobs = 0;
  for (int i = 0; i < n; ++i) {
    auto t0 = SteadyClock::now();
    auto r = ingestor->Report(newest, since, nullptr,
                              core::FleetSegments::kCapacityOnly,
                              /*exact_since=*/false);
    ms.push_back(SecondsSince(t0) * 1e3);
    if (!r.ok()) Die(r.status());
    jobs = r->jobs.size();
  }
  std::sort(ms.begin(), ms.end());
  auto t0 = SteadyClock::now();
  auto exact = ingestor->Report(newest, since, nullptr,
                                core::FleetSegments::kCapacityOnly,
                                /*exact_since=*/true);
  const double exact_ms = SecondsSince(t0) * 1e3;
  if (!exact.ok()) Die(exact.status());
  const server::Ingestor::WindowStats w = ingestor->window_stats();
  std::printf(
      "since    report --since=1h (%zu jobs) from the live windows "
      "%.1f/%.1f/%.1f ms (min/median/max of %d; %lld live, %lld replayed, "
      "%lld jobs from the store); --exact_since (replay) %.1f ms\n",
      jobs, ms.front(), ms[ms.size() / 2], ms.back(), n,
      static_cast<long long>(w.live), static_cast<long long>(w.replayed),
      static_cast<long long>(w.store_jobs), exact_ms);
  std::fflush(stdout);
}

// Whether `job_id` is "job-N" with N a multiple of `every`.
bool EveryKth(const std::string& job_id, int every) {
  int n = 0;
  return absl::SimpleAtoi(absl::StripPrefix(job_id, "job-"), &n) &&
         n % every == 0;
}

// Fill's --end_every: the chosen jobs' events from 45 min before the
// newest one on become a single job_ended (SUCCEEDED) at the first of them.
std::vector<v1::Event> EndEvery(std::vector<v1::Event> events, int every) {
  if (every <= 0 || events.empty()) return events;
  const int64_t end_ns =
      core::EventTimeNanos(events.back()) - 2700 * core::kNanosPerSecond;
  std::vector<v1::Event> out;
  out.reserve(events.size());
  std::set<std::string> ended;
  for (v1::Event& e : events) {
    if (core::EventTimeNanos(e) < end_ns || !EveryKth(e.job_id(), every)) {
      out.push_back(std::move(e));
    } else if (ended.insert(e.job_id()).second) {
      v1::Event end;
      end.set_job_id(e.job_id());
      *end.mutable_time() = e.time();
      end.mutable_job_ended()->set_outcome(v1::JobEnded::SUCCEEDED);
      out.push_back(std::move(end));
    }
  }
  return out;
}

// Fill's --hosts=N: a heartbeat (8 chips) of each of N hosts every 60 s
// of event time over the fleet's span, merged in time order.
std::vector<v1::Event> WithHeartbeats(std::vector<v1::Event> events,
                                      int hosts) {
  if (hosts <= 0 || events.empty()) return events;
  const int64_t first = core::EventTimeNanos(events.front());
  const int64_t last = core::EventTimeNanos(events.back());
  std::vector<v1::Event> beats;
  for (int64_t t = first; t <= last; t += 60 * core::kNanosPerSecond) {
    for (int h = 0; h < hosts; ++h) {
      v1::Event& e = beats.emplace_back();
      e.mutable_time()->set_seconds(t / core::kNanosPerSecond);
      e.mutable_time()->set_nanos(
          static_cast<int32_t>(t % core::kNanosPerSecond));
      e.set_host(absl::StrCat("host-", h));
      e.mutable_heartbeat()->set_chips(8);
      e.mutable_heartbeat()->set_accelerator("tpu-v5p");
    }
  }
  std::vector<v1::Event> out;
  out.reserve(events.size() + beats.size());
  std::merge(std::make_move_iterator(events.begin()),
             std::make_move_iterator(events.end()),
             std::make_move_iterator(beats.begin()),
             std::make_move_iterator(beats.end()), std::back_inserter(out),
             [](const v1::Event& a, const v1::Event& b) {
               return core::EventTimeNanos(a) < core::EventTimeNanos(b);
             });
  return out;
}

int Fill(const std::string& dir, const Args& args) {
  if (std::filesystem::exists(dir) && !std::filesystem::is_empty(dir)) {
    std::fprintf(stderr, "fill: %s is not empty\n", dir.c_str());
    return 2;
  }
  const int jobs = static_cast<int>(args.Int("jobs", 10000));
  const int64_t steps = args.Int("steps", 1000);
  const size_t batch = static_cast<size_t>(args.Int("batch", 500));
  auto t0 = SteadyClock::now();
  const std::vector<v1::Event> events = WithHeartbeats(
      EndEvery(Fleet(jobs, steps, args.Int("checkpoint_every", 100)),
               static_cast<int>(args.Int("end_every", 0))),
      static_cast<int>(args.Int("hosts", 0)));
  std::printf("generated Fleet(%d, %lld) = %zu events in %.1fs\n", jobs,
              static_cast<long long>(steps), events.size(), SecondsSince(t0));
  FakeClock clock(NowFor(events));
  auto d = StartOn(dir, &clock);
  t0 = SteadyClock::now();
  uint64_t sequence = 0;
  int64_t accepted = 0;
  for (size_t i = 0; i < events.size(); i += batch) {
    v1::Batch b;
    b.set_agent_id("bench-fill");
    b.set_sequence(++sequence);
    const size_t end = std::min(events.size(), i + batch);
    for (size_t j = i; j < end; ++j) *b.add_events() = events[j];
    auto ack = d->ingestor()->Ingest(b);
    if (!ack.ok()) Die(ack.status());
    accepted += ack->accepted();
  }
  const double took = SecondsSince(t0);
  if (const int n = static_cast<int>(args.Int("since_queries", 0)); n > 0) {
    SinceQueries(d->ingestor(), n);
  }
  if (args.Int("crash", 0) != 0) {
    std::printf("filled %s: %lld events; ending without a shutdown\n",
                dir.c_str(), static_cast<long long>(accepted));
    std::fflush(stdout);
    std::_Exit(0);  // RocksDB's WAL has every acknowledged batch
  }
  d->Shutdown();
  d.reset();
  std::printf(
      "filled %s: %lld events accepted of %zu in %llu batches, "
      "%.1fs (%.0f events/s through Ingestor::Ingest); dir %.1f MiB\n",
      dir.c_str(), static_cast<long long>(accepted), events.size(),
      static_cast<unsigned long long>(sequence), took, accepted / took,
      DirBytes(dir) / 1048576.0);
  return accepted == static_cast<int64_t>(events.size()) ? 0 : 1;
}

void TimeStart(const std::string& dir, int64_t now_ns, const char* label) {
  FakeClock clock(now_ns);
  const int64_t rss0 = RssKiB();
  Timer timer;
  auto d = StartOn(dir, &clock);
  const std::string start_s = timer.str();
  auto stub =
      v1::Query::NewStub(NewChannel(absl::StrCat("127.0.0.1:", d->port())));
  v1::ShardReport response;
  auto report_s = TimeReport(stub.get(), &response);
  if (!report_s.ok()) Die(report_s.status());
  const auto live = d->ingestor()->live_stats();
  std::printf(
      "%-8s Goodputd::Start %s until serving; then first Report %.3fs "
      "(%.1f KiB streamed); applied=%lld restored_events=%lld "
      "from_state=%lld/%lld late_rebuilds=%lld fleet_batches_scanned=%lld "
      "(fleet state %s); RSS +%.0f MiB\n",
      label, start_s.c_str(), *report_s, response.ByteSizeLong() / 1024.0,
      static_cast<long long>(live.applied),
      static_cast<long long>(live.restored_events),
      static_cast<long long>(live.restores_from_state),
      static_cast<long long>(live.restores),
      static_cast<long long>(live.late_rebuilds),
      static_cast<long long>(live.fleet_batches_scanned),
      live.fleet_state_restored ? "restored" : "none",
      (RssKiB() - rss0) / 1024.0);
  std::fflush(stdout);
}

std::unique_ptr<storage::RocksDbEventStore> OpenStore(const std::string& dir) {
  auto store = storage::RocksDbEventStore::Open(dir, {});
  if (!store.ok()) Die(store.status());
  return *std::move(store);
}

// Raw iteration of the "job_events" column family; parses each value into a
// StoredJobEvents if `parse`. Returns the events seen (0 without parse).
int64_t RawScan(const std::string& dir, bool parse, uint64_t* batches,
                uint64_t* bytes) {
  std::vector<rocksdb::ColumnFamilyDescriptor> families;
  for (const char* name : {"default", "batches", "job_events", "agents",
                           "dead_letters", "snapshots", "job_states"}) {
    families.emplace_back(name, rocksdb::ColumnFamilyOptions());
  }
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  rocksdb::DB* raw = nullptr;
  rocksdb::Status s = rocksdb::DB::OpenForReadOnly(rocksdb::DBOptions(), dir,
                                                   families, &handles, &raw);
  if (!s.ok()) Die(absl::UnavailableError(s.ToString()));
  std::unique_ptr<rocksdb::DB> db(raw);
  int64_t events = 0;
  *batches = *bytes = 0;
  {
    internal::v1::StoredJobEvents stored;
    std::unique_ptr<rocksdb::Iterator> it(
        db->NewIterator(rocksdb::ReadOptions(), handles[2]));
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      ++*batches;
      *bytes += it->value().size();
      if (parse) {
        if (!stored.ParseFromArray(it->value().data(),
                                   static_cast<int>(it->value().size()))) {
          Die(absl::DataLossError("job events do not parse"));
        }
        events += stored.events_size();
      }
    }
  }
  for (auto* h : handles) (void)db->DestroyColumnFamilyHandle(h);
  return events;
}

void PhaseOpen(const std::string& dir) {
  Timer t0;
  { auto store = OpenStore(dir); }
  std::printf("open     RocksDbEventStore::Open (and close) %s\n",
              t0.str().c_str());
}

void PhaseScan(const std::string& dir, bool parse) {
  uint64_t batches = 0, bytes = 0;
  Timer t0;
  const int64_t events = RawScan(dir, parse, &batches, &bytes);
  if (!parse) {
    std::printf(
        "scan     RocksDB iterate %llu job_events values, %.1f MiB: "
        "%s (incl. read-only open)\n",
        static_cast<unsigned long long>(batches), bytes / 1048576.0,
        t0.str().c_str());
  } else {
    std::printf(
        "parse    iterate + StoredJobEvents::ParseFromArray: %lld events "
        "%s\n",
        static_cast<long long>(events), t0.str().c_str());
  }
}

void PhaseList(const std::string& dir) {
  Timer t0;
  auto store = OpenStore(dir);
  int64_t jobs = 0;
  absl::Status s = store->ListJobs([&](const std::string&) {
    ++jobs;
    return absl::OkStatus();
  });
  if (!s.ok()) Die(s);
  std::printf("list     open + ListJobs: %lld jobs %s\n",
              static_cast<long long>(jobs), t0.str().c_str());
}

void PhaseRecover(const std::string& dir) {
  core::Config config;
  Timer t0;
  auto store = OpenStore(dir);
  server::LiveState live(&config, 5 * core::kNanosPerSecond, store.get());
  // As Ingestor::Recover: the evicted jobs as their totals, then the held
  // snapshots (layout 6).
  absl::Status s = live.RestoreEvictedTotals();
  if (!s.ok()) Die(s);
  std::vector<storage::JobSnapshot> snapshots;
  if (s = store->ReadHeldSnapshots(&snapshots); !s.ok()) Die(s);
  live.LoadSnapshots(std::move(snapshots));
  if (s = live.Recover(store->LastBatchId()); !s.ok()) Die(s);
  std::printf(
      "recover  open + LiveState::LoadSnapshots + Recover: %lld applied, "
      "%lld events read, %lld/%lld jobs from a state, %zu jobs %s\n",
      static_cast<long long>(live.stats().applied),
      static_cast<long long>(live.stats().restored_events),
      static_cast<long long>(live.stats().restores_from_state),
      static_cast<long long>(live.stats().restores), live.job_count(),
      t0.str().c_str());
}

// Per job of Fleet(jobs, steps), its newest event time.
std::map<std::string, int64_t> NewestPerJob(int jobs, int64_t steps) {
  std::map<std::string, int64_t> newest;
  for (const v1::Event& e : Fleet(jobs, steps)) {
    int64_t& t = newest[e.job_id()];
    t = std::max(t, core::EventTimeNanos(e));
  }
  return newest;
}

// `late` checkpoint events per job, spread over the 10 minutes before its
// newest event, in time order across jobs.
std::vector<v1::Event> LateEvents(const std::map<std::string, int64_t>& newest,
                                  int late) {
  std::vector<v1::Event> out;
  for (const auto& [job_id, t] : newest) {
    for (int k = 0; k < late; ++k) {
      v1::Event& e = out.emplace_back();
      e.set_job_id(job_id);
      const int64_t at =
          t - (600 - 590 * k / std::max(1, late)) * core::kNanosPerSecond;
      e.mutable_time()->set_seconds(at / core::kNanosPerSecond);
      e.mutable_time()->set_nanos(
          static_cast<int32_t>(at % core::kNanosPerSecond));
      e.mutable_checkpoint()->set_step(k + 1);
    }
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const v1::Event& a, const v1::Event& b) {
                     return core::EventTimeNanos(a) < core::EventTimeNanos(b);
                   });
  return out;
}

std::vector<v1::Batch> Batches(const std::vector<v1::Event>& events,
                               size_t size, const std::string& agent) {
  std::vector<v1::Batch> out;
  for (size_t i = 0; i < events.size(); i += size) {
    v1::Batch& b = out.emplace_back();
    b.set_agent_id(agent);
    b.set_sequence(out.size());
    for (size_t j = i; j < std::min(events.size(), i + size); ++j) {
      *b.add_events() = events[j];
    }
  }
  return out;
}

// Ingests `batches[from, to)`; returns the events accepted.
int64_t IngestAll(server::Ingestor* ingestor,
                  const std::vector<v1::Batch>& batches, size_t from,
                  size_t to) {
  int64_t accepted = 0;
  for (size_t i = from; i < to; ++i) {
    auto ack = ingestor->Ingest(batches[i]);
    if (!ack.ok()) Die(ack.status());
    accepted += ack->accepted();
  }
  return accepted;
}

// Ingests `batches[from, to)`; returns the events accepted per second.
double IngestRate(server::Ingestor* ingestor,
                  const std::vector<v1::Batch>& batches, size_t from,
                  size_t to) {
  Timer t0;
  const int64_t accepted = IngestAll(ingestor, batches, from, to);
  return accepted / t0.wall();
}

// A clock long after any bench fleet (validation's "future" check only).
const int64_t kLongAfter =
    NowFor(Fleet(1, 1)) + 400LL * 24 * 3600 * core::kNanosPerSecond;

// The `mixed` and `storm` fresh fleet: Fleet(new_jobs, new_steps) under new
// job ids, in batches of `batch`.
std::vector<v1::Batch> FreshBatches(const Args& args, size_t batch) {
  std::vector<v1::Event> fresh = Fleet(
      static_cast<int>(args.Int("new_jobs", 200)), args.Int("new_steps", 1000));
  for (v1::Event& e : fresh) e.set_job_id("new-" + e.job_id());
  return Batches(fresh, batch, "bench-normal");
}

// The newest event time the live state applied.
int64_t NewestApplied(server::Ingestor* ingestor) {
  int64_t newest = 0;
  ingestor->VisitLive([&](const server::LiveState& live) {
    newest = live.applied_through_ns();
  });
  return newest;
}

// One GET /metrics; dies unless it is 200.
void ScrapeOnce(int metrics_port) {
  auto r = testing::HttpGet(metrics_port, "/metrics");
  if (!r.ok()) Die(r.status());
  if (r->status != 200) Die(absl::InternalError("/metrics failed"));
}

// The time `mixed`'s queries took, in seconds, summed over rounds.
struct QuerySeconds {
  double since = 0, as_of = 0, job = 0, scrape = 0;
};

// The three queries of `mixed` over gRPC (a goodputctl's: report
// --since=1h, report --as_of=<1 h back>, job ID; goodputd runs them on its
// query pool) and a /metrics scrape (port `metrics_port`), once, adding
// their times to `took` if not null; dies on an error.
void AskQueries(v1::Query::Stub* query, int64_t newest, int metrics_port,
                QuerySeconds* took = nullptr) {
  QuerySeconds ignored;
  if (took == nullptr) took = &ignored;
  const int64_t hour = 3600 * core::kNanosPerSecond;
  for (auto [as_of, since] :
       {std::pair(newest, std::optional<int64_t>(newest - hour)),
        std::pair(newest - hour, std::optional<int64_t>())}) {
    Timer t;
    v1::ReportRequest request;  // --since snapped to the window grid
    *request.mutable_as_of() = NanosToTimestamp(as_of);
    if (since) *request.mutable_since() = NanosToTimestamp(*since);
    grpc::ClientContext context;
    auto r = ReadReport(query, &context, request);
    if (!r.ok()) Die(r.status());
    (since ? took->since : took->as_of) += t.wall();
  }
  Timer t_job;
  v1::JobRequest request;
  request.set_job_id("job-0");
  *request.mutable_as_of() = NanosToTimestamp(newest);
  grpc::ClientContext context;
  v1::JobResponse response;
  grpc::Status job = query->Job(&context, request, &response);
  if (!job.ok()) Die(absl::InternalError(job.error_message()));
  took->job += t_job.wall();
  Timer t_scrape;
  ScrapeOnce(metrics_port);
  took->scrape += t_scrape.wall();
}

// The query loop of `mixed`: AskQueries once a second on its own thread,
// from construction until destruction.
class QueryLoop {
 public:
  QueryLoop(v1::Query::Stub* query, int64_t newest, int metrics_port)
      : thread_([this, query, newest, metrics_port] {
          while (!done_) {
            const auto next = SteadyClock::now() + std::chrono::seconds(1);
            AskQueries(query, newest, metrics_port);
            ++asked_;
            std::this_thread::sleep_until(next);  // pacing, not a sync
          }
        }) {}
  ~QueryLoop() { Stop(); }
  // Waits for the round under way; returns the rounds asked.
  int Stop() {
    done_ = true;
    if (thread_.joinable()) thread_.join();
    return asked_;
  }

 private:
  std::atomic<bool> done_{false};
  std::atomic<int> asked_{0};
  std::thread thread_;  // last: it reads the members above
};

// What `mixed` measured of one kind of phase (alone, or beside the loop).
struct MixedPhases {
  int64_t events = 0;
  double wall = 0;
  double cpu = 0;  // the ingest thread's
  size_t batches = 0;
  int asked = 0;
  double Rate() const { return events / wall; }
  double CpuPerBatchUs() const { return 1e6 * cpu / batches; }
};

// Ingests `batches[from, to)` into `into`, beside the query loop if `loop`.
void MixedPhase(server::Ingestor* ingestor,
                const std::vector<v1::Batch>& batches, size_t from, size_t to,
                std::unique_ptr<QueryLoop> loop, MixedPhases* into) {
  const double cpu0 = ThreadCpuSeconds();
  Timer t0;
  into->events += IngestAll(ingestor, batches, from, to);
  into->wall += t0.wall();
  into->cpu += ThreadCpuSeconds() - cpu0;
  into->batches += to - from;
  if (loop) into->asked += loop->Stop();
}

// `mixed`'s default order: the loop's phases and ingest's alone balanced in
// time (ABBA BAAB), so a rate that drifts as the store fills (it does: the
// second half alone is 10-17% slower than the first) cancels out.
constexpr char kMixedPhases[] = "alone,loop,loop,alone,loop,alone,alone,loop";

int Mixed(const std::string& dir, const Args& args) {
  const size_t batch = static_cast<size_t>(args.Int("batch", 500));
  const std::vector<v1::Batch> normal = FreshBatches(args, batch);
  const std::vector<std::string> phases =
      absl::StrSplit(args.Str("phases", kMixedPhases), ',');
  const bool run_loop = args.Int("loop", 1) != 0;
  FakeClock clock(kLongAfter);
  auto d = StartOn(dir, &clock, /*metrics=*/true,
                   static_cast<int>(args.Int("query_nice", 10)));
  server::Ingestor* ingestor = d->ingestor();
  const int port = d->metrics_port();
  auto query = v1::Query::NewStub(
      grpc::CreateChannel(absl::StrCat("127.0.0.1:", d->port()),
                          grpc::InsecureChannelCredentials()));
  const int64_t newest = NewestApplied(ingestor);
  MixedPhases alone, beside;
  for (size_t i = 0; i < phases.size(); ++i) {
    const bool loop = phases[i] == "loop";
    if (!loop && phases[i] != "alone") {
      Die(absl::InvalidArgumentError(
          absl::StrCat("--phases: \"", phases[i], "\" is not alone or loop")));
    }
    MixedPhase(ingestor, normal, normal.size() * i / phases.size(),
               normal.size() * (i + 1) / phases.size(),
               loop && run_loop
                   ? std::make_unique<QueryLoop>(query.get(), newest, port)
                   : nullptr,
               loop ? &beside : &alone);
  }
  const int64_t rss0 = RssKiB();
  const int n = static_cast<int>(args.Int("queries", 100));
  Timer t_rounds;
  QuerySeconds took;
  for (int i = 0; i < n; ++i) AskQueries(query.get(), newest, port, &took);
  std::printf(
      "mixed    fresh fleet alone %.0f events/s; with the query loop%s %.0f "
      "events/s (ratio %.2f; %d rounds of the queries in %.1f s; phases %s); "
      "a round without ingest %.0f ms (since %.0f, as_of %.0f, job %.0f, "
      "scrape %.0f); RSS %.0f MiB "
      "before %d more rounds, %.0f MiB after (%+.1f%%); the ingest thread's "
      "CPU per batch %.0f us alone, %.0f us beside the loop\n",
      alone.Rate(), run_loop ? "" : " (off: --loop=0)", beside.Rate(),
      beside.Rate() / alone.Rate(), beside.asked, beside.wall,
      args.Str("phases", kMixedPhases).c_str(), 1e3 * t_rounds.wall() / n,
      1e3 * took.since / n, 1e3 * took.as_of / n, 1e3 * took.job / n,
      1e3 * took.scrape / n, rss0 / 1024.0, n, RssKiB() / 1024.0,
      100.0 * (RssKiB() - rss0) / rss0, alone.CpuPerBatchUs(),
      beside.CpuPerBatchUs());
  std::fflush(stdout);
  std::_Exit(0);  // leaves the store as it is (no final state records)
}

// `evicted`'s ended jobs: Fleet(n, 10) as "ended-N", each with a
// job_ended 1 s after its last step.
std::vector<v1::Event> EndedJobs(int n) {
  std::vector<v1::Event> out = Fleet(n, 10);
  std::map<std::string, int64_t> last;
  for (v1::Event& e : out) {
    e.set_job_id("ended-" + e.job_id());
    last[e.job_id()] = core::EventTimeNanos(e);
  }
  for (const auto& [id, t] : last) {
    v1::Event& end = out.emplace_back();
    end.set_job_id(id);
    *end.mutable_time() = NanosToTimestamp(t + core::kNanosPerSecond);
    end.mutable_job_ended()->set_outcome(v1::JobEnded::SUCCEEDED);
  }
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    return core::EventTimeNanos(a) < core::EventTimeNanos(b);
  });
  return out;
}

// Ingests `batches[from, to)`, each batch's wall time into `*ms`.
void IngestTimed(server::Ingestor* ingestor,
                 const std::vector<v1::Batch>& batches, size_t from, size_t to,
                 std::vector<double>* ms) {
  for (size_t i = from; i < to; ++i) {
    Timer t;
    auto ack = ingestor->Ingest(batches[i]);
    if (!ack.ok()) Die(ack.status());
    ms->push_back(t.wall() * 1e3);
  }
}

std::string BatchTimes(const std::vector<double>& ms) {
  return absl::StrFormat("max %.1f ms, p99 %.2f ms",
                         *std::max_element(ms.begin(), ms.end()),
                         Percentile(ms, 0.99));
}

// `evicted --retention_checks=1`: with a --retention that deletes nothing
// (800 days), ingests `batches[1, to)` moving the clock 61 s before every
// 10th one, so that its ingest runs the retention check; prints the time
// of those batches and of the others.
void RetentionChecks(server::Ingestor* ingestor, FakeClock* clock,
                     const std::vector<v1::Batch>& batches, size_t to) {
  ingestor->set_retention(800LL * 24 * 3600 * core::kNanosPerSecond);
  std::vector<double> checked, other;
  for (size_t i = 1; i < to; ++i) {
    if (i % 10 == 0) clock->Advance(61 * core::kNanosPerSecond);
    IngestTimed(ingestor, batches, i, i + 1, i % 10 == 0 ? &checked : &other);
  }
  std::printf(
      "evicted  %lld jobs evicted; %zu batches with a retention check: %s "
      "(mean %.1f ms); %zu without: %s\n",
      static_cast<long long>(ingestor->stats().evicted_jobs), checked.size(),
      BatchTimes(checked).c_str(),
      std::accumulate(checked.begin(), checked.end(), 0.0) / checked.size(),
      other.size(), BatchTimes(other).c_str());
  std::fflush(stdout);
}

int Evicted(const std::string& dir, const Args& args) {
  const size_t batch = static_cast<size_t>(args.Int("batch", 500));
  std::vector<v1::Batch> ended = Batches(
      EndedJobs(static_cast<int>(args.Int("ended", 20000))), batch, "ended");
  std::vector<v1::Event> fleet =
      Fleet(static_cast<int>(args.Int("jobs", 100)), args.Int("steps", 2000));
  for (v1::Event& e : fleet) {
    e.set_job_id("run-" + e.job_id());
    e.mutable_time()->set_seconds(e.time().seconds() + 2400);
  }
  const std::vector<v1::Batch> normal = Batches(fleet, batch, "run");
  FakeClock clock(kLongAfter);
  const bool scrape = args.Int("scrape", 0) != 0;
  auto d = StartOn(dir, &clock, /*metrics=*/scrape);
  server::Ingestor* ingestor = d->ingestor();
  for (const v1::Batch& b : ended) {
    if (auto ack = ingestor->Ingest(b); !ack.ok()) Die(ack.status());
  }
  std::vector<double> ms;
  IngestTimed(ingestor, normal, 0, 1, &ms);
  if (absl::Status s = ingestor->EvictEndedJobs(); !s.ok()) Die(s);
  const int64_t as_of =
      core::EventTimeNanos(fleet.back()) + 3600LL * 1000000000;
  const std::optional<int64_t> since =
      args.Int("window", 0) != 0
          ? std::optional<int64_t>(as_of - 3600LL * 1000000000)
          : std::nullopt;
  const size_t half = normal.size() / 2;
  ms.clear();
  if (args.Int("retention_checks", 0) != 0) {
    RetentionChecks(ingestor, &clock, normal, half);
    std::_Exit(0);
  }
  Timer t_alone;
  IngestTimed(ingestor, normal, 1, half, &ms);
  const double alone = (half - 1) * batch / t_alone.wall();
  const std::string alone_ms = BatchTimes(ms);
  std::atomic<bool> done{false};
  int reports = 0;
  double report_s = 0;
  std::thread loop([&] {
    while (!done) {
      Timer t;
      if (scrape) {
        ScrapeOnce(d->metrics_port());
      } else {
        auto r = ingestor->Report(as_of, since, nullptr,
                                  core::FleetSegments::kAll, false);
        if (!r.ok()) Die(r.status());
      }
      report_s += t.wall();
      ++reports;
    }
  });
  ms.clear();
  Timer t_mixed;
  IngestTimed(ingestor, normal, half, normal.size(), &ms);
  const double mixed = (normal.size() - half) * batch / t_mixed.wall();
  done = true;
  loop.join();
  std::printf(
      "evicted  %lld jobs evicted; fresh fleet alone %.0f events/s (one batch "
      "%s); beside the loop %.0f events/s (ratio %.2f; one batch %s); "
      "%d %s%s, %.1f ms each\n",
      static_cast<long long>(ingestor->stats().evicted_jobs), alone,
      alone_ms.c_str(), mixed, mixed / alone, BatchTimes(ms).c_str(), reports,
      scrape ? "/metrics scrapes" : "reports", since ? " (--since=1h)" : "",
      1e3 * report_s / std::max(1, reports));
  std::fflush(stdout);
  std::_Exit(0);
}

int Storm(const std::string& dir, const Args& args) {
  const int jobs = static_cast<int>(args.Int("jobs", 1000));
  const int64_t steps = args.Int("steps", 10000);
  const size_t batch = static_cast<size_t>(args.Int("batch", 500));
  const std::vector<v1::Batch> normal = FreshBatches(args, batch);
  const std::vector<v1::Batch> late =
      Batches(LateEvents(NewestPerJob(jobs, steps),
                         static_cast<int>(args.Int("late", 10))),
              batch, "bench-late");
  FakeClock clock(kLongAfter);
  Timer t_start;
  auto d = StartOn(dir, &clock);
  std::printf("start    %s; %zu fresh batches, %zu late batches (%d jobs)\n",
              t_start.str().c_str(), normal.size(), late.size(), jobs);
  server::Ingestor* ingestor = d->ingestor();
  const size_t half = normal.size() / 2;
  const double alone = IngestRate(ingestor, normal, 0, half);
  const auto before = ingestor->live_stats();
  double late_rate = 0;
  std::thread storm(
      [&] { late_rate = IngestRate(ingestor, late, 0, late.size()); });
  const double with_storm = IngestRate(ingestor, normal, half, normal.size());
  storm.join();
  const auto after = ingestor->live_stats();
  std::printf(
      "storm    fresh fleet alone %.0f events/s; during the late storm %.0f "
      "events/s (ratio %.2f); late events %.0f events/s; %lld rebuilds read "
      "%lld stored events (%lld from a state record)\n",
      alone, with_storm, with_storm / alone, late_rate,
      static_cast<long long>(after.late_rebuilds - before.late_rebuilds),
      static_cast<long long>(after.restored_events - before.restored_events),
      static_cast<long long>(after.restores_from_state -
                             before.restores_from_state));
  std::fflush(stdout);
  std::_Exit(0);  // as kill -9: `time DIR --phases=start` measures the restart
}

// Times `fn` `reps` times; "min/median/max" in ms.
std::string TimeMs(int reps, const std::function<void()>& fn) {
  std::vector<double> ms;
  for (int i = 0; i < reps; ++i) {
    Timer t;
    fn();
    ms.push_back(t.wall() * 1e3);
  }
  std::sort(ms.begin(), ms.end());
  return absl::StrFormat("%.1f/%.1f/%.1f ms", ms.front(), ms[ms.size() / 2],
                         ms.back());
}

// Times `fn` against `reference`, alternated `reps` times each, and says
// whether the two answers were equal every time.
std::string Alternated(
    int reps, const std::function<std::map<std::string, double>()>& fn,
    const std::function<std::map<std::string, double>()>& reference) {
  std::vector<double> a, b;
  bool equal = true;
  for (int i = 0; i < reps; ++i) {
    Timer t;
    const std::map<std::string, double> x = fn();
    a.push_back(t.wall() * 1e3);
    Timer u;
    equal = equal && x == reference();
    b.push_back(u.wall() * 1e3);
  }
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  return absl::StrFormat("%.1f/%.1f/%.1f ms vs every batch %.1f/%.1f/%.1f ms%s",
                         a.front(), a[a.size() / 2], a.back(), b.front(),
                         b[b.size() / 2], b.back(), equal ? "" : " DIFFERENT");
}

// A past as-of's capacity alone, as of the first heartbeat + 5 min and the
// newest - 1 h: server::FleetHistory (the spaced fleet state records) vs
// the scan of every batch (main's StoreReplay::Capacity), alternated.
void PhaseCapacity(const std::string& dir) {
  auto store = OpenStore(dir);
  const uint64_t last = store->LastBatchId();
  int64_t first = std::numeric_limits<int64_t>::max(), newest = 0;
  auto times = [&](uint64_t, std::vector<v1::Event>* events) {
    for (const v1::Event& e : *events) {
      first = std::min(first, core::EventTimeNanos(e));
      newest = std::max(newest, core::EventTimeNanos(e));
    }
    return absl::OkStatus();
  };
  if (!store->ScanFleetUntil(0, last, 0, times).ok() ||
      !store->ScanHeartbeatsAfter(last > 2000 ? last - 2000 : 0, times).ok()) {
    Die(absl::InternalError("capacity: scan failed"));
  }
  const core::Config config;
  for (const int64_t as_of : {first + 300 * core::kNanosPerSecond,
                              newest - 3600 * core::kNanosPerSecond}) {
    int64_t batches = 0;
    const std::string t = Alternated(
        5,
        [&] {
          server::FleetHistory history(store.get(), &config);
          auto c = history.Load(last).ok() ? history.Capacity(as_of)
                                           : absl::InternalError("load");
          if (!c.ok()) Die(c.status());
          batches = history.stats().batches_read;
          return *c;
        },
        [&] {
          auto c = server::FleetHistory::FullScanCapacity(store.get(), config,
                                                          last, as_of);
          if (!c.ok()) Die(c.status());
          return *c;
        });
    std::printf(
        "capacity as of %s: %s (min/median/max of 5; %lld batches "
        "read)\n",
        core::FormatTimeNanos(as_of).c_str(), t.c_str(),
        static_cast<long long>(batches));
  }
}

void PhaseQueries(const std::string& dir, int64_t now_ns) {
  FakeClock clock(now_ns);
  auto d = StartOn(dir, &clock, /*metrics=*/true);
  server::Ingestor* ingestor = d->ingestor();
  const int64_t newest = NewestApplied(ingestor);
  const int64_t hour = 3600 * core::kNanosPerSecond;
  const int64_t rss0 = RssKiB();
  size_t jobs = 0;
  auto check = [&](absl::StatusOr<core::FleetReport> r) {
    if (!r.ok()) Die(r.status());
    jobs = r->jobs.size();
  };
  // As goodputctl report --since: snapped to the grid, from the jobs'
  // windows (restored with their state records); then --exact_since.
  const std::string since = TimeMs(5, [&] {
    check(ingestor->Report(newest, newest - hour, nullptr,
                           core::FleetSegments::kCapacityOnly,
                           /*exact_since=*/false));
  });
  const size_t since_jobs = jobs;
  const server::Ingestor::WindowStats w = ingestor->window_stats();
  const std::string exact =
      TimeMs(1, [&] { check(ingestor->Report(newest, newest - hour)); });
  const std::string as_of =
      TimeMs(5, [&] { check(ingestor->Report(newest - hour, std::nullopt)); });
  const std::string one = TimeMs(5, [&] {
    auto r = ingestor->JobReport("job-0", newest, std::nullopt);
    if (!r.ok()) Die(r.status());
  });
  std::printf(
      "queries  report --since=1h (%zu jobs) %s (%lld live, %lld replayed, "
      "%lld jobs from the store); "
      "--exact_since %s; report --as_of=-1h (%zu jobs) %s; job ID %s "
      "(min/median/max of 5); RSS %+.0f MiB\n",
      since_jobs, since.c_str(), static_cast<long long>(w.live),
      static_cast<long long>(w.replayed), static_cast<long long>(w.store_jobs),
      exact.c_str(), jobs, as_of.c_str(), one.c_str(),
      (RssKiB() - rss0) / 1024.0);
}

int Time(const std::string& dir, const Args& args) {
  const int reps = static_cast<int>(args.Int("reps", 1));
  // The clock only matters for Report's default as-of: two hours after the
  // fleet's start, after every event of a fill of up to ~7000 steps.
  const int64_t now_ns = NowFor(Fleet(1, 1)) + 7200 * core::kNanosPerSecond;
  std::printf("store %s: %.1f MiB\n", dir.c_str(), DirBytes(dir) / 1048576.0);
  const std::string phases = args.Str("phases", "start,open,list,recover");
  for (int rep = 1; rep <= reps; ++rep) {
    std::stringstream list(phases);
    std::string phase;
    while (std::getline(list, phase, ',')) {
      if (phase == "start") {
        TimeStart(dir, now_ns, "start");
      } else if (phase == "open") {
        PhaseOpen(dir);
      } else if (phase == "scan") {
        PhaseScan(dir, false);
      } else if (phase == "parse") {
        PhaseScan(dir, true);
      } else if (phase == "capacity") {
        PhaseCapacity(dir);
      } else if (phase == "queries") {
        PhaseQueries(dir, now_ns);
      } else if (phase == "list") {
        PhaseList(dir);
      } else if (phase == "recover") {
        PhaseRecover(dir);
      } else {
        std::fprintf(stderr, "unknown phase %s\n", phase.c_str());
        return 2;
      }
      std::fflush(stdout);
    }
    std::fflush(stdout);
  }
  std::printf("peak RSS of this process: %.0f MiB\n", PeakRssKiB() / 1024.0);
  return 0;
}

int Main(int argc, char** argv) {
  Args args(argc, argv);
  args.CheckKnown({"jobs",
                   "steps",
                   "batch",
                   "reps",
                   "phases",
                   "crash",
                   "late",
                   "new_jobs",
                   "new_steps",
                   "queries",
                   "since_queries",
                   "end_every",
                   "hosts",
                   "query_nice",
                   "ended",
                   "window",
                   "retention_checks",
                   "scrape",
                   "loop",
                   "checkpoint_every"});
  const auto& pos = args.positional();
  if (pos.size() == 2 && pos[0] == "fill") return Fill(pos[1], args);
  if (pos.size() == 2 && pos[0] == "time") return Time(pos[1], args);
  if (pos.size() == 2 && pos[0] == "storm") return Storm(pos[1], args);
  if (pos.size() == 2 && pos[0] == "mixed") return Mixed(pos[1], args);
  if (pos.size() == 2 && pos[0] == "evicted") return Evicted(pos[1], args);
  std::fprintf(stderr,
               "usage: recovery_bench fill DIR [--jobs=10000 --steps=1000 "
               "--batch=500 --crash=0 --since_queries=0 --end_every=0 "
               "--hosts=0]\n       "
               "recovery_bench time DIR [--reps=1]\n");
  return 2;
}

}  // namespace
}  // namespace goodput::bench

int main(int argc, char** argv) { return goodput::bench::Main(argc, argv); }
