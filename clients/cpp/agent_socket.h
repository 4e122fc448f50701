// AgentSocket: a blocking connection to the goodput agent's Unix socket
// (agent/README.md, "The socket") that writes JSON lines. The agent never
// answers, so a successful Write means the bytes reached the socket buffer.
// Owns its file descriptor; not thread-safe (one writer at a time).
#ifndef GOODPUT_CLIENTS_CPP_AGENT_SOCKET_H_
#define GOODPUT_CLIENTS_CPP_AGENT_SOCKET_H_

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace goodput::client {

// Where clients look for the agent: $GOODPUT_SOCKET, else this.
inline constexpr char kDefaultAgentSocket[] = "/tmp/goodput-agent.sock";
// Where clients spool while the agent is down: $GOODPUT_SPOOL_DIR, else this.
inline constexpr char kDefaultClientSpoolDir[] = "/tmp/goodput-client-spool";

// $GOODPUT_SOCKET or kDefaultAgentSocket.
std::string DefaultAgentSocket();
// $GOODPUT_SPOOL_DIR or kDefaultClientSpoolDir.
std::string DefaultClientSpoolDir();

class AgentSocket {
 public:
  AgentSocket() = default;
  ~AgentSocket();
  AgentSocket(const AgentSocket&) = delete;
  AgentSocket& operator=(const AgentSocket&) = delete;

  // Connects to `path`; Unavailable naming the path on failure.
  absl::Status Connect(const std::string& path);
  bool connected() const { return fd_ >= 0; }
  // Writes all of `data` (whole lines); on failure closes the connection:
  // Aborted if the agent had closed it (EPIPE, ECONNRESET: nothing of
  // `data` was taken, a new connection may retry it), else Unavailable
  // (e.g. the 2 s send timeout of a stuck agent). Never raises SIGPIPE.
  absl::Status Write(absl::string_view data);
  void Close();

 private:
  int fd_ = -1;
  std::string path_;
};

}  // namespace goodput::client

#endif  // GOODPUT_CLIENTS_CPP_AGENT_SOCKET_H_
