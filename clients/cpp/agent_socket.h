// AgentSocket: a blocking connection to the goodput agent's Unix socket
// (agent/README.md, "The socket") that writes JSON lines. A plain
// connection gets no answer, so a successful Write means the bytes reached
// the socket buffer; one that asked for the ack mode (AskAck) reads the
// agent's acks with Read (docs/delivery.md, "The ack mode").
// Owns its file descriptor; not thread-safe (one writer at a time).
#ifndef GOODPUT_CLIENTS_CPP_AGENT_SOCKET_H_
#define GOODPUT_CLIENTS_CPP_AGENT_SOCKET_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace goodput::client {

// Where clients look for the agent: $GOODPUT_SOCKET, else this.
inline constexpr char kDefaultAgentSocket[] = "/tmp/goodput-agent.sock";
// Where clients spool while the agent is down: $GOODPUT_SPOOL_DIR, else this.
inline constexpr char kDefaultClientSpoolDir[] = "/tmp/goodput-client-spool";
// The ack mode's hello, without its '\n' (agent/intake.h, kAckHello).
inline constexpr char kAckHello[] = "{\"hello\":{\"ack\":1}}";

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
  // Sends the ack mode's hello and waits up to `timeout` for the answer:
  // true if the agent acks, false if it said nothing (an agent without the
  // ack mode). An error (and closed) if the connection broke.
  absl::StatusOr<bool> AskAck(absl::Duration timeout);
  // What the agent sent, waiting up to `wait` for it ("" if nothing came).
  // Unavailable (and closed) at the agent's end of the connection.
  absl::StatusOr<std::string> Read(absl::Duration wait);
  void Close();

 private:
  int fd_ = -1;
  std::string path_;
};

}  // namespace goodput::client

#endif  // GOODPUT_CLIENTS_CPP_AGENT_SOCKET_H_
