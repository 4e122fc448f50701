#ifndef GOODPUT_CLI_GOODPUTCTL_H_
#define GOODPUT_CLI_GOODPUTCTL_H_

#include <istream>
#include <ostream>

namespace goodput::cli {

// The whole goodputctl program behind main(): parses the global flags,
// dispatches to the subcommand named by the first positional argument
// (a small table; today: replay) and returns the exit code (see
// command.h). Reads only `in` (for "-") and the files named on the command
// line; writes only `out` and `err`. Thread-compatible: no global state.
int RunGoodputctl(int argc, char** argv, std::istream& in, std::ostream& out,
                  std::ostream& err);

}  // namespace goodput::cli

#endif  // GOODPUT_CLI_GOODPUTCTL_H_
