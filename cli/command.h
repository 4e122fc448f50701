#ifndef GOODPUT_CLI_COMMAND_H_
#define GOODPUT_CLI_COMMAND_H_

#include <istream>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "cli/tls_flags.h"
#include "util/flags.h"

namespace goodput::cli {

// Exit codes of goodputctl.
inline constexpr int kExitOk = 0;
inline constexpr int kExitBadInput = 1;  // some input lines were bad
inline constexpr int kExitUsage = 2;     // usage or I/O error: no report

// What a goodputctl subcommand runs with: the process's streams (not owned;
// they outlive the command). Future global flags (e.g. --server) go here.
// Plain data; not thread-safe.
struct CommandContext {
  std::istream& in;
  std::ostream& out;
  std::ostream& err;
  std::optional<std::string> server;  // global --server=HOST:PORT
  TlsFlagValues tls;                  // global --tls_* and --auth_token_file
};

// A subcommand: parses its own arguments (those after its name) and returns
// the process exit code.
using CommandFn = int (*)(const std::vector<std::string>& args,
                          CommandContext& context);

// Writes "`prefix`: `message` (try '`prefix` --help')" as one line to
// context.err and returns kExitUsage.
int UsageError(CommandContext& context, absl::string_view prefix,
               absl::string_view message);

// Writes "`prefix`: `status`'s message" as one line to context.err and
// returns kExitUsage: a command that cannot produce its output.
int Fail(CommandContext& context, absl::string_view prefix,
         const absl::Status& status);

// The start every subcommand shares: parses `args` with `parser` (whose
// --help flag sets `help`), positional arguments into `positional`. A bad
// flag is a UsageError; --help writes `usage`, "Flags:", the flag list and
// `epilogue` to context.out. Returns the exit code to stop with, or
// nullopt to go on.
std::optional<int> ParseCommandLine(absl::string_view prefix,
                                    absl::string_view usage,
                                    absl::string_view epilogue,
                                    FlagParser& parser, const bool& help,
                                    const std::vector<std::string>& args,
                                    std::vector<std::string>* positional,
                                    CommandContext& context);

// A UsageError unless `files` names at least one input ('-' is stdin).
std::optional<int> RequireFiles(absl::string_view prefix,
                                const std::vector<std::string>& files,
                                CommandContext& context);

}  // namespace goodput::cli

#endif  // GOODPUT_CLI_COMMAND_H_
