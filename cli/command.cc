#include "cli/command.h"

namespace goodput::cli {

int UsageError(CommandContext& context, absl::string_view prefix,
               absl::string_view message) {
  context.err << prefix << ": " << message << " (try '" << prefix
              << " --help')\n";
  return kExitUsage;
}

int Fail(CommandContext& context, absl::string_view prefix,
         const absl::Status& status) {
  context.err << prefix << ": " << status.message() << "\n";
  return kExitUsage;
}

std::optional<int> ParseCommandLine(absl::string_view prefix,
                                    absl::string_view usage,
                                    absl::string_view epilogue,
                                    FlagParser& parser, const bool& help,
                                    const std::vector<std::string>& args,
                                    std::vector<std::string>* positional,
                                    CommandContext& context) {
  absl::Status parsed = parser.Parse(args, positional);
  if (!parsed.ok()) return UsageError(context, prefix, parsed.message());
  if (!help) return std::nullopt;
  context.out << usage << "\nFlags:\n" << parser.Help() << epilogue;
  return kExitOk;
}

std::optional<int> RequireFiles(absl::string_view prefix,
                                const std::vector<std::string>& files,
                                CommandContext& context) {
  if (!files.empty()) return std::nullopt;
  return UsageError(context, prefix, "no input files (use - for stdin)");
}

}  // namespace goodput::cli
