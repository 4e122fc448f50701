#include "cli/logs_command.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "clients/cpp/event_json.h"
#include "logs/builtin_profiles.h"
#include "logs/cri_line.h"
#include "logs/log_matcher.h"
#include "logs/rule_hint.h"
#include "util/clock.h"
#include "util/flag_values.h"
#include "util/flags.h"
#include "util/time_format.h"

namespace goodput::cli {
namespace {

constexpr char kPrefix[] = "goodputctl logs";
constexpr size_t kMaxPrintedErrors = 100;
constexpr size_t kExplainWidth = 160;

struct LogsFlags {
  bool help = false;
  bool cri = false;
  bool explain = false;
  std::optional<std::string> log_profile, job_id, start_time, year;
};

void RegisterFlags(LogsFlags* f, FlagParser* parser) {
  parser->AddString("log_profile", "NAME|FILE", &f->log_profile,
                    "a built-in profile (megatron, nemo, torchtitan, maxtext, "
                    "hf_trainer, deepspeed) or a YAML profile file");
  parser->AddString("job_id", "ID", &f->job_id, "job id of every event");
  parser->AddBool("cri", &f->cri,
                  "lines are Kubernetes container log lines (CRI: TIME "
                  "STREAM P|F MESSAGE); their time is the read time");
  parser->AddString("start_time", "T", &f->start_time,
                    "time of matched lines before the first timestamp "
                    "(RFC 3339; default: such lines are errors)");
  parser->AddString("year", "Y", &f->year,
                    "year of timestamps that have none (absl logging); "
                    "default: the year of --start_time, else this year");
  parser->AddBool("explain", &f->explain,
                  "dry run: which rule took each line, its events, and near "
                  "misses, instead of the events");
  parser->AddBool("help", &f->help, "show this help and exit");
}

constexpr absl::string_view kUsage =
    "Usage: goodputctl logs --log_profile=NAME|FILE --job_id=ID FILE... "
    "[FLAGS]\n\n"
    "Turns training logs into goodput events (SPEC JSON Lines) through a "
    "log profile,\nin the order of the files; FILE '-' reads stdin. Report "
    "on them offline with\n  goodputctl logs ... | goodputctl replay -\n"
    "Profiles and writing one: docs/adapters.md, \"From logs\".\n";
constexpr absl::string_view kEpilogue =
    "\nExit status: 0 ok; 1 some lines were bad (the rest is printed); 2 "
    "usage or I/O error.\n";

// What the command reads with and how it counts.
struct LogsRun {
  const logs::LogProfile& profile;
  logs::LogMatcher& matcher;
  const LogsFlags& flags;
  CommandContext& context;
  std::vector<std::string> hints;  // per rule, for --explain
  std::vector<int64_t> taken;      // per rule
  int64_t lines = 0, near = 0, bad = 0;
};

absl::StatusOr<logs::MatcherOptions> BuildOptions(const LogsFlags& flags,
                                                  int64_t* start_ns) {
  if (!flags.log_profile)
    return absl::InvalidArgumentError("needs --log_profile");
  if (!flags.job_id || flags.job_id->empty()) {
    return absl::InvalidArgumentError("needs --job_id (not empty)");
  }
  logs::MatcherOptions options;
  options.job_id = *flags.job_id;
  RealClock clock;
  int64_t year_of = clock.NowNanos();
  if (flags.start_time) {
    absl::StatusOr<int64_t> t = ParseRfc3339(*flags.start_time);
    if (!t.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--start_time: not RFC 3339: '", *flags.start_time, "'"));
    }
    *start_ns = year_of = *t;
  }
  options.default_year = static_cast<int>(
      absl::ToCivilYear(absl::FromUnixNanos(year_of), absl::UTCTimeZone())
          .year());
  absl::Status s =
      SetIntFlag("year", flags.year, 1970, 9999, &options.default_year);
  if (!s.ok()) return s;
  return options;
}

void PrintBad(LogsRun& run, const std::string& where,
              const absl::Status& status) {
  if (++run.bad <= static_cast<int64_t>(kMaxPrintedErrors)) {
    run.context.err << where << ": " << status.message() << "\n";
  }
}

std::string Shorten(absl::string_view line) {
  if (line.size() <= kExplainWidth) return std::string(line);
  return absl::StrCat(line.substr(0, kExplainWidth), "...");
}

void ExplainNear(LogsRun& run, const std::string& where,
                 absl::string_view line) {
  for (size_t i = 0; i < run.hints.size(); ++i) {
    if (run.hints[i].empty() || !absl::StrContains(line, run.hints[i])) {
      continue;
    }
    ++run.near;
    run.context.out << where << ": near rule " << i + 1 << " ("
                    << logs::LogRuleKindName(run.profile.rules[i].kind)
                    << "): has '" << run.hints[i]
                    << "' but the pattern does not match: " << Shorten(line)
                    << "\n";
  }
}

void Explain(LogsRun& run, const std::string& where, absl::string_view line,
             const std::vector<v1::Event>& events, int64_t dropped_before) {
  const int rule = run.matcher.last_rule();
  if (rule < 0) return ExplainNear(run, where, line);
  std::ostream& out = run.context.out;
  out << where << ": rule " << rule + 1 << " ("
      << logs::LogRuleKindName(run.profile.rules[rule].kind) << ")";
  if (run.matcher.dropped() > dropped_before)
    out << " -> dropped: after the end";
  if (events.empty()) out << "\n";
  for (const v1::Event& e : events) {
    std::string json = client::EventToJsonLine(e);
    out << " -> " << json;  // ends in '\n'
  }
}

void AddLine(LogsRun& run, const std::string& where, absl::string_view line,
             int64_t read_ns) {
  ++run.lines;
  std::vector<v1::Event> events;
  const int64_t dropped = run.matcher.dropped();
  absl::Status s = run.matcher.Match(line, read_ns, &events);
  if (!s.ok()) return PrintBad(run, where, s);
  if (run.matcher.last_rule() >= 0) ++run.taken[run.matcher.last_rule()];
  if (run.flags.explain) return Explain(run, where, line, events, dropped);
  for (const v1::Event& e : events) {
    run.context.out << client::EventToJsonLine(e);
  }
}

void ReadStream(LogsRun& run, std::istream& in, const std::string& name) {
  logs::CriJoiner joiner;
  std::string raw, line;
  int64_t number = 0;
  while (std::getline(in, raw)) {
    ++number;
    if (!raw.empty() && raw.back() == '\r') raw.pop_back();
    const std::string where = absl::StrCat(name, ":", number);
    if (!run.flags.cri) {
      AddLine(run, where, raw, logs::LogMatcher::kNoReadTime);
      continue;
    }
    int64_t read_ns = 0;
    absl::StatusOr<bool> done = joiner.Add(raw, &line, &read_ns);
    if (!done.ok()) PrintBad(run, where, done.status());
    if (done.ok() && *done) AddLine(run, where, line, read_ns);
  }
}

absl::Status ReadFile(LogsRun& run, const std::string& path) {
  if (path == "-") {
    ReadStream(run, run.context.in, "<stdin>");
    return run.context.in.bad() ? absl::DataLossError("cannot read stdin")
                                : absl::OkStatus();
  }
  std::ifstream file(path, std::ios::binary);
  if (!file) {
    return absl::NotFoundError(
        absl::StrCat("cannot read ", path, ": ", std::strerror(errno)));
  }
  ReadStream(run, file, path);
  if (file.bad()) return absl::DataLossError("cannot read " + path);
  return absl::OkStatus();
}

void PrintSummary(const LogsRun& run) {
  std::ostream& out = run.flags.explain ? run.context.out : run.context.err;
  if (!run.flags.explain && run.bad == 0) return;
  out << kPrefix << ": " << run.lines << " lines, " << run.bad << " bad";
  if (run.flags.explain) out << ", " << run.near << " near misses";
  out << "\n";
  if (run.bad > static_cast<int64_t>(kMaxPrintedErrors)) {
    out << kPrefix << ": " << run.bad - kMaxPrintedErrors
        << " more bad lines not shown\n";
  }
  if (!run.flags.explain) return;
  for (size_t i = 0; i < run.profile.rules.size(); ++i) {
    const logs::LogRule& rule = run.profile.rules[i];
    out << "  rule " << i + 1 << " (" << logs::LogRuleKindName(rule.kind)
        << "): " << run.taken[i] << " lines  '" << rule.pattern << "'\n";
  }
}

int Run(const std::vector<std::string>& paths, const LogsFlags& flags,
        logs::MatcherOptions options, int64_t start_ns,
        CommandContext& context) {
  absl::StatusOr<logs::LogProfile> profile =
      logs::LoadLogProfile(*flags.log_profile);
  if (!profile.ok()) return Fail(context, kPrefix, profile.status());
  options.initial_time_ns = start_ns;
  logs::LogMatcher matcher(*profile, std::move(options));
  LogsRun run{*profile, matcher, flags, context};
  run.taken.assign(profile->rules.size(), 0);
  for (const logs::LogRule& rule : profile->rules) {
    run.hints.push_back(logs::RuleHint(rule.pattern));
  }
  for (const std::string& path : paths) {
    absl::Status s = ReadFile(run, path);
    if (!s.ok()) return Fail(context, kPrefix, s);
  }
  PrintSummary(run);
  context.out.flush();
  return run.bad > 0 ? kExitBadInput : kExitOk;
}

}  // namespace

int RunLogsCommand(const std::vector<std::string>& args,
                   CommandContext& context) {
  LogsFlags flags;
  FlagParser parser;
  RegisterFlags(&flags, &parser);
  std::vector<std::string> paths;
  if (auto code = ParseCommandLine(kPrefix, kUsage, kEpilogue, parser,
                                   flags.help, args, &paths, context)) {
    return *code;
  }
  if (auto code = RequireFiles(kPrefix, paths, context)) return *code;
  int64_t start_ns = logs::LogMatcher::kNoReadTime;
  absl::StatusOr<logs::MatcherOptions> options = BuildOptions(flags, &start_ns);
  if (!options.ok()) {
    return UsageError(context, kPrefix, options.status().message());
  }
  return Run(paths, flags, *std::move(options), start_ns, context);
}

}  // namespace goodput::cli
