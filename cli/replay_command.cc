#include "cli/replay_command.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "report/catalog_file.h"
#include "report/replay.h"
#include "report/report_json.h"
#include "report/report_table.h"
#include "util/flags.h"
#include "util/time_format.h"

namespace goodput::cli {
namespace {

constexpr char kPrefix[] = "goodputctl replay";
constexpr size_t kMaxPrintedErrors = 100;

struct ReplayFlags {
  bool help = false;
  bool json = false;
  std::optional<std::string> as_of, since, stall_after, catalog;
};

void RegisterFlags(ReplayFlags* f, FlagParser* parser) {
  parser->AddBool("json", &f->json, "print the report as one JSON object");
  parser->AddString("as_of", "T", &f->as_of,
                    "use events at or before T and report as of T "
                    "(RFC 3339; default: the latest event)");
  parser->AddString("since", "T", &f->since,
                    "report the window [T, as_of] (RFC 3339)");
  parser->AddString("stall_after", "D", &f->stall_after,
                    "in-flight step time more than D after a job's last "
                    "event is idle (default 10m)");
  parser->AddString("catalog", "FILE", &f->catalog,
                    "accelerator peaks to add or override: JSON "
                    "{\"NAME\": {\"peak_flops\": F, "
                    "\"peak_bytes_per_second\": B}} per chip");
  parser->AddBool("help", &f->help, "show this help and exit");
}

constexpr absl::string_view kUsage =
    "Usage: goodputctl replay FILE... [FLAGS]\n\n"
    "Replays JSON Lines event logs offline (no server) and prints a "
    "goodput report\n(a table, or with --json the SPEC section 4 object). "
    "FILE '-' reads stdin.\nBad lines are printed to stderr as "
    "FILE:LINE: reason; the report is still printed.\n";
constexpr absl::string_view kEpilogue =
    "\nExit status: 0 ok; 1 some lines were bad; 2 usage or I/O error.\n";

// The whole file `path`, or an error naming it.
absl::StatusOr<std::string> ReadFile(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) {
    return absl::NotFoundError(
        absl::StrCat("cannot read ", path, ": ", std::strerror(errno)));
  }
  std::string text((std::istreambuf_iterator<char>(file)),
                   std::istreambuf_iterator<char>());
  if (file.bad())
    return absl::DataLossError(absl::StrCat("cannot read ", path));
  return text;
}

absl::Status FlagError(absl::string_view flag, const absl::Status& status) {
  return absl::InvalidArgumentError(
      absl::StrCat("--", flag, ": ", status.message()));
}

absl::Status ParseTimes(const ReplayFlags& flags,
                        report::ReplayOptions* options) {
  if (flags.as_of) {
    absl::StatusOr<int64_t> t = ParseRfc3339(*flags.as_of);
    if (!t.ok()) return FlagError("as_of", t.status());
    options->as_of_ns = *t;
  }
  if (flags.since) {
    absl::StatusOr<int64_t> t = ParseRfc3339(*flags.since);
    if (!t.ok()) return FlagError("since", t.status());
    options->config.since_ns = *t;
  }
  if (flags.stall_after) {
    absl::StatusOr<int64_t> d = ParseDurationNanos(*flags.stall_after);
    if (!d.ok()) return FlagError("stall_after", d.status());
    options->config.stall_after_ns = *d;
  }
  return absl::OkStatus();
}

absl::StatusOr<report::ReplayOptions> BuildOptions(const ReplayFlags& flags) {
  report::ReplayOptions options;
  absl::Status status = ParseTimes(flags, &options);
  if (!status.ok()) return status;
  if (!flags.catalog) return options;
  absl::StatusOr<std::string> text = ReadFile(*flags.catalog);
  if (!text.ok()) return text.status();
  status = report::ApplyCatalogJson(*text, &options.config.catalog);
  if (!status.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(*flags.catalog, ": ", status.message()));
  }
  return options;
}

// Opens every input before reading any, so that a missing file fails fast.
absl::StatusOr<std::vector<std::unique_ptr<std::ifstream>>> OpenInputs(
    const std::vector<std::string>& paths) {
  std::vector<std::unique_ptr<std::ifstream>> files;
  for (const std::string& path : paths) {
    if (path == "-") {
      files.push_back(nullptr);
      continue;
    }
    struct stat st;
    if (stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
      return absl::InvalidArgumentError(
          absl::StrCat("cannot read ", path, ": is a directory"));
    }
    files.push_back(std::make_unique<std::ifstream>(path, std::ios::binary));
    if (!*files.back()) {
      return absl::NotFoundError(
          absl::StrCat("cannot read ", path, ": ", std::strerror(errno)));
    }
  }
  return files;
}

absl::StatusOr<report::ReplayResult> Replay(
    const std::vector<std::string>& paths, report::ReplayOptions options,
    std::istream& in) {
  auto files = OpenInputs(paths);
  if (!files.ok()) return files.status();
  report::Replayer replayer(std::move(options));
  for (size_t i = 0; i < paths.size(); ++i) {
    std::istream& stream = (*files)[i] ? *(*files)[i] : in;
    absl::Status status =
        replayer.AddInput(stream, (*files)[i] ? paths[i] : "<stdin>");
    if (!status.ok()) return status;
  }
  return replayer.Finish();
}

void PrintErrors(const report::ReplayResult& result, std::ostream& err) {
  const std::vector<std::string>& errors = result.errors;
  for (size_t i = 0; i < errors.size() && i < kMaxPrintedErrors; ++i) {
    err << errors[i] << "\n";
  }
  if (errors.size() > kMaxPrintedErrors) {
    err << kPrefix << ": " << errors.size() - kMaxPrintedErrors
        << " more bad lines not shown\n";
  }
  if (!errors.empty()) {
    err << kPrefix << ": " << result.stats.bad << " of " << result.stats.lines
        << " lines bad\n";
  }
}

absl::Status PrintReport(const core::FleetReport& report, bool json,
                         std::ostream& out) {
  if (!json) {
    out << report::FormatReportTable(report);
    return absl::OkStatus();
  }
  absl::StatusOr<std::string> text = report::WriteReportJson(report);
  if (!text.ok()) return text.status();
  out << *text;
  return absl::OkStatus();
}

int ReplayAndPrint(const std::vector<std::string>& paths, bool json,
                   report::ReplayOptions options, CommandContext& context) {
  absl::StatusOr<report::ReplayResult> result =
      Replay(paths, std::move(options), context.in);
  if (!result.ok()) return Fail(context, kPrefix, result.status());
  absl::Status printed = PrintReport(result->report, json, context.out);
  if (!printed.ok()) return Fail(context, kPrefix, printed);
  PrintErrors(*result, context.err);
  return result->stats.bad > 0 ? kExitBadInput : kExitOk;
}

}  // namespace

int RunReplayCommand(const std::vector<std::string>& args,
                     CommandContext& context) {
  ReplayFlags flags;
  FlagParser parser;
  RegisterFlags(&flags, &parser);
  std::vector<std::string> paths;
  if (auto code = ParseCommandLine(kPrefix, kUsage, kEpilogue, parser,
                                   flags.help, args, &paths, context)) {
    return *code;
  }
  if (auto code = RequireFiles(kPrefix, paths, context)) return *code;
  absl::StatusOr<report::ReplayOptions> options = BuildOptions(flags);
  if (!options.ok()) return Fail(context, kPrefix, options.status());
  return ReplayAndPrint(paths, flags.json, *std::move(options), context);
}

}  // namespace goodput::cli
