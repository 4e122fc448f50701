#include "util/flags.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/strip.h"
#include "util/flag_file.h"

namespace goodput {
namespace {

bool IsFlag(const std::string& arg) { return arg.size() > 1 && arg[0] == '-'; }

}  // namespace

void FlagParser::AddBool(absl::string_view name, bool* value,
                         absl::string_view help) {
  flags_.push_back({std::string(name), "", std::string(help), value, nullptr});
}

void FlagParser::AddString(absl::string_view name, absl::string_view value_name,
                           std::optional<std::string>* value,
                           absl::string_view help) {
  flags_.push_back({std::string(name), std::string(value_name),
                    std::string(help), nullptr, value});
}

const FlagParser::Flag* FlagParser::Find(absl::string_view name) const {
  for (const Flag& flag : flags_) {
    if (flag.name == name) return &flag;
  }
  return nullptr;
}

void FlagParser::AddFlagFile() { flag_file_ = true; }

absl::Status FlagParser::Parse(const std::vector<std::string>& args,
                               std::vector<std::string>* positional) const {
  if (!flag_file_) return ParseArgs(args, positional);
  auto expanded = ExpandFlagFile(args, [this](const std::string& arg) {
    std::vector<std::string> ignored;
    return ParseArgs({arg}, &ignored);
  });
  if (!expanded.ok()) return expanded.status();
  return ParseArgs(*expanded, positional);
}

absl::Status FlagParser::ParseArgs(const std::vector<std::string>& args,
                                   std::vector<std::string>* positional) const {
  for (size_t i = 0; i < args.size(); ++i) {
    bool rest = args[i] == "--";
    if (!rest && IsFlag(args[i])) {
      absl::Status status = ParseFlag(args, &i);
      if (!status.ok()) return status;
      continue;
    }
    if (!rest) positional->push_back(args[i]);
    if (rest || stop_at_positional_) {
      positional->insert(positional->end(), args.begin() + i + 1, args.end());
      break;
    }
  }
  return absl::OkStatus();
}

absl::Status FlagParser::ParseFlag(const std::vector<std::string>& args,
                                   size_t* i) const {
  absl::string_view arg = args[*i];
  if (arg == "-h") arg = "--help";
  if (!absl::ConsumePrefix(&arg, "--")) {
    return absl::InvalidArgumentError(absl::StrCat("unknown flag ", arg));
  }
  std::optional<absl::string_view> value;
  size_t eq = arg.find('=');
  if (eq != absl::string_view::npos) value = arg.substr(eq + 1);
  absl::string_view name = arg.substr(0, eq);
  const Flag* flag = Find(name);
  if (flag == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat("unknown flag --", name));
  }
  if (flag->switch_value != nullptr) return SetSwitch(*flag, value);
  if (!value && *i + 1 >= args.size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "flag --", name, " needs a value: --", name, "=", flag->value_name));
  }
  *flag->string_value = value ? std::string(*value) : args[++*i];
  return absl::OkStatus();
}

absl::Status FlagParser::SetSwitch(const Flag& flag,
                                   std::optional<absl::string_view> value) {
  if (!value || *value == "true" || *value == "1") {
    *flag.switch_value = true;
  } else if (*value == "false" || *value == "0") {
    *flag.switch_value = false;
  } else {
    return absl::InvalidArgumentError(absl::StrCat(
        "flag --", flag.name, " takes true or false, not '", *value, "'"));
  }
  return absl::OkStatus();
}

std::string FlagParser::Help() const {
  std::vector<Flag> flags = flags_;
  if (flag_file_) {
    flags.push_back({"flagfile", "PATH",
                     "read flags from PATH first, one per line ('#' "
                     "comments); the command line overrides them"});
  }
  std::vector<std::string> spellings;
  size_t width = 0;
  for (const Flag& flag : flags) {
    spellings.push_back(absl::StrCat(
        "--", flag.name, flag.value_name.empty() ? "" : "=", flag.value_name));
    width = std::max(width, spellings.back().size());
  }
  std::string out;
  for (size_t i = 0; i < flags.size(); ++i) {
    absl::StrAppendFormat(&out, "  %-*s  %s\n", static_cast<int>(width),
                          spellings[i], flags[i].help);
  }
  return out;
}

}  // namespace goodput
