#ifndef GOODPUT_CLI_REPLAY_COMMAND_H_
#define GOODPUT_CLI_REPLAY_COMMAND_H_

#include <string>
#include <vector>

#include "cli/command.h"

namespace goodput::cli {

// `goodputctl replay FILE... [--json] [--as_of=T] [--since=T]
// [--stall_after=D] [--catalog=FILE]`: replays JSON Lines files ("-" is
// the input stream) with a report::Replayer and prints the report as a table or
// JSON. Bad lines go to err as "FILE:LINE: reason" (at most 100, then a
// count); the report is still printed and the exit code is 1. Usage and
// I/O errors print one line and return 2. A CommandFn.
int RunReplayCommand(const std::vector<std::string>& args,
                     CommandContext& context);

}  // namespace goodput::cli

#endif  // GOODPUT_CLI_REPLAY_COMMAND_H_
