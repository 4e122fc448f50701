#include "cli/goodputctl.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "cli/command.h"
#include "cli/drilldown_commands.h"
#include "cli/emit_command.h"
#include "cli/import_mlgm_command.h"
#include "cli/logs_command.h"
#include "cli/remote_commands.h"
#include "cli/replay_command.h"
#include "cli/top.h"
#include "util/flags.h"
#include "util/version.h"

namespace goodput::cli {
namespace {

struct Command {
  const char* name;
  const char* summary;
  CommandFn run;
};

// Subcommands, in help order. To come (SPEC section 6): emit (issue 5).
constexpr Command kCommands[] = {
    {"replay", "offline report from JSON Lines event logs (no server)",
     RunReplayCommand},
    {"report", "the server's report (--server), same shape as replay",
     RunReportCommand},
    {"send", "push JSON Lines event files to a server (--server)",
     RunSendCommand},
    {"jobs", "jobs ranked by lost chip-hours, filtered by segment (--server)",
     RunJobsCommand},
    {"job", "one job: breakdown, ratios per window, timeline (--server)",
     RunJobCommand},
    {"fleet", "fleet totals, badput and segments --by=DIMENSION (--server)",
     RunFleetCommand},
    {"dead-letters", "events the server rejected, with reasons (--server)",
     RunDeadLettersCommand},
    {"import-mlgm", "ml-goodput-measurement logs -> JSON Lines events",
     RunImportMlgmCommand},
    {"logs", "training logs -> JSON Lines events via a --log_profile",
     RunLogsCommand},
    {"top", "live fleet view, refreshing like top (--server)", RunTopCommand},
    {"emit", "send one event (scheduler hooks) via the agent", RunEmitCommand},
};

constexpr char kProgram[] = "goodputctl";

const Command* FindCommand(absl::string_view name) {
  for (const Command& command : kCommands) {
    if (name == command.name) return &command;
  }
  return nullptr;
}

std::string Help(const FlagParser& flags) {
  std::string out = absl::StrCat(
      "goodputctl: ML Productivity Goodput (MPG = SG x RG x PG) tool.\n\n"
      "Usage: goodputctl [FLAGS] COMMAND [ARGS...]\n\nCommands:\n");
  for (const Command& command : kCommands) {
    absl::StrAppendFormat(&out, "  %-13s %s\n", command.name, command.summary);
  }
  absl::StrAppend(&out, "\nFlags:\n", flags.Help(),
                  "\nRun 'goodputctl COMMAND --help' for its flags.\n"
                  "Exit status: 0 ok; 1 some input lines were bad (the report "
                  "is still printed); 2 usage or I/O error.\n");
  return out;
}

}  // namespace

int RunGoodputctl(int argc, char** argv, std::istream& in, std::ostream& out,
                  std::ostream& err) {
  CommandContext context{in, out, err};
  std::vector<std::string> args(argv + std::min(argc, 1), argv + argc);
  bool help = false, version = false;
  FlagParser flags(/*stop_at_positional=*/true);
  flags.AddBool("help", &help, "show this help and exit");
  flags.AddBool("version", &version, "print the version and exit");
  flags.AddString(
      "server", "HOST:PORT[,...]", &context.server,
      "goodputd's gRPC address, for report, send, jobs, job, fleet, "
      "dead-letters, top; a list of shards is merged (docs/scaling.md)");
  AddTlsFlags(&flags, &context.tls);
  std::vector<std::string> rest;
  absl::Status parsed = flags.Parse(args, &rest);
  if (!parsed.ok()) return UsageError(context, kProgram, parsed.message());
  if (help) {
    out << Help(flags);
    return kExitOk;
  }
  if (version) {
    out << VersionLine(kProgram) << "\n";
    return kExitOk;
  }
  if (rest.empty()) return UsageError(context, kProgram, "missing command");
  const Command* command = FindCommand(rest[0]);
  if (command == nullptr) {
    return UsageError(context, kProgram,
                      absl::StrCat("unknown command '", rest[0], "'"));
  }
  rest.erase(rest.begin());
  return command->run(rest, context);
}

}  // namespace goodput::cli
