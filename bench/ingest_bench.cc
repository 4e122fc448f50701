// Ingest end to end and event-to-queryable latency (SPEC section 7). Not a
// test; run by hand (commands and results in BENCHMARKS.md).
//
//   ingest_bench throughput [--jobs=1000 --steps=1000 --batch=500
//                            --in_flight=8 --reps=3 --fsync --run_s=0
//                            --agents=1 --checkpoint_every=100]
//       In ONE run, alternating: streams the same pre-built batches (a
//       bench_events Fleet, cut into batches; with --run_s=S each job's
//       events of every S seconds in a row, as per-host agents send them
//       after S seconds of buffering) over gRPC into (a) a bare
//       Ingest sink in this process that acks and discards each batch and
//       (b) an in-process goodputd (Goodputd::Start: RocksDB in a fresh temp
//       dir, WAL on, fsync per batch only with --fsync), waiting for every
//       ack. Prints events/s of each, medians and their ratio. With
//       --agents=N the fleet's jobs are dealt out to N agents, each
//       streaming its own jobs' batches over its own connection at once
//       (MakeAgentBatches, StreamAgents), as N hosts' agents do. Each job
//       checkpoints every --checkpoint_every steps (one step a second).
//
//   ingest_bench store [--jobs=1000 --steps=1000 --batch=500 --reps=3]
//       RocksDB alone: the throughput mode's batches as the BatchWrites the
//       ingestor hands the store (every event accepted), written one after
//       another by RocksDbEventStore::Write on this thread into a fresh
//       store per rep (WAL on, no fsync): no gRPC, no judge, no live state,
//       no job state records. Prints events/s of the wall time and of this
//       thread's CPU time (flush and compaction run on RocksDB's threads).
//
//   ingest_bench stream --target=HOST:PORT [--jobs --steps --batch
//                        --in_flight --agent_id=bench-stream]
//       The same load generator against a separate goodputd process.
//
//   ingest_bench agent --socket=PATH --metrics=HOST:PORT [--jobs --steps]
//       Writes the fleet as JSON Lines into goodput-agent's socket (one
//       connection, as fast as it takes them) and polls the agent's
//       /metrics until every event is spooled and acknowledged by goodputd.
//
//   ingest_bench sink [--port=0]
//       A bare Ingest sink (DiscardingIngest: parses each Batch, acks it at
//       once, discards it) as a separate process on 127.0.0.1:PORT, for
//       measuring goodput-agent alone (run_process_benches.sh agent-sink).
//       Prints "listening on port N"; at SIGTERM or SIGINT prints the
//       batches and events it acknowledged and exits 0.
//
//   ingest_bench latency [--jobs=1,1000,10000 --events=400000 --batch=500
//                         --samples=200 --reports=100]
//       Per fleet size, on an in-process goodputd preloaded with the first
//       half of the batches: Ingest ack latency (one batch in flight),
//       Query.Report latency on the quiescent server, and event-to-
//       queryable latency: Write of a batch -> its ack -> a Query.Report
//       that shows the batch's last step (checked, outside the timing).
//
//   ingest_bench queries [--jobs=10000,100000 --steps=20 --batch=500
//                         --reps=200 --report_reps=10 --advance_ms=0]
//       Per fleet size, on an in-process goodputd holding the whole fleet
//       (quiescent): latency of each Query RPC over loopback gRPC, client
//       side, p50/p99/max: Job (a different job each call), Jobs (--limit
//       20, default sort), Fleet, Summary, and the streamed Report (read to
//       the end, fewer reps). Per value of --advance_ms: 0 holds the
//       server's clock (every call is as of one instant); N > 0 moves it N
//       ms before each call, as a real goodputd's as-of moves with its
//       clock (the fleet's jobs are running: their reports change).
//
// Everything is deterministic: bench_events data, fixed agent ids, a
// FakeClock set 1 s after the newest event.
#include <netdb.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "bench/bench_events.h"
#include "bench/bench_util.h"
#include "bench/ingest_client.h"
#include "core/event_order.h"
#include "nlohmann/json.hpp"
#include "server/goodputd.h"
#include "storage/event_store.h"
#include "storage/rocksdb_event_store.h"

namespace goodput::bench {
namespace {

constexpr char kAgentId[] = "bench-agent-0001";

std::string MakeTempDir() {
  char tmpl[] = "/tmp/goodput-bench-XXXXXX";
  if (mkdtemp(tmpl) == nullptr) {
    std::perror("mkdtemp");
    std::exit(1);
  }
  return tmpl;
}

uint64_t DirBytes(const std::string& dir) {
  uint64_t total = 0;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir)) {
    if (e.is_regular_file()) total += e.file_size();
  }
  return total;
}

void Die(const absl::Status& s) {
  std::fprintf(stderr, "error: %s\n", std::string(s.message()).c_str());
  std::exit(1);
}

// An in-process goodputd on a fresh temp dir; removes the dir at the end.
struct LocalGoodputd {
  LocalGoodputd(int64_t now_ns, bool fsync)
      : clock(now_ns), dir(MakeTempDir()) {
    server::GoodputdOptions options;
    options.data_dir = dir;
    options.grpc_address = "127.0.0.1:0";
    options.fsync = fsync;
    auto started = server::Goodputd::Start(options, &clock);
    if (!started.ok()) Die(started.status());
    d = *std::move(started);
  }
  ~LocalGoodputd() {
    d.reset();
    std::filesystem::remove_all(dir);
  }
  std::string target() const { return absl::StrCat("127.0.0.1:", d->port()); }
  FakeClock clock;
  std::string dir;
  std::unique_ptr<server::Goodputd> d;
};

struct LocalSink {
  explicit LocalSink(int want_port = 0) {
    grpc::ServerBuilder builder;
    builder.AddListeningPort(absl::StrCat("127.0.0.1:", want_port),
                             grpc::InsecureServerCredentials(), &port);
    builder.RegisterService(&service);
    server = builder.BuildAndStart();
    if (!server || port == 0) Die(absl::UnavailableError("sink: no port"));
  }
  ~LocalSink() { server->Shutdown(); }
  std::string target() const { return absl::StrCat("127.0.0.1:", port); }
  DiscardingIngest service;
  std::unique_ptr<grpc::Server> server;
  int port = 0;
};

void PrintStream(const char* label, const StreamResult& r) {
  std::printf(
      "%-9s batches=%lld events=%lld accepted=%lld rejected=%lld dup=%lld "
      "time=%.3fs -> %.0f events/s  (ack p50=%.2fms p99=%.2fms)\n",
      label, static_cast<long long>(r.batches),
      static_cast<long long>(r.events_sent), static_cast<long long>(r.accepted),
      static_cast<long long>(r.rejected), static_cast<long long>(r.duplicates),
      r.seconds, r.events_per_second(), Percentile(r.ack_latency_s, 0.5) * 1e3,
      Percentile(r.ack_latency_s, 0.99) * 1e3);
  std::fflush(stdout);
}

// --run_s=S (throughput): each job's events of every S seconds of event
// time in a row, as per-host agents send them (a host runs one job) after
// S seconds of buffering; 0 keeps the fleet interleaved by time (about one
// event of each of the 1,000 jobs in a batch).
void RunsOfOneJob(int64_t run_s, std::vector<v1::Event>* events) {
  if (run_s <= 0) return;
  const int64_t run_ns = run_s * core::kNanosPerSecond;
  std::stable_sort(events->begin(), events->end(),
                   [run_ns](const v1::Event& a, const v1::Event& b) {
                     const int64_t wa = core::EventTimeNanos(a) / run_ns;
                     const int64_t wb = core::EventTimeNanos(b) / run_ns;
                     if (wa != wb) return wa < wb;
                     return a.job_id() < b.job_id();
                   });
}

int Throughput(const Args& args) {
  const int jobs = static_cast<int>(args.Int("jobs", 1000));
  const int64_t steps = args.Int("steps", 1000);
  const size_t batch = static_cast<size_t>(args.Int("batch", 500));
  const size_t in_flight = static_cast<size_t>(args.Int("in_flight", 8));
  const int reps = static_cast<int>(args.Int("reps", 3));
  const bool fsync = args.Bool("fsync");
  std::vector<v1::Event> events =
      Fleet(jobs, steps, args.Int("checkpoint_every", 100));
  RunsOfOneJob(args.Int("run_s", 0), &events);
  const int agents = static_cast<int>(args.Int("agents", 1));
  const std::vector<std::vector<v1::Batch>> batches =
      MakeAgentBatches(events, batch, agents, kAgentId);
  const int64_t now_ns = MaxEventTimeNanos(events) + core::kNanosPerSecond;
  size_t wire = 0, count = 0;
  for (const auto& agent : batches) {
    for (const auto& b : agent) wire += b.ByteSizeLong();
    count += agent.size();
  }
  std::printf(
      "load: Fleet(%d, %lld) = %zu events in %zu batches of %zu from %d "
      "agent(s) (%.1f MiB on the wire, %.0f B/event); in_flight=%zu per "
      "agent; WAL on, fsync=%s\n",
      jobs, static_cast<long long>(steps), events.size(), count, batch, agents,
      wire / 1048576.0, double(wire) / events.size(), in_flight,
      fsync ? "per batch" : "off");
  std::vector<double> sink_rates, goodputd_rates;
  for (int rep = 1; rep <= reps; ++rep) {
    {
      LocalSink sink;
      auto r = StreamAgents(sink.target(), batches, in_flight);
      if (!r.ok()) Die(r.status());
      PrintStream(absl::StrCat("sink#", rep).c_str(), *r);
      sink_rates.push_back(r->events_per_second());
    }
    {
      LocalGoodputd g(now_ns, fsync);
      auto r = StreamAgents(g.target(), batches, in_flight);
      if (!r.ok()) Die(r.status());
      PrintStream(absl::StrCat("goodputd#", rep).c_str(), *r);
      if (r->accepted != static_cast<int64_t>(events.size())) {
        std::fprintf(stderr, "goodputd accepted %lld of %zu events\n",
                     static_cast<long long>(r->accepted), events.size());
        return 1;
      }
      goodputd_rates.push_back(r->events_per_second());
      const auto live = g.d->ingestor()->live_stats();
      const auto stats = g.d->ingestor()->stats();
      std::printf(
          "          %lld batches in %lld store writes; "
          "live: applied=%lld late_rebuilds=%lld apply_errors=%lld; "
          "store dir %.1f MiB\n",
          static_cast<long long>(stats.batches),
          static_cast<long long>(stats.batch_writes),
          static_cast<long long>(live.applied),
          static_cast<long long>(live.late_rebuilds),
          static_cast<long long>(live.apply_errors),
          DirBytes(g.dir) / 1048576.0);
    }
  }
  const double sink = Percentile(sink_rates, 0.5);
  const double gd = Percentile(goodputd_rates, 0.5);
  std::printf(
      "median: sink %.0f events/s, goodputd %.0f events/s, "
      "goodputd/sink = %.3f\n",
      sink, gd, gd / sink);
  return 0;
}

// The BatchWrites Ingestor::Judge makes of `batches` when it accepts every
// event.
std::vector<storage::BatchWrite> ToBatchWrites(
    const std::vector<v1::Batch>& batches, int64_t received_ns) {
  std::vector<storage::BatchWrite> out(batches.size());
  for (size_t i = 0; i < batches.size(); ++i) {
    out[i].agent_id = batches[i].agent_id();
    out[i].sequence = batches[i].sequence();
    out[i].received_ns = received_ns;
    out[i].accepted.assign(batches[i].events().begin(),
                           batches[i].events().end());
  }
  return out;
}

// Writes `writes` into a fresh store; prints and returns the wall events/s.
double StoreRep(int rep, const std::vector<storage::BatchWrite>& writes,
                size_t events) {
  const std::string dir = MakeTempDir();
  auto store = storage::RocksDbEventStore::Open(dir, {});
  if (!store.ok()) Die(store.status());
  const double cpu0 = ThreadCpuSeconds();
  const SteadyClock::time_point start = SteadyClock::now();
  for (const storage::BatchWrite& w : writes) {
    if (auto id = (*store)->Write(w); !id.ok()) Die(id.status());
  }
  const double wall = SecondsSince(start);
  const double cpu = ThreadCpuSeconds() - cpu0;
  std::printf(
      "store#%d  batches=%zu events=%zu time=%.3fs -> %.0f events/s; "
      "writer thread CPU %.3fs -> %.0f events/s; store dir %.1f MiB\n",
      rep, writes.size(), events, wall, events / wall, cpu, events / cpu,
      DirBytes(dir) / 1048576.0);
  std::fflush(stdout);
  store->reset();
  std::filesystem::remove_all(dir);
  return events / wall;
}

int Store(const Args& args) {
  const int jobs = static_cast<int>(args.Int("jobs", 1000));
  const int64_t steps = args.Int("steps", 1000);
  const size_t batch = static_cast<size_t>(args.Int("batch", 500));
  const int reps = static_cast<int>(args.Int("reps", 3));
  const std::vector<v1::Event> events = Fleet(jobs, steps);
  const int64_t now_ns = MaxEventTimeNanos(events) + core::kNanosPerSecond;
  const std::vector<storage::BatchWrite> writes =
      ToBatchWrites(MakeBatches(events, batch, kAgentId), now_ns);
  std::printf(
      "load: Fleet(%d, %lld) = %zu events in %zu BatchWrites of %zu; "
      "WAL on, fsync=off\n",
      jobs, static_cast<long long>(steps), events.size(), writes.size(), batch);
  std::vector<double> rates;
  for (int rep = 1; rep <= reps; ++rep) {
    rates.push_back(StoreRep(rep, writes, events.size()));
  }
  std::printf("median: store %.0f events/s\n", Percentile(rates, 0.5));
  return 0;
}

int Stream(const Args& args) {
  const std::string target = args.Str("target", "");
  if (target.empty()) {
    std::fprintf(stderr, "stream: --target=HOST:PORT is required\n");
    return 2;
  }
  const std::vector<v1::Event> events =
      Fleet(static_cast<int>(args.Int("jobs", 1000)), args.Int("steps", 1000));
  const std::vector<v1::Batch> batches =
      MakeBatches(events, static_cast<size_t>(args.Int("batch", 500)),
                  args.Str("agent_id", "bench-stream"));
  auto r = StreamBatches(NewChannel(target), batches,
                         static_cast<size_t>(args.Int("in_flight", 8)));
  if (!r.ok()) Die(r.status());
  PrintStream("stream", *r);
  return 0;
}

// ---- agent ----

// The sum of the samples of `name` in Prometheus text `text`.
double Metric(const std::string& text, const std::string& name) {
  double sum = 0;
  size_t pos = 0;
  while ((pos = text.find(name, pos)) != std::string::npos) {
    const bool line_start = pos == 0 || text[pos - 1] == '\n';
    const size_t after = pos + name.size();
    pos = after;
    if (!line_start || after >= text.size() ||
        (text[after] != ' ' && text[after] != '{')) {
      continue;
    }
    const size_t eol = text.find('\n', after);
    const size_t space = text.rfind(' ', eol);
    sum += std::atof(text.c_str() + space + 1);
  }
  return sum;
}

// GET http://host:port/metrics; empty on error.
std::string FetchMetrics(const std::string& host_port) {
  const size_t colon = host_port.rfind(':');
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  if (getaddrinfo(host_port.substr(0, colon).c_str(),
                  host_port.substr(colon + 1).c_str(), &hints, &res) != 0) {
    return "";
  }
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  std::string out;
  if (fd >= 0 && connect(fd, res->ai_addr, res->ai_addrlen) == 0) {
    const std::string req =
        "GET /metrics HTTP/1.0\r\nHost: " + host_port + "\r\n\r\n";
    if (write(fd, req.data(), req.size()) == ssize_t(req.size())) {
      char buf[65536];
      ssize_t n;
      while ((n = read(fd, buf, sizeof buf)) > 0) out.append(buf, n);
    }
  }
  if (fd >= 0) close(fd);
  freeaddrinfo(res);
  return out;
}

int Agent(const Args& args) {
  const std::string socket_path = args.Str("socket", "");
  const std::string metrics = args.Str("metrics", "");
  if (socket_path.empty() || metrics.empty()) {
    std::fprintf(stderr, "agent: --socket and --metrics are required\n");
    return 2;
  }
  const std::vector<v1::Event> events =
      Fleet(static_cast<int>(args.Int("jobs", 1000)), args.Int("steps", 1000));
  const std::string text = ToJsonLines(events);
  const std::string before = FetchMetrics(metrics);
  if (before.empty()) {
    std::fprintf(stderr, "agent: cannot read http://%s/metrics\n",
                 metrics.c_str());
    return 1;
  }
  const double spooled0 = Metric(before, "goodput_agent_spooled_events_total");
  const double lines0 = Metric(before, "goodput_agent_accepted_lines_total");
  std::printf("load: %zu events, %.1f MiB of JSON Lines, one connection\n",
              events.size(), text.size() / 1048576.0);

  const int fd = socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::snprintf(addr.sun_path, sizeof addr.sun_path, "%s", socket_path.c_str());
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    std::perror("connect");
    return 1;
  }
  const auto start = SteadyClock::now();
  for (size_t off = 0; off < text.size();) {
    const ssize_t n = write(fd, text.data() + off, text.size() - off);
    if (n <= 0) {
      std::perror("write");
      return 1;
    }
    off += static_cast<size_t>(n);
  }
  close(fd);
  const double written_s = SecondsSince(start);
  const double n = static_cast<double>(events.size());
  double intake_s = 0;
  for (;;) {
    const std::string m = FetchMetrics(metrics);
    const double lines =
        Metric(m, "goodput_agent_accepted_lines_total") - lines0;
    const double spooled =
        Metric(m, "goodput_agent_spooled_events_total") - spooled0;
    const double pending = Metric(m, "goodput_agent_spool_pending_batches");
    if (intake_s == 0 && lines >= n) intake_s = SecondsSince(start);
    if (spooled >= n && pending == 0) break;
    if (SecondsSince(start) > 600) {
      std::fprintf(stderr, "agent: timed out (lines %.0f spooled %.0f)\n",
                   lines, spooled);
      return 1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  const double total_s = SecondsSince(start);
  std::printf(
      "agent: socket written in %.3fs; all lines accepted at %.3fs "
      "(%.0f lines/s); all acked by goodputd at %.3fs -> %.0f events/s "
      "(includes up to one --batch_delay for the last batch)\n",
      written_s, intake_s, n / intake_s, total_s, n / total_s);
  return 0;
}

// ---- sink ----

int Sink(const Args& args) {
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGTERM);
  sigaddset(&stop, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop, nullptr);  // before gRPC's threads
  LocalSink sink(static_cast<int>(args.Int("port", 0)));
  std::printf("sink: listening on port %d\n", sink.port);
  std::fflush(stdout);
  int sig = 0;
  sigwait(&stop, &sig);
  std::printf("sink: acknowledged %lld batches, %lld events\n",
              static_cast<long long>(sink.service.batches()),
              static_cast<long long>(sink.service.events()));
  return 0;
}

// ---- latency ----

// The job's steps.last in report JSON, or -1.
int64_t LastStep(const v1::ShardReport& report, const std::string& job_id) {
  for (const v1::JobReport& job : report.jobs()) {
    if (job.job_id() == job_id) {
      return job.has_last_step() ? job.last_step() : -1;
    }
  }
  return -1;
}

int Latency(const Args& args) {
  const int64_t target_events = args.Int("events", 400000);
  const size_t batch = static_cast<size_t>(args.Int("batch", 500));
  const size_t samples = static_cast<size_t>(args.Int("samples", 200));
  const int reports = static_cast<int>(args.Int("reports", 100));
  for (int64_t jobs : args.Ints("jobs", {1, 1000, 10000})) {
    const int64_t steps = std::max<int64_t>(40, target_events / jobs);
    const std::vector<v1::Event> events = Fleet(static_cast<int>(jobs), steps);
    const std::vector<v1::Batch> batches = MakeBatches(events, batch, kAgentId);
    const size_t preload = batches.size() / 2;
    const size_t k = std::min(samples, (batches.size() - preload) / 2);
    LocalGoodputd g(MaxEventTimeNanos(events) + core::kNanosPerSecond, false);
    auto channel = NewChannel(g.target());
    auto query = v1::Query::NewStub(channel);
    std::printf(
        "== %lld jobs: Fleet(%lld, %lld) = %zu events, %zu batches "
        "of %zu; preload %zu batches, %zu samples\n",
        static_cast<long long>(jobs), static_cast<long long>(jobs),
        static_cast<long long>(steps), events.size(), batches.size(), batch,
        preload, k);
    // Preload.
    std::vector<v1::Batch> part(batches.begin(), batches.begin() + preload);
    auto r = StreamBatches(channel, part, 8);
    if (!r.ok()) Die(r.status());
    // Ack latency, one batch in flight.
    part.assign(batches.begin() + preload, batches.begin() + preload + k);
    r = StreamBatches(channel, part, 1);
    if (!r.ok()) Die(r.status());
    std::printf(
        "ingest ack (batch of %zu, 1 in flight): p50=%.2fms "
        "p99=%.2fms max=%.2fms\n",
        batch, Percentile(r->ack_latency_s, 0.5) * 1e3,
        Percentile(r->ack_latency_s, 0.99) * 1e3,
        Percentile(r->ack_latency_s, 1.0) * 1e3);
    // Report latency on the quiescent server.
    std::vector<double> report_s;
    v1::ShardReport response;
    for (int i = 0; i < reports + 3; ++i) {
      auto t = TimeReport(query.get(), &response);
      if (!t.ok()) Die(t.status());
      if (i >= 3) report_s.push_back(*t);  // 3 warm-up calls
    }
    std::printf(
        "query Report (%lld jobs, %.1f KiB streamed): p50=%.2fms "
        "p99=%.2fms max=%.2fms\n",
        static_cast<long long>(jobs), response.ByteSizeLong() / 1024.0,
        Percentile(report_s, 0.5) * 1e3, Percentile(report_s, 0.99) * 1e3,
        Percentile(report_s, 1.0) * 1e3);
    // Event to queryable: Write -> ack -> Report showing it.
    grpc::ClientContext context;
    auto ingest = v1::Ingest::NewStub(channel);
    auto stream = ingest->Stream(&context);
    std::vector<double> e2q_s, ack_s;
    int not_visible = 0;
    for (size_t i = preload + k; i < preload + 2 * k; ++i) {
      const v1::Batch& b = batches[i];
      const auto start = SteadyClock::now();
      v1::Ack ack;
      if (!stream->Write(b) || !stream->Read(&ack)) {
        Die(absl::UnavailableError("stream broke"));
      }
      ack_s.push_back(SecondsSince(start));
      v1::ShardReport rr;
      absl::StatusOr<double> st = TimeReport(query.get(), &rr);
      e2q_s.push_back(SecondsSince(start));
      if (!st.ok()) Die(st.status());
      // Check (untimed) that the batch's last step is in the report.
      for (int j = b.events_size() - 1; j >= 0; --j) {
        if (!b.events(j).has_step()) continue;
        const int64_t last = LastStep(rr, b.events(j).job_id());
        if (last < b.events(j).step().step()) ++not_visible;
        break;
      }
    }
    stream->WritesDone();
    (void)stream->Finish();
    std::printf(
        "event-to-queryable (Write -> ack -> Report): p50=%.2fms "
        "p99=%.2fms max=%.2fms (ack part p50=%.2fms p99=%.2fms); "
        "not visible: %d of %zu\n",
        Percentile(e2q_s, 0.5) * 1e3, Percentile(e2q_s, 0.99) * 1e3,
        Percentile(e2q_s, 1.0) * 1e3, Percentile(ack_s, 0.5) * 1e3,
        Percentile(ack_s, 0.99) * 1e3, not_visible, e2q_s.size());
    std::fflush(stdout);
  }
  return 0;
}

// Times `call` `reps` times after 3 warm-up calls; prints its wall
// p50/p99/max and the process CPU (client and server, both in this
// process) per call, the figure to compare on a loaded machine.
void TimeCalls(const char* name, int reps,
               const std::function<absl::Status(int)>& call) {
  std::vector<double> took;
  double cpu = 0;
  for (int i = 0; i < reps + 3; ++i) {
    const double cpu0 = ProcessCpuSeconds();
    const auto start = SteadyClock::now();
    absl::Status s = call(i);
    const double t = SecondsSince(start);
    if (!s.ok()) Die(s);
    if (i >= 3) took.push_back(t);
    if (i >= 3) cpu += ProcessCpuSeconds() - cpu0;
  }
  std::printf(
      "  %-34s p50=%8.2fms p99=%8.2fms max=%8.2fms cpu/call=%7.2fms "
      "(%d calls)\n",
      name, Percentile(took, 0.5) * 1e3, Percentile(took, 0.99) * 1e3,
      Percentile(took, 1.0) * 1e3, cpu / reps * 1e3, reps);
  std::fflush(stdout);
}

// Calls `method` of `stub` with `request`; the status.
template <typename Request, typename Response>
absl::Status Unary(v1::Query::Stub* stub,
                   grpc::Status (v1::Query::Stub::*method)(grpc::ClientContext*,
                                                           const Request&,
                                                           Response*),
                   const Request& request, Response* response) {
  grpc::ClientContext context;
  grpc::Status s = (stub->*method)(&context, request, response);
  if (!s.ok()) return absl::UnavailableError(s.error_message());
  return absl::OkStatus();
}

// Times each Query RPC of `query` against the loaded server of `g`,
// moving its clock `advance_ns` before each call.
void TimeQueries(const Args& args, int64_t jobs, int64_t advance_ns,
                 LocalGoodputd* g, v1::Query::Stub* query) {
  const int reps = static_cast<int>(args.Int("reps", 200));
  const int report_reps = static_cast<int>(args.Int("report_reps", 10));
  using Stub = v1::Query::Stub;
  std::printf("-- as-of %s\n",
              advance_ns == 0 ? "fixed (the server's clock holds)"
                              : absl::StrCat("moving ", advance_ns / 1000000,
                                             " ms before each call")
                                    .c_str());
  const auto timed = [&](const char* name, int n,
                         const std::function<absl::Status(int)>& call) {
    TimeCalls(name, n, [&](int i) {
      g->clock.Advance(advance_ns);
      return call(i);
    });
  };
  timed("Query.Job (a different job each)", reps, [&](int i) {
    v1::JobRequest request;
    request.set_job_id("job-" + std::to_string((i * 7919) % jobs));
    v1::JobResponse response;
    return Unary(query, &Stub::Job, request, &response);
  });
  timed("Query.Jobs (limit 20)", reps, [&](int) {
    v1::JobsRequest request;
    request.set_limit(20);
    v1::JobsResponse response;
    return Unary(query, &Stub::Jobs, request, &response);
  });
  timed("Query.Fleet", reps, [&](int) {
    v1::FleetResponse response;
    return Unary(query, &Stub::Fleet, v1::FleetRequest(), &response);
  });
  timed("Query.Summary", reps, [&](int) {
    v1::SummaryResponse response;
    return Unary(query, &Stub::Summary, v1::SummaryRequest(), &response);
  });
  v1::ShardReport report;
  timed("Query.Report (streamed, read all)", report_reps,
        [&](int) { return TimeReport(query, &report).status(); });
  std::printf("  report: %d jobs, %.1f MiB in machine form\n",
              report.jobs_size(), report.ByteSizeLong() / 1048576.0);
}

int Queries(const Args& args) {
  const int64_t steps = args.Int("steps", 20);
  const size_t batch = static_cast<size_t>(args.Int("batch", 500));
  for (int64_t jobs : args.Ints("jobs", {10000, 100000})) {
    const std::vector<v1::Event> events = Fleet(static_cast<int>(jobs), steps);
    const std::vector<v1::Batch> batches = MakeBatches(events, batch, kAgentId);
    LocalGoodputd g(MaxEventTimeNanos(events) + core::kNanosPerSecond, false);
    auto channel = NewChannel(g.target());
    auto query = v1::Query::NewStub(channel);
    auto r = StreamBatches(channel, batches, 8);
    if (!r.ok()) Die(r.status());
    std::printf("== %lld jobs: Fleet(%lld, %lld) = %zu events, loaded\n",
                static_cast<long long>(jobs), static_cast<long long>(jobs),
                static_cast<long long>(steps), events.size());
    for (int64_t advance_ms : args.Ints("advance_ms", {0})) {
      TimeQueries(args, jobs, advance_ms * 1000000, &g, query.get());
    }
  }
  return 0;
}

int Main(int argc, char** argv) {
  Args args(argc, argv);
  args.CheckKnown({"jobs", "steps", "batch", "in_flight", "reps", "fsync",
                   "target", "agent_id", "socket", "metrics", "events",
                   "samples", "reports", "report_reps", "advance_ms", "port",
                   "run_s", "agents", "checkpoint_every"});
  const auto& pos = args.positional();
  const std::string mode = pos.empty() ? "" : pos[0];
  if (mode == "throughput") return Throughput(args);
  if (mode == "store") return Store(args);
  if (mode == "stream") return Stream(args);
  if (mode == "agent") return Agent(args);
  if (mode == "sink") return Sink(args);
  if (mode == "latency") return Latency(args);
  if (mode == "queries") return Queries(args);
  std::fprintf(stderr,
               "usage: ingest_bench "
               "throughput|store|stream|agent|sink|latency|queries "
               "[flags] "
               "(see the comment at the top of bench/ingest_bench.cc)\n");
  return 2;
}

}  // namespace
}  // namespace goodput::bench

int main(int argc, char** argv) { return goodput::bench::Main(argc, argv); }
