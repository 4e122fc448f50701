#ifndef GOODPUT_UTIL_FLAG_FILE_H_
#define GOODPUT_UTIL_FLAG_FILE_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace goodput {

// Flags files (--flagfile=PATH) for the daemons: one flag per line, spelled
// as on the command line ("--name=value", "--name value" or "--name" for a
// switch); blank lines and lines whose first non-blank character is '#' are
// skipped; the value is the rest of the line, trimmed, with no quoting (a
// '#' inside a value is part of it). Free functions; thread-safe.

// One flag of a flags file and the line it came from (1-based).
struct FlagFileLine {
  int line = 0;
  std::string arg;  // "--name=value" or "--name"
};

// Checks one flag line, e.g. by parsing it alone; its error message is
// prefixed with the file and line.
using FlagLineCheck = std::function<absl::Status(const std::string& arg)>;

// The flags of the text `contents` of the file `path` (for messages). A line
// that is not a flag, or that names --flagfile (no nesting), is an error
// "PATH:LINE: ...".
absl::StatusOr<std::vector<FlagFileLine>> ParseFlagFile(
    const std::string& path, const std::string& contents);

// Replaces "--flagfile=PATH" (or "--flagfile PATH") in `args` by the flags
// of that file, placed before every other argument so that the command line
// overrides the file (the parsers keep a flag's last value). Each file line
// must pass `check`; errors name the file and line ("PATH:LINE: unknown flag
// --x"). At most one --flagfile; without one, returns `args` unchanged.
absl::StatusOr<std::vector<std::string>> ExpandFlagFile(
    const std::vector<std::string>& args, const FlagLineCheck& check);

}  // namespace goodput

#endif  // GOODPUT_UTIL_FLAG_FILE_H_
