// Recorder: a C++ job's events (SPEC section 2) for serving stacks and
// training loops, with the Python client's never-block rule: every call
// builds one event and puts it on a bounded queue (dropping and counting it
// when the queue is full); one background thread writes the queue to the
// agent's Unix socket and, while the agent is unreachable, to a client
// spool file that the agent ingests later (agent/README.md). In the ack
// mode (the default) it keeps each event until the agent acknowledges it
// and resends it, with its id, after a reconnect (AckWindow). Owns the
// thread, the socket and the spool file; the Clock must outlive it. All
// methods are thread-safe.
#ifndef GOODPUT_CLIENTS_CPP_RECORDER_H_
#define GOODPUT_CLIENTS_CPP_RECORDER_H_

#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <thread>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "clients/cpp/ack_window.h"
#include "clients/cpp/agent_socket.h"
#include "clients/cpp/client_spool_file.h"
#include "proto/event.pb.h"
#include "util/clock.h"

namespace goodput::client {

struct RecorderOptions {
  std::string job_id;
  std::string attempt;      // empty: $GOODPUT_ATTEMPT, else a new UUID
  std::string socket_path;  // empty: DefaultAgentSocket()
  std::string spool_dir;    // empty: DefaultClientSpoolDir()
  size_t queue_capacity = 10000;
  absl::Duration reconnect_interval = absl::Seconds(1);
  bool enabled = true;  // false (e.g. rank != 0): every call is a no-op
  // The agent's ack mode (docs/delivery.md): events are kept until the
  // agent acknowledges them and resent after a reconnect; at most
  // `max_unacked` (beyond that the oldest go to the spool file).
  bool ack = true;
  size_t max_unacked = 10000;
  absl::Duration hello_timeout = absl::Seconds(2);  // a plain agent's silence
};

// "sent": written to the agent (in ack mode: acknowledged); "rejected":
// acknowledged as invalid (ack mode; the agent logs why).
struct RecorderCounts {
  int64_t sent = 0, spooled = 0, dropped = 0, rejected = 0;
};

class Recorder {
 public:
  Recorder(RecorderOptions options, Clock* clock);
  ~Recorder();  // Close(5 s).
  Recorder(const Recorder&) = delete;
  Recorder& operator=(const Recorder&) = delete;

  const std::string& attempt() const { return attempt_; }

  // Each sends one event stamped now; false if it was dropped.
  bool Started();
  bool Activity(v1::Activity::Kind kind, const std::string& name = "",
                std::optional<int64_t> step = std::nullopt);
  bool Step(int64_t step, double flops = 0, double bytes = 0,
            double input_wait_seconds = 0, double idle_seconds = 0);
  bool Checkpoint(int64_t step);
  bool Ended(v1::JobEnded::Outcome outcome);
  // Queues `event` as given (time, job_id and attempt are filled if unset).
  bool Send(v1::Event event);

  // Waits up to `timeout` until everything queued so far was written (in
  // ack mode: acknowledged, or spooled).
  bool Flush(absl::Duration timeout);
  // Flushes, stops the thread, closes the socket and the spool file.
  void Close(absl::Duration timeout);
  RecorderCounts counts() const;

 private:
  void Run();
  void Deliver(const v1::Event& event);
  // Ack mode: keeps the event until acknowledged.
  void DeliverAcked(const v1::Event& event);
  // Writes the window's unsent lines; on a broken connection resends the
  // window on a new one, else spools it.
  void WriteUnsent();
  // Reads the agent's acks (waiting up to `wait`).
  void PollAcks(absl::Duration wait);
  // The connection broke: resend the window on a new one, else spool it.
  void Resend();
  void Spool(const std::string& id, const v1::Event& event);
  void SpoolWindow();
  // Records the window's size for Flush.
  void NoteWindow();
  bool WriteSocket(const std::string& line);
  // Connects the socket unless a failed connect was too recent; false
  // if not connected.
  bool ConnectSocket();

  const RecorderOptions options_;
  Clock* const clock_;
  std::string attempt_;
  // Owned by the thread.
  AgentSocket socket_;
  bool acking_ = false;  // the connection is in ack mode
  AckWindow window_;
  ClientSpoolFile spool_;
  int64_t next_connect_ns_ = 0;

  mutable absl::Mutex mu_;
  std::deque<v1::Event> queue_ ABSL_GUARDED_BY(mu_);
  bool busy_ ABSL_GUARDED_BY(mu_) = false;   // the thread holds an event
  size_t unacked_ ABSL_GUARDED_BY(mu_) = 0;  // window_.size()
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  RecorderCounts counts_ ABSL_GUARDED_BY(mu_);
  std::thread thread_;
};

}  // namespace goodput::client

#endif  // GOODPUT_CLIENTS_CPP_RECORDER_H_
