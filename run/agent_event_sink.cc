#include "run/agent_event_sink.h"

#include <iostream>

#include "clients/cpp/client_spool_file.h"
#include "clients/cpp/event_json.h"

namespace goodput::run {

void AgentEventSink::Send(const v1::Event& event) {
  const std::string line = client::EventToJsonLine(event);
  absl::Status sent =
      socket_.connected() ? socket_.Write(line) : absl::UnavailableError("");
  if (!sent.ok()) {  // (re)connect once, then fall back to the spool
    sent = socket_.Connect(socket_path_);
    if (sent.ok()) sent = socket_.Write(line);
  }
  if (sent.ok()) return;
  client::ClientSpoolFile spool(spool_dir_);
  absl::Status spooled = spool.Append(event);
  if (spooled.ok()) spooled = spool.Close();
  std::cerr << "goodput-run: " << sent.message() << "; "
            << (spooled.ok() ? "spooled the event to " + spool_dir_
                             : "event lost: " + std::string(spooled.message()))
            << "\n";
}

}  // namespace goodput::run
