#ifndef GOODPUT_CLI_IMPORT_MLGM_COMMAND_H_
#define GOODPUT_CLI_IMPORT_MLGM_COMMAND_H_

#include <string>
#include <vector>

#include "cli/command.h"

namespace goodput::cli {

// `goodputctl import-mlgm FILE... [--job_id=ID] [--chips=N
// --accelerator=A] [--out=FILE] [--skip_bad] [--blocking_data_loading]`:
// converts ml-goodput-measurement log entries (JSON Lines of bare payloads
// or Cloud Logging LogEntry objects, or one JSON array of them as
// `gcloud logging read --format=json` prints) into goodput JSON Lines on
// `out` or --out. Bad entries go to err as "FILE:LINE: field: reason" (at
// most 100); without --skip_bad nothing is written and the exit code is 1,
// with it the rest is converted, the count goes to err, and the exit code
// is 0. Usage and I/O errors print one line and return 2. A CommandFn.
int RunImportMlgmCommand(const std::vector<std::string>& args,
                         CommandContext& context);

}  // namespace goodput::cli

#endif  // GOODPUT_CLI_IMPORT_MLGM_COMMAND_H_
