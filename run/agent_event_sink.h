// AgentEventSink: sends each event to the agent's Unix socket; when the
// agent is unreachable, writes it to a client spool file in `spool_dir`
// (closed at once, so the agent ingests it when it is back) and logs one
// line to stderr. Owns its socket. Not thread-safe.
#ifndef GOODPUT_RUN_AGENT_EVENT_SINK_H_
#define GOODPUT_RUN_AGENT_EVENT_SINK_H_

#include <string>

#include "clients/cpp/agent_socket.h"
#include "run/event_sink.h"

namespace goodput::run {

class AgentEventSink : public EventSink {
 public:
  AgentEventSink(std::string socket_path, std::string spool_dir)
      : socket_path_(std::move(socket_path)),
        spool_dir_(std::move(spool_dir)) {}
  void Send(const v1::Event& event) override;

 private:
  std::string socket_path_, spool_dir_;
  client::AgentSocket socket_;
};

}  // namespace goodput::run

#endif  // GOODPUT_RUN_AGENT_EVENT_SINK_H_
