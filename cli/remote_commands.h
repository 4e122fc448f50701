#ifndef GOODPUT_CLI_REMOTE_COMMANDS_H_
#define GOODPUT_CLI_REMOTE_COMMANDS_H_

#include <string>
#include <vector>

#include "cli/command.h"

namespace goodput::cli {

// `goodputctl --server=HOST:PORT report [--json] [--as_of=T] [--since=T]`:
// the server's report, the same shape as replay's. A CommandFn.
int RunReportCommand(const std::vector<std::string>& args,
                     CommandContext& context);

// `goodputctl --server=HOST:PORT send FILE... [--batch=N] [--timeout=D]`:
// decodes JSON Lines files ("-" = the input stream) and streams the events
// to the server as a fresh sender identity, resending after disconnects
// until every batch is acknowledged. Lines bad locally or rejected by the
// server are printed as FILE:LINE: reason and make the exit code 1.
int RunSendCommand(const std::vector<std::string>& args,
                   CommandContext& context);

// `goodputctl --server=HOST:PORT dead-letters [--limit=N]`: rejected
// events with their reasons, oldest first.
int RunDeadLettersCommand(const std::vector<std::string>& args,
                          CommandContext& context);

}  // namespace goodput::cli

#endif  // GOODPUT_CLI_REMOTE_COMMANDS_H_
