// ClientSpoolFile: the writer side of a client spool file (agent/README.md,
// "Client spool files"): events a client could not hand to the agent,
// appended as {"id":"<uuid4>","event":{...}} lines to
// DIR/spool-<pid>-<uuid>.open and renamed to .jsonl by Close() so the agent
// ingests it. Each line is one write(). Owns the file; not thread-safe.
#ifndef GOODPUT_CLIENTS_CPP_CLIENT_SPOOL_FILE_H_
#define GOODPUT_CLIENTS_CPP_CLIENT_SPOOL_FILE_H_

#include <string>

#include "absl/status/status.h"
#include "proto/event.pb.h"

namespace goodput::client {

class ClientSpoolFile {
 public:
  explicit ClientSpoolFile(std::string dir) : dir_(std::move(dir)) {}
  ~ClientSpoolFile();  // Closes.
  ClientSpoolFile(const ClientSpoolFile&) = delete;
  ClientSpoolFile& operator=(const ClientSpoolFile&) = delete;

  // Appends `event` with a fresh id, creating the directory and the file
  // on first use.
  absl::Status Append(const v1::Event& event);
  // Appends `event` under `id` (an event the agent may have taken already
  // in ack mode: it drops the repeat by id).
  absl::Status Append(const std::string& id, const v1::Event& event);
  // Closes the file and renames it to .jsonl (a no-op when none is open).
  absl::Status Close();
  bool open() const { return fd_ >= 0; }

 private:
  absl::Status Open();

  std::string dir_;
  std::string path_;  // of the open file, ending in ".open"
  int fd_ = -1;
};

}  // namespace goodput::client

#endif  // GOODPUT_CLIENTS_CPP_CLIENT_SPOOL_FILE_H_
