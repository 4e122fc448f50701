#ifndef GOODPUT_CLI_TOP_H_
#define GOODPUT_CLI_TOP_H_

#include <string>
#include <vector>

#include "cli/command.h"

namespace goodput::cli {

// `goodputctl --server=HOST:PORT top [--interval=2s] [--once]
// [--metrics_url=URL] [--jobs=N]`: a refreshing terminal view like top(1)
// built on Query.Report (see top_view.h for what it shows). Clears the
// screen and redraws every --interval until interrupted; --once prints one
// screen without escape codes and exits (for tests and scripts). A
// CommandFn.
int RunTopCommand(const std::vector<std::string>& args,
                  CommandContext& context);

}  // namespace goodput::cli

#endif  // GOODPUT_CLI_TOP_H_
