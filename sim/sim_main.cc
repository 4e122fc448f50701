// goodput-sim: a simulated accelerator fleet as goodput events, plus the
// ground truth of what happened. See sim/README.md.
#include <chrono>
#include <fstream>
#include <iostream>
#include <memory>
#include <thread>

#include "sim/event_sink.h"
#include "sim/fleet_sim.h"
#include "sim/live_sink.h"
#include "sim/sim_flags.h"
#include "util/clock.h"
#include "util/version.h"

namespace goodput::sim {
namespace {

constexpr char kUsage[] =
    "Usage: goodput-sim [FLAGS]\n\n"
    "Simulates a fleet (hosts, jobs, queueing, interruptions, checkpoints)\n"
    "from a seed and writes its events as JSON Lines (--out), or plays them\n"
    "live into goodput-agents' sockets (--sockets, --speed). --truth writes\n"
    "the ground truth (per job seconds per category).\n\nFlags:\n";

int Fail(const std::string& message) {
  std::cerr << "goodput-sim: " << message << " (see --help)\n";
  return 2;
}

void SleepUntilWall(int64_t wall_ns) {
  std::this_thread::sleep_until(std::chrono::system_clock::time_point(
      std::chrono::duration_cast<std::chrono::system_clock::duration>(
          std::chrono::nanoseconds(wall_ns))));
}

absl::StatusOr<std::unique_ptr<EventSink>> MakeSink(const SimFlags& flags,
                                                    RealClock* clock,
                                                    std::ofstream* file) {
  if (!flags.sockets.empty()) {
    auto live = LiveSink::Connect(flags.sockets, flags.speed,
                                  flags.config.start_ms, clock, SleepUntilWall);
    if (!live.ok()) return live.status();
    if (flags.out != "-") {  // a copy of the events as sent
      file->open(flags.out);
      if (!*file)
        return absl::NotFoundError("--out: cannot write " + flags.out);
      (*live)->set_tee(file);
    }
    return std::unique_ptr<EventSink>(std::move(*live));
  }
  std::ostream* out = &std::cout;
  if (flags.out != "-") {
    file->open(flags.out);
    if (!*file) return absl::NotFoundError("--out: cannot write " + flags.out);
    out = file;
  }
  return std::unique_ptr<EventSink>(std::make_unique<JsonLinesSink>(out));
}

int Main(int argc, char** argv) {
  std::ios::sync_with_stdio(false);
  SimFlags flags;
  absl::Status s = ParseSimFlags({argv + 1, argv + argc}, &flags);
  if (!s.ok()) return Fail(std::string(s.message()));
  if (flags.help) {
    std::cout << kUsage << flags.help_text;
    return 0;
  }
  if (flags.version) {
    std::cout << VersionLine("goodput-sim") << "\n";
    return 0;
  }
  RealClock clock;
  std::ofstream file;
  auto sink = MakeSink(flags, &clock, &file);
  if (!sink.ok()) return Fail(std::string(sink.status().message()));
  FleetSim sim(flags.config);
  s = sim.Run(**sink);
  if (!s.ok()) {
    std::cerr << "goodput-sim: " << s.message() << "\n";
    return 1;
  }
  if (flags.truth) {
    std::ofstream truth(*flags.truth);
    WriteTruthJson(sim.truth(), truth);
    if (!truth) return Fail("--truth: cannot write " + *flags.truth);
  }
  std::cerr << "goodput-sim: " << sim.truth().jobs.size() << " jobs on "
            << sim.hosts().hosts().size() << " hosts\n";
  return 0;
}

}  // namespace
}  // namespace goodput::sim

int main(int argc, char** argv) { return goodput::sim::Main(argc, argv); }
