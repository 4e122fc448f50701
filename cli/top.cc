#include "cli/top.h"

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <thread>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "cli/remote_util.h"
#include "cli/shard_query.h"
#include "cli/top_metrics.h"
#include "cli/top_view.h"
#include "grpcpp/create_channel.h"
#include "proto/service.grpc.pb.h"
#include "report/report_json.h"
#include "util/flags.h"
#include "util/grpc_status.h"
#include "util/time_format.h"

namespace goodput::cli {
namespace {

constexpr char kPrefix[] = "goodputctl top";
constexpr char kClearHome[] = "\033[H\033[2J";
constexpr int kMetricsTimeoutMs = 500;

// http://HOST:(PORT+1)/metrics for --server=HOST:PORT.
// With a shard list, the first shard's.
std::string DefaultMetricsUrl(const std::string& list) {
  const std::string server = list.substr(0, list.find(','));
  const size_t colon = server.rfind(':');
  int port = 0;
  if (colon == std::string::npos ||
      !absl::SimpleAtoi(server.substr(colon + 1), &port)) {
    return "";
  }
  return absl::StrCat("http://", server.substr(0, colon), ":", port + 1,
                      "/metrics");
}

// Fetches the report JSON of the server, or of every shard of a list.
using ReportFetcher = std::function<absl::StatusOr<std::string>()>;

absl::StatusOr<std::string> FetchReport(v1::Query::Stub& stub) {
  grpc::ClientContext rpc;
  rpc.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(30)));
  v1::ReportResponse response;
  absl::Status s = FromGrpc(stub.Report(&rpc, v1::ReportRequest(), &response));
  if (!s.ok()) return s;
  return response.json();
}

// The merged report of every shard, as of now.
absl::StatusOr<std::string> FetchMergedJson(const ShardMap& shards,
                                            const TlsFlagValues& tls) {
  absl::StatusOr<core::FleetReport> report =
      FetchMergedReport(shards, tls, absl::GetCurrentTimeNanos(), std::nullopt);
  if (!report.ok()) return report.status();
  return report::WriteReportJson(*report);
}

// Query.Report of --server, or the merge of its shards.
absl::StatusOr<ReportFetcher> MakeFetcher(const CommandContext& context) {
  absl::StatusOr<std::optional<ShardMap>> shards = ShardList(context);
  if (!shards.ok()) return shards.status();
  if (*shards)
    return ReportFetcher(
        [m = **shards, tls = context.tls] { return FetchMergedJson(m, tls); });
  absl::StatusOr<std::shared_ptr<grpc::Channel>> channel = Connect(context);
  if (!channel.ok()) return channel.status();
  std::shared_ptr<v1::Query::Stub> stub = v1::Query::NewStub(*channel);
  return ReportFetcher([stub] { return FetchReport(*stub); });
}

// One screen: the rendered report, or the reason there is none.
absl::StatusOr<std::string> Screen(const ReportFetcher& fetch,
                                   TopContext& top) {
  absl::StatusOr<std::string> json = fetch();
  if (!json.ok()) {
    return absl::UnavailableError(
        absl::StrCat(top.server, ": ", json.status().message()));
  }
  top.counters.reset();
  if (!top.metrics_url.empty()) {
    auto text = HttpGet(top.metrics_url, kMetricsTimeoutMs);
    if (text.ok()) top.counters = IngestCounters(*text);
  }
  return RenderTop(*json, top);
}

struct TopFlags {
  bool help = false, once = false;
  std::optional<std::string> interval, metrics_url, jobs;
};

absl::Status ToContext(const TopFlags& f, const std::string& server,
                       TopContext* top) {
  top->server = server;
  top->metrics_url = f.metrics_url ? *f.metrics_url : DefaultMetricsUrl(server);
  if (f.interval) {
    auto ns = ParseDurationNanos(*f.interval);
    if (!ns.ok() || *ns < 100'000'000) {
      return absl::InvalidArgumentError(
          "--interval: want a duration of at least 100ms, got " + *f.interval);
    }
    top->interval_ns = *ns;
  }
  int64_t jobs = 10;
  if (f.jobs && (!absl::SimpleAtoi(*f.jobs, &jobs) || jobs < 0)) {
    return absl::InvalidArgumentError("--jobs: want N >= 0, got " + *f.jobs);
  }
  top->worst_jobs = static_cast<size_t>(jobs);
  return absl::OkStatus();
}

}  // namespace

int RunTopCommand(const std::vector<std::string>& args,
                  CommandContext& context) {
  TopFlags f;
  FlagParser parser;
  parser.AddString("interval", "D", &f.interval, "refresh every D (2s)");
  parser.AddBool("once", &f.once, "print one screen, no escape codes, exit");
  parser.AddString("metrics_url", "URL", &f.metrics_url,
                   "goodputd's /metrics (default http://HOST:PORT+1/metrics)");
  parser.AddString("jobs", "N", &f.jobs, "worst jobs to list (10)");
  parser.AddBool("help", &f.help, "show this help and exit");
  std::vector<std::string> positional;
  if (auto code = ParseOrExit(kPrefix,
                              "Usage: goodputctl --server=HOST:PORT top "
                              "[FLAGS]\n",
                              parser, f.help, args, &positional, context)) {
    return *code;
  }
  TopContext top;
  absl::Status s = ToContext(f, *context.server, &top);
  if (!s.ok()) return UsageError(context, kPrefix, s.message());
  absl::StatusOr<ReportFetcher> fetch = MakeFetcher(context);
  if (!fetch.ok())
    return UsageError(context, kPrefix, fetch.status().message());
  for (;;) {
    absl::StatusOr<std::string> screen = Screen(*fetch, top);
    if (f.once) {
      if (!screen.ok()) {
        context.err << kPrefix << ": " << screen.status().message() << "\n";
        return kExitUsage;
      }
      context.out << *screen;
      return kExitOk;
    }
    context.out << kClearHome
                << (screen.ok() ? *screen
                                : absl::StrCat(kPrefix, ": ",
                                               screen.status().message(), "\n"))
                << std::flush;
    std::this_thread::sleep_for(std::chrono::nanoseconds(top.interval_ns));
  }
}

}  // namespace goodput::cli
