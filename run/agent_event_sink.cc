#include "run/agent_event_sink.h"

#include <iostream>

#include "clients/cpp/send_or_spool.h"

namespace goodput::run {

void AgentEventSink::Send(const v1::Event& event) {
  auto result = client::SendOrSpool(&socket_, socket_path_, spool_dir_, event);
  if (!result.ok()) {
    std::cerr << "goodput-run: event lost: " << result.status().message()
              << "\n";
  } else if (result->spooled) {
    std::cerr << "goodput-run: " << result->socket_error
              << "; spooled the event to " << spool_dir_ << "\n";
  }
}

}  // namespace goodput::run
