#ifndef GOODPUT_CLI_EMIT_COMMAND_H_
#define GOODPUT_CLI_EMIT_COMMAND_H_

#include <string>
#include <vector>

#include "cli/command.h"

namespace goodput::cli {

// `goodputctl emit KIND --job_id=ID [--field=value ...]`: builds one event
// (cli/emit_event.h), checks it, and writes it to the agent's socket
// (--socket, default $GOODPUT_SOCKET or /tmp/goodput-agent.sock; when the
// agent is unreachable, to a client spool file in --spool_dir), or with
// --server sends it to goodputd directly. --print only prints its JSON.
int RunEmitCommand(const std::vector<std::string>& args,
                   CommandContext& context);

}  // namespace goodput::cli

#endif  // GOODPUT_CLI_EMIT_COMMAND_H_
