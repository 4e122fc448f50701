#ifndef GOODPUT_CLI_COMMAND_H_
#define GOODPUT_CLI_COMMAND_H_

#include <istream>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "cli/tls_flags.h"

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

}  // namespace goodput::cli

#endif  // GOODPUT_CLI_COMMAND_H_
