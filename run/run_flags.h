// goodput-run's command line: flags to LauncherOptions plus where events
// go. Pure functions; thread-safe.
#ifndef GOODPUT_RUN_RUN_FLAGS_H_
#define GOODPUT_RUN_RUN_FLAGS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "run/launcher.h"

namespace goodput::run {

struct RunFlags {
  bool help = false;
  bool version = false;  // --version
  LauncherOptions launcher;
  std::string agent_socket;  // default client::DefaultAgentSocket()
  std::string spool_dir;     // default client::DefaultClientSpoolDir()
  std::string log_profile;   // --log_profile: a built-in name or a file
};

// Parses `args` (without argv[0]); `now_ns` stamps the checked
// job_submitted. Errors are one line naming the flag and the value.
absl::StatusOr<RunFlags> ParseRunFlags(const std::vector<std::string>& args,
                                       int64_t now_ns);

// The --help text.
std::string RunUsage();

}  // namespace goodput::run

#endif  // GOODPUT_RUN_RUN_FLAGS_H_
