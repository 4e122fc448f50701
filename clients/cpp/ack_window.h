// AckWindow: a client's events sent in the agent's ack mode and not yet
// acknowledged (docs/delivery.md, "The ack mode"), oldest first, at most
// `capacity` of them. Numbers each line as it is written on a connection
// (the hello is line 1, so the first event is line 2; acks count the lines
// after the hello) and reads the agent's replies: {"acked":N} removes the
// events of the first N event lines, {"rejected":{"line":L,...}} marks one
// as rejected. Owns its events; not thread-safe (the Recorder's thread).
#ifndef GOODPUT_CLIENTS_CPP_ACK_WINDOW_H_
#define GOODPUT_CLIENTS_CPP_ACK_WINDOW_H_

#include <cstdint>
#include <deque>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "proto/event.pb.h"

namespace goodput::client {

struct Unacked {
  std::string id;
  v1::Event event;
  std::string line;     // its {"id","event"} line
  int64_t line_no = 0;  // its event line on this connection; 0: unsent
};

class AckWindow {
 public:
  struct Progress {
    int64_t acked = 0;     // acknowledged and taken
    int64_t rejected = 0;  // acknowledged as rejected (logged by the agent)
  };

  explicit AckWindow(size_t capacity) : capacity_(capacity) {}

  // Adds `u` (unsent); returns the oldest events it pushed out.
  std::vector<Unacked> Add(Unacked u);
  // The lines of the events not written on this connection yet, numbered.
  std::string TakeUnsent();
  // A new connection: every event is unsent again, numbering restarts.
  void Reset();
  // Reads the agent's reply bytes (partial lines are kept for the next).
  Progress Feed(absl::string_view bytes);
  // Removes and returns every event (to spool them).
  std::deque<Unacked> TakeAll();
  size_t size() const { return events_.size(); }

 private:
  void Reply(absl::string_view line, Progress* progress);

  const size_t capacity_;
  std::deque<Unacked> events_;
  int64_t lines_ = 0;  // event lines written on this connection
  std::set<int64_t> rejected_;
  std::string partial_;
};

}  // namespace goodput::client

#endif  // GOODPUT_CLIENTS_CPP_ACK_WINDOW_H_
