// The built-in log profiles (Megatron-LM, torchtitan, MaxText, the Hugging
// Face Transformers Trainer, DeepSpeed) and loading a profile by name or
// file. Each built-in names the framework source it follows; see
// docs/adapters.md, "From logs". Pure functions over constant text, safe
// from any thread; LoadLogProfile reads a file when given a path.
#ifndef GOODPUT_LOGS_BUILTIN_PROFILES_H_
#define GOODPUT_LOGS_BUILTIN_PROFILES_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "logs/log_profile.h"

namespace goodput::logs {

// "deepspeed", "hf_trainer", "maxtext", "megatron", "torchtitan".
std::vector<std::string> BuiltinProfileNames();

// The YAML text of built-in profile `name`; NotFound lists the names.
absl::StatusOr<absl::string_view> BuiltinProfileYaml(absl::string_view name);

// The built-in profile `name_or_path` if there is one, else the YAML file
// at that path. Errors name the file (or built-in), rule and capture.
absl::StatusOr<LogProfile> LoadLogProfile(absl::string_view name_or_path);

}  // namespace goodput::logs

#endif  // GOODPUT_LOGS_BUILTIN_PROFILES_H_
