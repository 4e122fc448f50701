#ifndef GOODPUT_UTIL_FLAGS_H_
#define GOODPUT_UTIL_FLAGS_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace goodput {

// A small command-line flag parser for one command (no global state, unlike
// absl flags). Accepts "--name=value", "--name value" (value flags),
// "--name" and "--name=true|false" (switches); "-h" means "--help" if a
// "help" flag is registered. "-" and anything not starting with '-' are
// positional; "--" ends the flags. Does not own the variables it sets,
// which must outlive it. Not thread-safe.
class FlagParser {
 public:
  // With `stop_at_positional`, parsing stops at the first positional
  // argument, which is returned with all arguments after it unparsed (for
  // global flags before a subcommand).
  explicit FlagParser(bool stop_at_positional = false)
      : stop_at_positional_(stop_at_positional) {}

  // Registers the switch --`name`.
  void AddBool(absl::string_view name, bool* value, absl::string_view help);

  // Accepts --flagfile=PATH (util/flag_file.h): its flags are parsed first,
  // so the command line overrides them; listed in Help().
  void AddFlagFile();

  // Registers --`name`=`value_name`; sets `value` when given.
  void AddString(absl::string_view name, absl::string_view value_name,
                 std::optional<std::string>* value, absl::string_view help);

  // Parses `args` (without program or command name), setting registered
  // variables and appending positional arguments to `positional`. Errors
  // are one line, e.g. "unknown flag --jsn" (for a flags file line:
  // "PATH:LINE: unknown flag --jsn").
  absl::Status Parse(const std::vector<std::string>& args,
                     std::vector<std::string>* positional) const;

  // One line per flag, "  --name=VALUE   help", in registration order.
  std::string Help() const;

 private:
  struct Flag {
    std::string name;
    std::string value_name;  // empty for switches
    std::string help;
    bool* switch_value = nullptr;
    std::optional<std::string>* string_value = nullptr;
  };

  const Flag* Find(absl::string_view name) const;
  // Parse without --flagfile.
  absl::Status ParseArgs(const std::vector<std::string>& args,
                         std::vector<std::string>* positional) const;
  // Parses the flag args[*i], consuming args[*i + 1] for "--name value".
  absl::Status ParseFlag(const std::vector<std::string>& args, size_t* i) const;
  static absl::Status SetSwitch(const Flag& flag,
                                std::optional<absl::string_view> value);

  bool stop_at_positional_;
  bool flag_file_ = false;
  std::vector<Flag> flags_;
};

}  // namespace goodput

#endif  // GOODPUT_UTIL_FLAGS_H_
