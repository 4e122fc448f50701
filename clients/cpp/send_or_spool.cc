#include "clients/cpp/send_or_spool.h"

#include "absl/strings/str_cat.h"
#include "clients/cpp/client_spool_file.h"
#include "clients/cpp/event_json.h"

namespace goodput::client {

absl::StatusOr<SendOrSpoolResult> SendOrSpool(AgentSocket* socket,
                                              const std::string& socket_path,
                                              const std::string& spool_dir,
                                              const v1::Event& event) {
  const std::string line = EventToJsonLine(event);
  absl::Status sent =
      socket->connected() ? socket->Write(line) : absl::UnavailableError("");
  if (!sent.ok()) {  // (re)connect once
    sent = socket->Connect(socket_path);
    if (sent.ok()) sent = socket->Write(line);
  }
  if (sent.ok()) return SendOrSpoolResult{};
  ClientSpoolFile spool(spool_dir);
  absl::Status spooled = spool.Append(event);
  if (spooled.ok()) spooled = spool.Close();
  if (!spooled.ok()) {
    return absl::UnavailableError(
        absl::StrCat(sent.message(), "; ", spooled.message()));
  }
  return SendOrSpoolResult{true, std::string(sent.message())};
}

}  // namespace goodput::client
