// SendOrSpool: one event to the agent, synchronously, for command-line
// producers (goodputctl emit, goodput-run): the socket if it is reachable,
// else a client spool file of its own (closed at once, so the agent ingests
// it when it is back). Thread-compatible (the socket is the caller's).
#ifndef GOODPUT_CLIENTS_CPP_SEND_OR_SPOOL_H_
#define GOODPUT_CLIENTS_CPP_SEND_OR_SPOOL_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "clients/cpp/agent_socket.h"
#include "proto/event.pb.h"

namespace goodput::client {

struct SendOrSpoolResult {
  bool spooled = false;      // the agent was unreachable
  std::string socket_error;  // why, when spooled
};

// Writes `event` to `socket` (connecting it to `socket_path` if needed,
// reconnecting once), else to a new spool file in `spool_dir`. An error
// only when both failed; it names both.
absl::StatusOr<SendOrSpoolResult> SendOrSpool(AgentSocket* socket,
                                              const std::string& socket_path,
                                              const std::string& spool_dir,
                                              const v1::Event& event);

}  // namespace goodput::client

#endif  // GOODPUT_CLIENTS_CPP_SEND_OR_SPOOL_H_
