// ClientSpoolReader: the agent's side of client spool files, the events a
// client (the Python recorder, the C++ Recorder, goodput-run) wrote to
// disk while the agent was unreachable (agent/README.md, "Client spool
// files"). Scan() looks at the directory once:
//   spool-<pid>-<hex>.jsonl  closed by its writer: ingested;
//   spool-<pid>-<hex>.open   ingested only when process <pid> is gone;
//   anything else            ignored.
// Each complete line {"id":"<id>","event":{...}} is decoded and validated
// like a socket line, skipped if its id was already ingested (the last
// `max_ids` ids are remembered, and Options::ids), and handed to `add`; then
// `flush` makes the batch durable in the agent's spool and the file is deleted.
// Bad lines and a last line without '\n' are dropped and logged. Does not own
// the clock. Not thread-safe (the agent's ticker thread calls it).
#ifndef GOODPUT_AGENT_CLIENT_SPOOL_READER_H_
#define GOODPUT_AGENT_CLIENT_SPOOL_READER_H_

#include <sys/types.h>

#include <cstdint>
#include <deque>
#include <functional>
#include <string>
#include <unordered_set>

#include "absl/status/status.h"
#include "agent/event_ids.h"
#include "codec/line_decoder.h"
#include "proto/event.pb.h"
#include "util/clock.h"
#include "util/logger.h"

namespace goodput::agent {

struct ClientSpoolScan {
  int64_t files = 0;       // files consumed (and deleted)
  int64_t events = 0;      // events handed on
  int64_t duplicates = 0;  // lines whose id was seen before
  int64_t rejected = 0;    // bad or partial lines
};

class ClientSpoolReader {
 public:
  struct Options {
    std::string dir;
    size_t max_ids = 1000000;
    // Whether process `pid` is alive (tests replace it).
    std::function<bool(pid_t)> pid_alive;
    Logger log{"goodput-agent"};  // where its log lines go
    // Not owned; may be null. Ids are claimed here too, so an event a
    // client both sent in ack mode and spooled counts once.
    EventIds* ids = nullptr;
  };

  // `add` takes an event and its id's hash (EventIds::Hash).
  ClientSpoolReader(Options options,
                    std::function<void(v1::Event, uint64_t)> add,
                    std::function<void()> flush, Clock* clock);

  // Creates the directory (mode 01777, like /tmp) if it is missing.
  absl::Status Init();
  // One pass over the directory.
  ClientSpoolScan Scan();

 private:
  // Whether `name` is a file to consume now.
  bool Ready(const std::string& name) const;
  void ConsumeFile(const std::string& path, ClientSpoolScan* scan);
  void ConsumeLine(const std::string& path, int line_no,
                   const std::string& line, ClientSpoolScan* scan);
  bool Remember(const std::string& id);

  Options options_;
  std::function<void(v1::Event, uint64_t)> add_;
  std::function<void()> flush_;
  Clock* const clock_;
  codec::LineDecoder decoder_;
  std::unordered_set<std::string> ids_;
  std::deque<std::string> id_order_;
};

}  // namespace goodput::agent

#endif  // GOODPUT_AGENT_CLIENT_SPOOL_READER_H_
