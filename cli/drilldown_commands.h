#ifndef GOODPUT_CLI_DRILLDOWN_COMMANDS_H_
#define GOODPUT_CLI_DRILLDOWN_COMMANDS_H_

#include <string>
#include <vector>

#include "cli/command.h"

namespace goodput::cli {

// The drill-down commands (docs/cli.md), each a CommandFn that queries
// --server and prints its table, or with --json its JSON object.

// `goodputctl --server=HOST:PORT jobs [--accelerator=A] [--workload=W]
// [--framework=F] [--size=S] [--label=K=V,...] [--state=S] [--limit=N]
// [--as_of=T] [--since=T] [--json]`: jobs ranked by lost chip-hours.
int RunJobsCommand(const std::vector<std::string>& args,
                   CommandContext& context);

// `goodputctl --server=HOST:PORT job ID [--windows=5m,1h,24h]
// [--timeline=N] [--as_of=T] [--json]`: one job's breakdown, ratios per
// window, at-risk work, progress and timeline.
int RunJobCommand(const std::vector<std::string>& args,
                  CommandContext& context);

// `goodputctl --server=HOST:PORT fleet [--by=DIMENSION] [--as_of=T]
// [--since=T] [--json]`: fleet totals, badput, one dimension's segments
// and the worst jobs.
int RunFleetCommand(const std::vector<std::string>& args,
                    CommandContext& context);

}  // namespace goodput::cli

#endif  // GOODPUT_CLI_DRILLDOWN_COMMANDS_H_
