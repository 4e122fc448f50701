// goodputd: the goodput aggregator. See `goodputd --help` and
// docs/delivery.md.
#include <signal.h>

#include <fstream>
#include <iostream>
#include <limits>
#include <optional>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "report/catalog_file.h"
#include "server/cluster_mode.h"
#include "server/goodputd.h"
#include "server/security_flags.h"
#include "util/flag_values.h"
#include "util/flags.h"
#include "util/logger.h"
#include "util/time_format.h"
#include "util/version.h"

namespace {

constexpr char kUsage[] =
    "usage: goodputd --data_dir=DIR [--grpc_address=127.0.0.1:7700] "
    "[flags]\n\nThe goodput aggregator: takes event batches from agents over "
    "gRPC, keeps them\nin RocksDB under --data_dir, and answers reports.\n\n"
    "flags:\n";

struct Flags {
  bool help = false, version = false, fsync = false, accept_store_loss = false;
  std::optional<std::string> data_dir, grpc_address, metrics_address, lateness,
      stall_after, fault, max_job_series, ended_job_grace, windows,
      segment_labels, retention, state_every, state_every_events,
      shutdown_grace, log_format, catalog, cluster, cluster_partitions,
      cluster_lease_ttl, cluster_id, cluster_replicas, cluster_advertise,
      cluster_tls_ca, cluster_tls_server_name, cluster_snapshot_events,
      cluster_snapshot_interval, shard;
  goodput::server::SecurityFlags security;
};

constexpr absl::Duration kOneNano = absl::Nanoseconds(1);  // positive

// --retention=DURATION (positive), or nullopt to keep raw events forever.
absl::Status ParseRetention(const Flags& flags,
                            goodput::server::GoodputdOptions* options) {
  if (!flags.retention) return absl::OkStatus();
  int64_t ns = 0;
  absl::Status s =
      goodput::SetDurationFlag("retention", flags.retention, kOneNano, &ns);
  if (s.ok()) options->retention_ns = ns;
  return s;
}

// --catalog=FILE: accelerator entries (peaks, $ per chip-hour, W per chip)
// over the built-in catalog, as goodputctl replay --catalog.
absl::Status ParseCatalog(const Flags& flags,
                          goodput::server::GoodputdOptions* options) {
  if (!flags.catalog) return absl::OkStatus();
  std::ifstream in(*flags.catalog, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  absl::Status s = in.good() || in.eof()
                       ? goodput::report::ApplyCatalogJson(
                             text.str(), &options->config.catalog)
                       : absl::NotFoundError("cannot read the file");
  if (s.ok()) return s;
  return absl::InvalidArgumentError(
      absl::StrCat("--catalog: ", *flags.catalog, ": ", s.message()));
}

constexpr char kDefaultMetricsAddress[] = "127.0.0.1:7701";

absl::Status FlagError(const char* flag, const absl::Status& s) {
  return absl::InvalidArgumentError(absl::StrCat(flag, ": ", s.message()));
}

// --state_every=DURATION and --state_every_events=N (both positive).
absl::Status ParseStatePolicy(const Flags& flags,
                              goodput::server::GoodputdOptions* options) {
  goodput::server::LiveState::StatePolicy& p = options->states;
  absl::Status s = goodput::SetDurationFlag("state_every", flags.state_every,
                                            kOneNano, &p.every_ns);
  if (!s.ok()) return s;
  return goodput::SetIntFlag("state_every_events", flags.state_every_events, 1,
                             goodput::kNoMax, &p.every_events);
}

// --windows=5m,1h,24h: each a duration, labelled as written.
absl::Status ParseWindows(const std::string& text,
                          goodput::core::MetricsOptions* m) {
  m->windows.clear();
  for (absl::string_view w : absl::StrSplit(text, ',')) {
    auto ns = goodput::ParseDurationNanos(w);
    if (!ns.ok()) return FlagError("--windows", ns.status());
    if (*ns <= 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("--windows: ", w, " is not a positive duration"));
    }
    m->windows.emplace_back(std::string(w), *ns);
  }
  return absl::OkStatus();
}

// The metrics flags (docs/metrics.md); an error names the flag.
absl::Status ToMetricsOptions(const Flags& flags,
                              goodput::server::GoodputdOptions* options) {
  options->metrics_address =
      flags.metrics_address.value_or(kDefaultMetricsAddress);
  goodput::core::MetricsOptions& m = options->metrics;
  absl::Status s = goodput::SetIntFlag("max_job_series", flags.max_job_series,
                                       0, goodput::kNoMax, &m.max_job_series);
  if (s.ok()) {
    s = goodput::SetDurationFlag("ended_job_grace", flags.ended_job_grace,
                                 absl::ZeroDuration(), &m.ended_job_grace_ns);
  }
  if (!s.ok()) return s;
  if (flags.windows) {
    if (absl::Status s = ParseWindows(*flags.windows, &m); !s.ok()) return s;
  }
  if (flags.segment_labels) {
    m.segment_labels =
        absl::StrSplit(*flags.segment_labels, ',', absl::SkipEmpty());
  }
  return absl::OkStatus();
}

// --cluster and its --cluster_* flags (docs/scaling.md, "Cluster mode");
// the --cluster_* flags need --cluster.
absl::Status ParseCluster(const Flags& flags,
                          goodput::server::ClusterOptions* c) {
  if (!flags.cluster) {
    for (const auto* f :
         {&flags.cluster_partitions, &flags.cluster_lease_ttl,
          &flags.cluster_id, &flags.cluster_replicas, &flags.cluster_advertise,
          &flags.cluster_tls_ca, &flags.cluster_tls_server_name,
          &flags.cluster_snapshot_events, &flags.cluster_snapshot_interval}) {
      if (f->has_value()) {
        return absl::InvalidArgumentError(
            "--cluster_partitions, --cluster_lease_ttl, --cluster_id, "
            "--cluster_replicas, --cluster_advertise, --cluster_tls_ca, "
            "--cluster_tls_server_name, --cluster_snapshot_events and "
            "--cluster_snapshot_interval need --cluster");
      }
    }
    return absl::OkStatus();
  }
  auto urls = goodput::server::ParseClusterUrls(*flags.cluster);
  if (!urls.ok()) return urls.status();
  c->urls = *std::move(urls);
  if (flags.cluster_id) c->id = *flags.cluster_id;
  if (flags.cluster_advertise) {
    if (absl::Status s =
            goodput::server::CheckAdvertise(*flags.cluster_advertise);
        !s.ok()) {
      return s;
    }
    c->advertise = *flags.cluster_advertise;
  }
  if (flags.cluster_tls_ca) c->tls_ca = *flags.cluster_tls_ca;
  if (flags.cluster_tls_server_name) {
    c->tls_server_name = *flags.cluster_tls_server_name;
  }
  for (auto [flag, value, out] :
       {std::tuple("cluster_partitions", &flags.cluster_partitions,
                   &c->partitions),
        std::tuple("cluster_replicas", &flags.cluster_replicas,
                   &c->replicas)}) {
    absl::Status s = goodput::SetIntFlag(flag, *value, 1,
                                         std::numeric_limits<int>::max(), out);
    if (!s.ok()) return s;
  }
  if (absl::Status s = goodput::SetIntFlag(
          "cluster_snapshot_events", flags.cluster_snapshot_events, 1,
          std::numeric_limits<int64_t>::max(), &c->snapshot_every_events);
      !s.ok()) {
    return s;
  }
  if (absl::Status s = goodput::SetDurationFlag(
          "cluster_snapshot_interval", flags.cluster_snapshot_interval,
          absl::Seconds(1), &c->snapshot_every_ns);
      !s.ok()) {
    return s;
  }
  return goodput::SetDurationFlag("cluster_lease_ttl", flags.cluster_lease_ttl,
                                  absl::Seconds(1), &c->lease_ttl_ns);
}

// --shard=I/N (docs/scaling.md); not with --cluster, whose instances each
// apply every heartbeat.
absl::Status ParseShard(const Flags& flags,
                        goodput::server::GoodputdOptions* options) {
  if (!flags.shard) return absl::OkStatus();
  if (flags.cluster) {
    return absl::InvalidArgumentError(
        "--shard: not with --cluster (every instance keeps every heartbeat)");
  }
  auto shard = goodput::ParseShardPosition(*flags.shard, "--shard");
  if (!shard.ok()) return shard.status();
  options->shard = *shard;
  return absl::OkStatus();
}

// Fills `options` from `flags`; an error names the flag.
absl::Status ToOptions(const Flags& flags,
                       goodput::server::GoodputdOptions* options) {
  if (!flags.data_dir)
    return absl::InvalidArgumentError("--data_dir: required");
  options->data_dir = *flags.data_dir;
  if (flags.grpc_address) options->grpc_address = *flags.grpc_address;
  options->fsync = flags.fsync;
  options->accept_store_loss = flags.accept_store_loss;
  if (flags.fault) options->fault = *flags.fault;
  if (absl::Status s =
          goodput::server::ApplySecurityFlags(flags.security, options);
      !s.ok()) {
    return s;
  }
  for (auto [flag, value, out] :
       {std::tuple("lateness", &flags.lateness, &options->lateness_ns),
        std::tuple("stall_after", &flags.stall_after,
                   &options->config.stall_after_ns),
        std::tuple("shutdown_grace", &flags.shutdown_grace,
                   &options->shutdown_grace_ns)}) {
    absl::Status s =
        goodput::SetDurationFlag(flag, *value, absl::ZeroDuration(), out);
    if (!s.ok()) return s;
  }
  if (flags.log_format) {
    auto format = goodput::Logger::ParseFormat(*flags.log_format);
    if (!format.ok()) return format.status();
    options->log_format = *format;
  }
  if (absl::Status s = ParseRetention(flags, options); !s.ok()) return s;
  if (absl::Status s = ParseCatalog(flags, options); !s.ok()) return s;
  if (absl::Status s = ParseStatePolicy(flags, options); !s.ok()) return s;
  if (absl::Status s = ParseCluster(flags, &options->cluster); !s.ok()) {
    return s;
  }
  if (absl::Status s = ParseShard(flags, options); !s.ok()) return s;
  return ToMetricsOptions(flags, options);
}

// Blocks until SIGINT or SIGTERM (blocked in every thread beforehand).
int WaitForSignal(const sigset_t& signals) {
  int sig = 0;
  sigwait(&signals, &sig);
  return sig;
}

// Registers goodputd's flags into `flags`.
void AddFlags(goodput::FlagParser* parser, Flags* flags) {
  parser->AddBool("help", &flags->help, "show this help");
  parser->AddBool("version", &flags->version, "print the version and exit");
  parser->AddFlagFile();
  parser->AddString("data_dir", "DIR", &flags->data_dir,
                    "RocksDB directory (created if missing)");
  parser->AddString("grpc_address", "HOST:PORT", &flags->grpc_address,
                    "ingest and query address (default 127.0.0.1:7700)");
  parser->AddString("metrics_address", "HOST:PORT", &flags->metrics_address,
                    "Prometheus /metrics (default 127.0.0.1:7701; empty: "
                    "none; see docs/metrics.md)");
  parser->AddString("max_job_series", "N", &flags->max_job_series,
                    "jobs with per-job metric series at most (default 1000)");
  parser->AddString("ended_job_grace", "DURATION", &flags->ended_job_grace,
                    "ended jobs keep their series this long, then leave "
                    "memory (default 15m)");
  parser->AddString("windows", "LIST", &flags->windows,
                    "ratio windows, e.g. 5m,1h,24h (the default)");
  parser->AddString("segment_labels", "KEYS", &flags->segment_labels,
                    "job label keys added as segment labels (label_KEY)");
  parser->AddString("lateness", "DURATION", &flags->lateness,
                    "allowed event-time lateness per job (default 5s)");
  parser->AddString("catalog", "FILE", &flags->catalog,
                    "accelerator catalog entries (JSON; docs/semantics.md)");
  parser->AddString("stall_after", "DURATION", &flags->stall_after,
                    "in-flight step time after this is a hang (default 10m)");
  parser->AddBool("fsync", &flags->fsync, "sync the WAL on every batch");
  parser->AddBool("accept_store_loss", &flags->accept_store_loss,
                  "start on a store that lost acknowledged batches (a "
                  "damaged WAL) instead of refusing to (docs/delivery.md)");
  parser->AddString("retention", "DURATION", &flags->retention,
                    "delete raw events of jobs ended longer ago than this "
                    "(their final report stays; default: keep forever)");
  parser->AddString("state_every_events", "N", &flags->state_every_events,
                    "record a running job's state after this many of its "
                    "events (default 1000)");
  parser->AddString("state_every", "DURATION", &flags->state_every,
                    "... or once its event time moved this far (default 1m)");
  parser->AddString("shutdown_grace", "DURATION", &flags->shutdown_grace,
                    "on SIGTERM/SIGINT, calls in flight get this long to "
                    "finish before they are cancelled (default 10s)");
  parser->AddString("log_format", "text|json", &flags->log_format,
                    "log lines: text (default) or one JSON object per line "
                    "(time, level, component, message, fields)");
  parser->AddString("shard", "I/N", &flags->shard,
                    "this server is entry I (from 0) of the agents' N-entry "
                    "--server list: keep only the heartbeats of its own "
                    "hosts (docs/scaling.md; default: every heartbeat)");
  parser->AddString("cluster", "nats://HOST:PORT[,...]", &flags->cluster,
                    "cluster mode on NATS JetStream: agents' batches go to "
                    "a replicated log, instances share its partitions "
                    "(docs/scaling.md; default: the embedded mode)");
  parser->AddString("cluster_partitions", "N", &flags->cluster_partitions,
                    "partitions of the cluster, fixed when it is created; "
                    "the same on every instance (default 64)");
  parser->AddString("cluster_lease_ttl", "DURATION", &flags->cluster_lease_ttl,
                    "a dead instance's partitions move after this (default "
                    "10s; at least 1s)");
  parser->AddString("cluster_snapshot_events", "N",
                    &flags->cluster_snapshot_events,
                    "publish a held partition's snapshot after this many of "
                    "its events (default 100000)");
  parser->AddString("cluster_snapshot_interval", "DURATION",
                    &flags->cluster_snapshot_interval,
                    "... or this long after its last one, if it had events "
                    "(default 5m; at least 1s)");
  parser->AddString("cluster_id", "ID", &flags->cluster_id,
                    "this instance's member id, letters, digits, - and _ "
                    "(default: hostname-grpcport)");
  parser->AddString("cluster_replicas", "N", &flags->cluster_replicas,
                    "copies of the log and the leases in NATS (default 3)");
  parser->AddString("cluster_advertise", "HOST:PORT", &flags->cluster_advertise,
                    "the gRPC address the other instances call this one at "
                    "to answer for the whole fleet (default: the host of "
                    "--grpc_address, or the hostname if it is 0.0.0.0, and "
                    "the gRPC port)");
  parser->AddString("cluster_tls_ca", "FILE", &flags->cluster_tls_ca,
                    "with --tls_cert: the CA that signed the other "
                    "instances' certificates, checked when calling them "
                    "(default --tls_client_ca)");
  parser->AddString("cluster_tls_server_name", "NAME",
                    &flags->cluster_tls_server_name,
                    "the name the other instances' certificates carry, if "
                    "not the HOST of their --cluster_advertise");
  parser->AddString("fault", "POINT:N", &flags->fault,
                    "tests only: SIGKILL at the Nth before_store|after_store|"
                    "before_states|after_states, or hold the Nth hold_query "
                    "until it is cancelled");
}

// Runs goodputd until SIGINT or SIGTERM; the exit code.
int Serve(goodput::server::GoodputdOptions options, bool metrics_given) {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  goodput::RealClock clock;
  // Startup and shutdown lines on stdout, failures on stderr, as always.
  const goodput::Logger out("goodputd", options.log_format, &clock, 1);
  const goodput::Logger err("goodputd", options.log_format, &clock, 2);
  auto server = goodput::server::Goodputd::Start(options, &clock);
  if (!server.ok() && !metrics_given &&
      absl::StartsWith(server.status().message(), "--metrics_address")) {
    // The default port is taken (e.g. another goodputd): run without.
    err.Warning(absl::StrCat(server.status().message(),
                             "; serving no metrics (pass --metrics_address)"));
    options.metrics_address.clear();
    server = goodput::server::Goodputd::Start(options, &clock);
  }
  if (!server.ok()) {
    err.Error(server.status().message());
    return 1;
  }
  const int port = (*server)->port(), metrics = (*server)->metrics_port();
  out.Info(
      absl::StrCat("listening on port ", port, ", data in ", options.data_dir),
      {{"port", absl::StrCat(port)}, {"data_dir", options.data_dir}});
  if (metrics > 0) {
    out.Info(absl::StrCat("metrics on port ", metrics),
             {{"metrics_port", absl::StrCat(metrics)}});
  }
  int sig = WaitForSignal(signals);
  out.Info(absl::StrCat("signal ", sig, ", shutting down"));
  (*server)->Shutdown();
  server->reset();  // closes the store
  out.Info("stopped");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Flags flags;
  goodput::FlagParser parser;
  AddFlags(&parser, &flags);
  goodput::server::AddSecurityFlags(&parser, &flags.security);
  std::vector<std::string> args(argv + 1, argv + argc), positional;
  absl::Status s = parser.Parse(args, &positional);
  if (s.ok() && !positional.empty()) {
    s = absl::InvalidArgumentError("unexpected argument " + positional[0]);
  }
  goodput::server::GoodputdOptions options;
  if (s.ok() && !flags.help && !flags.version) s = ToOptions(flags, &options);
  if (!s.ok()) {
    std::cerr << "goodputd: " << s.message() << " (see --help)\n";
    return 2;
  }
  if (flags.help) {
    std::cout << kUsage << parser.Help();
    return 0;
  }
  if (flags.version) {
    std::cout << goodput::VersionLine("goodputd") << "\n";
    return 0;
  }
  return Serve(options, flags.metrics_address.has_value());
}
