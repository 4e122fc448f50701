// goodput-agent: the per-host agent. See `goodput-agent --help` and
// agent/README.md.
#include <pthread.h>
#include <signal.h>

#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "agent/agent.h"
#include "agent/agent_flags.h"
#include "util/version.h"

int main(int argc, char** argv) {
  auto flags = goodput::agent::ParseAgentFlags(
      std::vector<std::string>(argv + 1, argv + argc));
  if (!flags.ok()) {
    std::cerr << "goodput-agent: " << flags.status().message()
              << " (see --help)\n";
    return 2;
  }
  if (flags->help) {
    std::cout << goodput::agent::AgentUsage();
    return 0;
  }
  if (flags->version) {
    std::cout << goodput::VersionLine("goodput-agent") << "\n";
    return 0;
  }
#ifdef NDEBUG
  // Abseil's release default, which Debian's build (detector on) lacks:
  // it looked every lock up in its lock-order graph, two per socket line
  // (callgrind: GraphCycles::GetId alone 5% of the agent's instructions).
  // Debug builds and the tests keep it.
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
#endif
  // SIGINT/SIGTERM are blocked in every thread and taken by sigwait().
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  signal(SIGPIPE, SIG_IGN);
  absl::Notification stop;
  std::thread([signals, &stop] {
    int sig = 0;
    sigwait(&signals, &sig);
    stop.Notify();
  }).detach();
  absl::Status s = goodput::agent::RunAgent(*flags, &stop);
  if (!s.ok()) {
    std::cerr << "goodput-agent: " << s.message() << "\n";
    return 1;
  }
  return 0;
}
