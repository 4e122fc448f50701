#ifndef GOODPUT_SIM_SIM_FLAGS_H_
#define GOODPUT_SIM_SIM_FLAGS_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "sim/sim_config.h"

namespace goodput::sim {

// goodput-sim's command line: the fleet's config plus where events and the
// ground truth go. Plain data.
struct SimFlags {
  SimConfig config;
  std::string out = "-";             // JSON Lines file, "-" = stdout
  std::optional<std::string> truth;  // ground-truth JSON file
  std::vector<std::string> sockets;  // live mode: agents' Unix sockets
  double speed = 1;                  // live mode: simulated s per real s
  bool help = false;
  bool version = false;  // --version
  std::string help_text;
};

// Parses `args` (without the program name). Errors name the flag and the
// value, e.g. "--hosts: want an integer >= 1, got \"x\"".
absl::Status ParseSimFlags(const std::vector<std::string>& args,
                           SimFlags* flags);

}  // namespace goodput::sim

#endif  // GOODPUT_SIM_SIM_FLAGS_H_
