// goodput-run: see run/README.md and RunUsage().
#include <iostream>
#include <string>
#include <vector>

#include "run/agent_event_sink.h"
#include "run/launcher.h"
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
  goodput::run::AgentEventSink sink(flags->agent_socket, flags->spool_dir);
  goodput::run::Launcher launcher(
      flags->launcher, &clock, &runner, &sink,
      [] { return goodput::RandomUuid().value_or("attempt"); }, &std::cerr);
  return launcher.Run();
}
