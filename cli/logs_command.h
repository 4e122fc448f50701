#ifndef GOODPUT_CLI_LOGS_COMMAND_H_
#define GOODPUT_CLI_LOGS_COMMAND_H_

#include <string>
#include <vector>

#include "cli/command.h"

namespace goodput::cli {

// `goodputctl logs --log_profile=NAME|FILE --job_id=ID FILE... [--cri]
// [--start_time=T] [--year=Y] [--explain]`: reads training logs ("-" is
// the input stream) through a logs::LogMatcher and prints the events as
// SPEC JSON Lines, for `| goodputctl replay -`. With --explain it prints,
// for people writing profiles, which rule took each line, the events it
// made, and the near misses (lines holding a rule's literal text that no
// rule took). Bad lines go to err as "FILE:LINE: reason" and make the exit
// code 1; usage and I/O errors print one line and return 2. A CommandFn.
int RunLogsCommand(const std::vector<std::string>& args,
                   CommandContext& context);

}  // namespace goodput::cli

#endif  // GOODPUT_CLI_LOGS_COMMAND_H_
