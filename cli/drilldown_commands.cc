#include "cli/drilldown_commands.h"

#include <optional>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "cli/remote_util.h"
#include "cli/shard_query.h"
#include "proto/service.grpc.pb.h"
#include "util/flag_values.h"
#include "util/flags.h"
#include "util/grpc_status.h"
#include "util/proto_time.h"
#include "util/time_format.h"

namespace goodput::cli {
namespace {

// Sets the request's as_of from --as_of, if given; an error names it.
template <typename Request>
absl::Status SetAsOf(const std::optional<std::string>& as_of,
                     Request* request) {
  if (!as_of) return absl::OkStatus();
  return TimeFlag("--as_of", as_of, request->mutable_as_of());
}

// Sets the request's since from --since, if given; an error names it.
template <typename Request>
absl::Status SetSince(const std::optional<std::string>& since,
                      Request* request) {
  if (!since) return absl::OkStatus();
  return TimeFlag("--since", since, request->mutable_since());
}

// Adds --label=K=V[,K=V...] to the request's segment filters.
absl::Status LabelFilters(const std::optional<std::string>& labels,
                          v1::JobsRequest* request) {
  if (!labels) return absl::OkStatus();
  for (absl::string_view pair : absl::StrSplit(*labels, ',')) {
    std::vector<std::string> kv = absl::StrSplit(pair, absl::MaxSplits('=', 1));
    if (kv.size() != 2 || kv[0].empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--label: want KEY=VALUE, got '", pair, "'"));
    }
    (*request->mutable_segments())["label:" + kv[0]] = kv[1];
  }
  return absl::OkStatus();
}

// Parses --windows=5m,1h,... into the request.
absl::Status WindowsFlag(const std::optional<std::string>& windows,
                         v1::JobRequest* request) {
  if (!windows) return absl::OkStatus();
  for (absl::string_view w : absl::StrSplit(*windows, ',')) {
    absl::StatusOr<int64_t> ns = ParseDurationNanos(w);
    if (!ns.ok() || *ns <= 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("--windows: want durations like 5m,1h, got '", w, "'"));
    }
    *request->add_windows() = NanosToDuration(*ns);
  }
  return absl::OkStatus();
}

// The segment flags of `jobs`: --accelerator= ... --size=.
struct SegmentFlags {
  std::optional<std::string> accelerator, workload, framework, size, label;

  void Register(FlagParser* parser) {
    parser->AddString("accelerator", "A", &accelerator, "only accelerator A");
    parser->AddString("workload", "W", &workload,
                      "only workload W (TRAINING, SERVING, ...)");
    parser->AddString("framework", "F", &framework, "only framework F");
    parser->AddString("size", "S", &size, "only size bucket S, e.g. '<=64'");
    parser->AddString("label", "K=V,...", &label, "only jobs with labels");
  }

  void Fill(v1::JobsRequest* request) const {
    auto& segments = *request->mutable_segments();
    if (accelerator) segments["accelerator"] = *accelerator;
    if (workload) segments["workload"] = *workload;
    if (framework) segments["framework"] = *framework;
    if (size) segments["size"] = *size;
  }
};

// The flags every drill-down command has: --as_of, --since (unless
// `with_since` is false), --json and --help.
struct CommonFlags {
  bool help = false, json = false;
  std::optional<std::string> as_of, since;

  void Register(FlagParser* parser, bool with_since) {
    parser->AddString("as_of", "T", &as_of, "as of T (default: now)");
    if (with_since) {
      parser->AddString("since", "T", &since, "only the window [T, as_of]");
    }
    parser->AddBool("json", &json, "print one JSON object");
    parser->AddBool("help", &help, "show this help and exit");
  }

  // Sets as_of and since of a request that has both; an error names the
  // flag.
  template <typename Request>
  absl::Status Fill(Request* request) const {
    absl::Status s = SetAsOf(as_of, request);
    if (s.ok()) s = SetSince(since, request);
    return s;
  }
};

// UsageError for the first of `positional`, if any; else nullopt.
std::optional<int> NoArguments(const std::string& prefix,
                               const std::vector<std::string>& positional,
                               CommandContext& context) {
  if (positional.empty()) return std::nullopt;
  return UsageError(context, prefix, "unexpected argument " + positional[0]);
}

}  // namespace

int RunJobsCommand(const std::vector<std::string>& args,
                   CommandContext& context) {
  const std::string prefix = "goodputctl jobs";
  std::optional<std::string> state, limit, sort;
  SegmentFlags segments;
  CommonFlags common;
  FlagParser parser;
  segments.Register(&parser);
  parser.AddString("state", "S", &state,
                   "only jobs in state S: QUEUED, RUNNING, RECOVERING, ENDED");
  parser.AddString("limit", "N", &limit,
                   "at most N jobs (default 20; 0 = all)");
  parser.AddString("sort", "ORDER", &sort,
                   "lost (default, most lost chip-hours first), job_id, "
                   "chips, mpg (lowest first) or at_risk");
  common.Register(&parser, /*with_since=*/true);
  std::vector<std::string> positional;
  if (auto code = ParseOrExit(
          prefix,
          "Usage: goodputctl --server=HOST:PORT jobs [FLAGS]\n"
          "Jobs ranked by lost chip-hours (badput x chips), worst first,\n"
          "or in the --sort order; filtered, sorted and cut on the server.\n",
          parser, common.help, args, &positional, context)) {
    return *code;
  }
  if (auto code = NoArguments(prefix, positional, context)) return *code;
  v1::JobsRequest request;
  request.set_limit(20);
  segments.Fill(&request);
  if (state) request.set_state(*state);
  if (sort) request.set_sort(*sort);
  uint32_t n = request.limit();
  absl::Status s = SetIntFlag("limit", limit, 0, UINT32_MAX, &n);
  if (s.ok()) s = LabelFilters(segments.label, &request);
  if (s.ok()) s = common.Fill(&request);
  if (!s.ok()) return UsageError(context, prefix, s.message());
  request.set_limit(n);
  absl::StatusOr<ShardMap> shards = ShardList(context);
  if (!shards.ok())
    return UsageError(context, prefix, shards.status().message());
  return PrintJobs(*shards, request, common.json, prefix, context);
}

int RunJobCommand(const std::vector<std::string>& args,
                  CommandContext& context) {
  const std::string prefix = "goodputctl job";
  std::optional<std::string> windows, timeline;
  CommonFlags common;
  FlagParser parser;
  parser.AddString("windows", "D,...", &windows,
                   "windows before as_of (default 5m,1h,24h; all time too)");
  parser.AddString("timeline", "N", &timeline,
                   "the last N timeline entries (default 200)");
  common.Register(&parser, /*with_since=*/false);
  std::vector<std::string> positional;
  if (auto code = ParseOrExit(
          prefix,
          "Usage: goodputctl --server=HOST:PORT job ID [FLAGS]\n"
          "One job: where its time went (badput first), SG/RG/PG/MPG per\n"
          "window, at-risk work, progress, and a timeline of its attempts.\n",
          parser, common.help, args, &positional, context)) {
    return *code;
  }
  if (positional.size() != 1) {
    return UsageError(context, prefix, "want exactly one job ID");
  }
  v1::JobRequest request;
  request.set_job_id(positional[0]);
  uint32_t n = 0;
  absl::Status s = SetIntFlag("timeline", timeline, 0, UINT32_MAX, &n);
  if (s.ok()) s = WindowsFlag(windows, &request);
  if (s.ok()) s = SetAsOf(common.as_of, &request);
  if (!s.ok()) return UsageError(context, prefix, s.message());
  request.set_timeline_limit(n);
  absl::StatusOr<ShardMap> shards = ShardList(context);
  if (!shards.ok())
    return UsageError(context, prefix, shards.status().message());
  return PrintJob(*shards, request, common.json, prefix, context);
}

int RunFleetCommand(const std::vector<std::string>& args,
                    CommandContext& context) {
  const std::string prefix = "goodputctl fleet";
  std::optional<std::string> by;
  CommonFlags common;
  FlagParser parser;
  parser.AddString("by", "DIMENSION", &by,
                   "accelerator (default), workload, framework, size or "
                   "label:KEY");
  common.Register(&parser, /*with_since=*/true);
  std::vector<std::string> positional;
  if (auto code = ParseOrExit(
          prefix,
          "Usage: goodputctl --server=HOST:PORT fleet [FLAGS]\n"
          "Fleet totals and ratios, where the chip-time went, the segments\n"
          "of one dimension (most lost first) and the worst jobs.\n",
          parser, common.help, args, &positional, context)) {
    return *code;
  }
  if (auto code = NoArguments(prefix, positional, context)) return *code;
  v1::FleetRequest request;
  if (by) request.set_by(*by);
  absl::Status s = common.Fill(&request);
  if (!s.ok()) return UsageError(context, prefix, s.message());
  absl::StatusOr<ShardMap> shards = ShardList(context);
  if (!shards.ok())
    return UsageError(context, prefix, shards.status().message());
  return PrintFleet(*shards, request, common.json, prefix, context);
}

}  // namespace goodput::cli
