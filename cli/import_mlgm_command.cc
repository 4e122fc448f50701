#include "cli/import_mlgm_command.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "importer/import_mlgm.h"
#include "importer/import_mlgm_json.h"
#include "nlohmann/json.hpp"
#include "util/flag_values.h"
#include "util/flags.h"
#include "util/time_format.h"

namespace goodput::cli {
namespace {

using importer::EventJsonLine;
using importer::MlgmConverter;
using importer::MlgmOptions;
using importer::MlgmResult;

constexpr char kPrefix[] = "goodputctl import-mlgm";
constexpr size_t kMaxPrintedErrors = 100;

struct ImportFlags {
  bool help = false;
  bool skip_bad = false;
  bool blocking_data_loading = false;
  std::optional<std::string> job_id, chips, min_chips, accelerator, out,
      exclude;
};

void RegisterFlags(ImportFlags* f, FlagParser* parser) {
  parser->AddString("job_id", "ID", &f->job_id,
                    "job id of every entry (default: each entry's job_name; "
                    "the entries must then name one job)");
  parser->AddString("chips", "N", &f->chips,
                    "start each job with job_submitted of N chips (else the "
                    "job has no chip weight)");
  parser->AddString("min_chips", "M", &f->min_chips,
                    "make that job_submitted elastic with min_chips M "
                    "(needs --chips; default for a log with slice counts: "
                    "one slice)");
  parser->AddString("accelerator", "A", &f->accelerator,
                    "accelerator of that job_submitted, e.g. tpu-v5p "
                    "(needs --chips)");
  parser->AddString("exclude", "START/END,...", &f->exclude,
                    "RFC 3339 intervals that do not count: one JOB "
                    "exclusion event each per job (the library's "
                    "exclusion_intervals)");
  parser->AddString("out", "FILE", &f->out,
                    "write the events to FILE (default: stdout)");
  parser->AddBool("skip_bad", &f->skip_bad,
                  "convert the good entries and skip bad ones (default: "
                  "write nothing if any entry is bad)");
  parser->AddBool("blocking_data_loading", &f->blocking_data_loading,
                  "count data loading inside the step loop as DATA_WAIT "
                  "(default: step time, as the library does)");
  parser->AddBool("help", &f->help, "show this help and exit");
}

constexpr absl::string_view kUsage =
    "Usage: goodputctl import-mlgm FILE... [FLAGS]\n\n"
    "Converts ml-goodput-measurement (ml_goodput_measurement) log entries "
    "into goodput\nJSON Lines. Input: one entry per line, the library's "
    "payload or a Cloud Logging\nLogEntry with jsonPayload, or a JSON "
    "array of them (gcloud logging read\n--format=json). FILE '-' reads "
    "stdin. See docs/migrating.md.\n";
constexpr absl::string_view kEpilogue =
    "\nExit status: 0 ok (also when --skip_bad skipped entries); 1 some "
    "entries were\nbad and nothing was written; 2 usage or I/O error.\n";

// "START/END,START/END": RFC 3339 intervals with END after START.
absl::Status ParseExclusions(absl::string_view text,
                             std::vector<std::pair<int64_t, int64_t>>* out) {
  for (absl::string_view item : absl::StrSplit(text, ',', absl::SkipEmpty())) {
    std::vector<absl::string_view> ends = absl::StrSplit(item, '/');
    absl::StatusOr<int64_t> start = ParseRfc3339(ends[0]);
    absl::StatusOr<int64_t> end = ends.size() == 2
                                      ? ParseRfc3339(ends[1])
                                      : absl::InvalidArgumentError("no END");
    if (!start.ok() || !end.ok() || *end <= *start) {
      return absl::InvalidArgumentError(
          absl::StrCat("--exclude: each interval must be START/END in RFC "
                       "3339 with END after START, got '",
                       item, "'"));
    }
    out->emplace_back(*start, *end);
  }
  return absl::OkStatus();
}

absl::StatusOr<MlgmOptions> BuildOptions(const ImportFlags& flags) {
  MlgmOptions options;
  options.job_id = flags.job_id;
  options.blocking_data_loading = flags.blocking_data_loading;
  if (flags.job_id && flags.job_id->empty()) {
    return absl::InvalidArgumentError("--job_id: must not be empty");
  }
  if (absl::Status s =
          SetIntFlag("chips", flags.chips, 1, kNoMax, &options.chips);
      !s.ok()) {
    return s;
  }
  if (flags.min_chips && !flags.chips) {
    return absl::InvalidArgumentError("--min_chips: needs --chips");
  }
  if (absl::Status s = SetIntFlag("min_chips", flags.min_chips, 1,
                                  options.chips, &options.min_chips);
      !s.ok()) {
    return s;
  }
  if (flags.accelerator && !flags.chips) {
    return absl::InvalidArgumentError("--accelerator: needs --chips");
  }
  options.accelerator = flags.accelerator.value_or("");
  if (flags.exclude) {
    absl::Status s = ParseExclusions(*flags.exclude, &options.exclusions);
    if (!s.ok()) return s;
  }
  return options;
}

absl::StatusOr<std::string> ReadInput(const std::string& path,
                                      std::istream& in) {
  struct stat st;
  if (path != "-" && stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot read ", path, ": is a directory"));
  }
  std::ifstream file;
  if (path != "-") file.open(path, std::ios::binary);
  std::istream& stream = path == "-" ? in : file;
  if (!stream) {
    return absl::NotFoundError(
        absl::StrCat("cannot read ", path, ": ", std::strerror(errno)));
  }
  std::string text((std::istreambuf_iterator<char>(stream)),
                   std::istreambuf_iterator<char>());
  if (stream.bad()) return absl::DataLossError("cannot read " + path);
  return text;
}

// A whole-file JSON array (gcloud's --format=json): one entry per element.
void AddArray(const std::string& name, const std::string& text,
              MlgmConverter* converter) {
  nlohmann::json array = nlohmann::json::parse(text, nullptr, false);
  if (array.is_discarded() || !array.is_array()) {
    converter->AddBadEntry(name + ":1",
                           "entry: the file starts with '[' but is not one "
                           "JSON array of entries");
    return;
  }
  for (size_t i = 0; i < array.size(); ++i) {
    converter->AddEntry(array[i], absl::StrCat(name, ":entry ", i + 1));
  }
}

void AddText(const std::string& name, const std::string& text,
             MlgmConverter* converter) {
  absl::string_view rest = absl::StripLeadingAsciiWhitespace(text);
  if (!rest.empty() && rest.front() == '[') {
    AddArray(name, text, converter);
    return;
  }
  int64_t line_number = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++line_number;
    converter->AddLine(line, absl::StrCat(name, ":", line_number));
  }
}

absl::StatusOr<MlgmResult> Convert(const std::vector<std::string>& paths,
                                   MlgmOptions options, std::istream& in) {
  MlgmConverter converter(std::move(options));
  for (const std::string& path : paths) {
    absl::StatusOr<std::string> text = ReadInput(path, in);
    if (!text.ok()) return text.status();
    AddText(path == "-" ? "<stdin>" : path, *text, &converter);
  }
  return converter.Finish();
}

void PrintErrors(const MlgmResult& result, bool skipped, std::ostream& err) {
  for (size_t i = 0; i < result.errors.size() && i < kMaxPrintedErrors; ++i) {
    err << result.errors[i] << "\n";
  }
  if (result.errors.size() > kMaxPrintedErrors) {
    err << kPrefix << ": " << result.errors.size() - kMaxPrintedErrors
        << " more bad entries not shown\n";
  }
  err << kPrefix << ": " << result.bad << " of " << result.entries
      << " entries bad; "
      << (skipped ? "skipped them (--skip_bad)"
                  : "nothing written (--skip_bad converts the rest)")
      << "\n";
}

absl::Status WriteEvents(const MlgmResult& result,
                         const std::optional<std::string>& out_path,
                         std::ostream& out) {
  std::ofstream file;
  if (out_path) file.open(*out_path, std::ios::binary | std::ios::trunc);
  std::ostream& stream = out_path ? file : out;
  for (const v1::Event& event : result.events) {
    stream << EventJsonLine(event) << "\n";
  }
  stream.flush();
  if (!stream) {
    return absl::DataLossError(absl::StrCat("cannot write ",
                                            out_path.value_or("stdout"), ": ",
                                            std::strerror(errno)));
  }
  return absl::OkStatus();
}

// What became of the elastic slice counts (docs/migrating.md, "Elastic
// jobs"): active_slices is never imported.
void PrintElastic(const MlgmResult& result, std::ostream& err) {
  if (result.slice_allocations > 0) {
    err << kPrefix << ": " << result.slice_allocations
        << " slice-count records became allocations (active_slices not "
           "imported)\n";
  }
  for (const auto& [reason, n] : result.dropped) {
    err << kPrefix << ": " << n << " slice-count records dropped: " << reason
        << "\n";
  }
}

int ConvertAndWrite(const std::vector<std::string>& paths,
                    const ImportFlags& flags, MlgmOptions options,
                    CommandContext& context) {
  absl::StatusOr<MlgmResult> result =
      Convert(paths, std::move(options), context.in);
  if (!result.ok()) return Fail(context, kPrefix, result.status());
  if (result->duplicates > 0) {
    context.err << kPrefix << ": " << result->duplicates
                << " repeated entries applied once\n";
  }
  PrintElastic(*result, context.err);
  if (result->bad > 0) PrintErrors(*result, flags.skip_bad, context.err);
  if (result->bad > 0 && !flags.skip_bad) return kExitBadInput;
  absl::Status written = WriteEvents(*result, flags.out, context.out);
  if (!written.ok()) return Fail(context, kPrefix, written);
  return kExitOk;
}

}  // namespace

int RunImportMlgmCommand(const std::vector<std::string>& args,
                         CommandContext& context) {
  ImportFlags flags;
  FlagParser parser;
  RegisterFlags(&flags, &parser);
  std::vector<std::string> paths;
  if (auto code = ParseCommandLine(kPrefix, kUsage, kEpilogue, parser,
                                   flags.help, args, &paths, context)) {
    return *code;
  }
  if (auto code = RequireFiles(kPrefix, paths, context)) return *code;
  absl::StatusOr<MlgmOptions> options = BuildOptions(flags);
  if (!options.ok())
    return UsageError(context, kPrefix, options.status().message());
  return ConvertAndWrite(paths, flags, *std::move(options), context);
}

}  // namespace goodput::cli
