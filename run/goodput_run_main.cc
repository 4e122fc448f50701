// goodput-run: see run/README.md and RunUsage().
#include <unistd.h>

#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "logs/builtin_profiles.h"
#include "run/agent_event_sink.h"
#include "run/launcher.h"
#include "run/locked_event_sink.h"
#include "run/log_tap.h"
#include "run/posix_process_runner.h"
#include "run/run_flags.h"
#include "util/clock.h"
#include "util/uuid.h"
#include "util/version.h"

int main(int argc, char** argv) {
  // Before anything else: block the signals the runner waits for.
  goodput::run::PosixProcessRunner runner;
  goodput::RealClock clock;
  std::vector<std::string> args(argv + 1, argv + argc);
  auto flags = goodput::run::ParseRunFlags(args, clock.NowNanos());
  if (!flags.ok()) {
    std::cerr << "goodput-run: " << flags.status().message()
              << " (see --help)\n";
    return 2;
  }
  if (flags->help) {
    std::cout << goodput::run::RunUsage();
    return 0;
  }
  if (flags->version) {
    std::cout << goodput::VersionLine("goodput-run") << "\n";
    return 0;
  }
  std::optional<goodput::logs::LogProfile> profile;
  if (!flags->log_profile.empty()) {
    auto loaded = goodput::logs::LoadLogProfile(flags->log_profile);
    if (!loaded.ok()) {
      std::cerr << "goodput-run: " << loaded.status().message() << "\n";
      return 2;
    }
    profile = *std::move(loaded);
  }
  goodput::run::AgentEventSink agent_sink(flags->agent_socket,
                                          flags->spool_dir);
  goodput::run::LockedEventSink sink(&agent_sink);
  goodput::run::Launcher launcher(
      flags->launcher, &clock, &runner, &sink,
      [] { return goodput::RandomUuid().value_or("attempt"); }, &std::cerr);
  std::unique_ptr<goodput::run::LogTap> tap;
  if (profile) {
    tap = std::make_unique<goodput::run::LogTap>(
        &*profile, flags->launcher.job_id, &clock, &sink, STDOUT_FILENO,
        STDERR_FILENO, &std::cerr);
    launcher.set_output_tap(tap.get());
  }
  return launcher.Run();
}
