#include "cli/top.h"

#include <chrono>
#include <functional>
#include <optional>
#include <thread>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "cli/remote_util.h"
#include "cli/shard_query.h"
#include "cli/top_view.h"
#include "proto/service.grpc.pb.h"
#include "util/flag_values.h"
#include "util/flags.h"
#include "util/time_format.h"

namespace goodput::cli {
namespace {

constexpr char kPrefix[] = "goodputctl top";
constexpr char kClearHome[] = "\033[H\033[2J";

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

// Fetches the summary of the server, or of every shard of a list.
using SummaryFetcher = std::function<absl::StatusOr<v1::SummaryResponse>()>;

// One screen: the rendered summary, or the reason there is none.
absl::StatusOr<std::string> Screen(const SummaryFetcher& fetch,
                                   TopContext& top) {
  absl::StatusOr<v1::SummaryResponse> summary = fetch();
  if (!summary.ok()) return summary.status();
  top.counters = IngestCounters(summary->ingest());
  return RenderTop(*summary, top);
}

struct TopFlags {
  bool help = false, once = false;
  std::optional<std::string> interval, metrics_url, jobs;
};

absl::Status ToContext(const TopFlags& f, const std::string& server,
                       TopContext* top) {
  top->server = server;
  top->metrics_url = f.metrics_url ? *f.metrics_url : DefaultMetricsUrl(server);
  absl::Duration interval = absl::Nanoseconds(top->interval_ns);
  absl::Status s = SetDurationFlag("interval", f.interval,
                                   absl::Milliseconds(100), &interval);
  top->interval_ns = absl::ToInt64Nanoseconds(interval);
  int64_t jobs = 10;
  if (s.ok()) s = SetIntFlag("jobs", f.jobs, 0, kNoMax, &jobs);
  top->worst_jobs = static_cast<size_t>(jobs);
  return s;
}

}  // namespace

int RunTopCommand(const std::vector<std::string>& args,
                  CommandContext& context) {
  TopFlags f;
  FlagParser parser;
  parser.AddString("interval", "D", &f.interval, "refresh every D (2s)");
  parser.AddBool("once", &f.once, "print one screen, no escape codes, exit");
  parser.AddString("metrics_url", "URL", &f.metrics_url,
                   "goodputd's /metrics, shown for Prometheus and curl "
                   "(default http://HOST:PORT+1/metrics; not read)");
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
  absl::StatusOr<ShardMap> shards = ShardList(context);
  if (!shards.ok())
    return UsageError(context, kPrefix, shards.status().message());
  v1::SummaryRequest request;
  request.set_worst_jobs(static_cast<uint32_t>(top.worst_jobs));
  const SummaryFetcher fetch = [&shards, &context, request] {
    return FetchSummary(*shards, context.tls, request);
  };
  for (;;) {
    absl::StatusOr<std::string> screen = Screen(fetch, top);
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
