// Intake: the agent's Unix-socket server for JSON Lines (SPEC section 5).
// Any number of local clients connect to `socket_path` (mode 0666) and
// write events, one JSON object per '\n'-terminated line. A plain step line
// (codec::PlainStepDecoder) goes to the EventSink's AddPlainStep as it is
// (no v1::Event built); every other line through codec::LineDecoder, both
// with now_ns from the Clock; good events go to the EventSink (the Batcher,
// or the ShardRouter), bad ones are counted and logged as "socket: line N:
// reason" (rate-limited). Lines longer than
// `max_line_bytes` are rejected without being buffered whole, and a line left
// without its '\n' when the client disconnects is dropped and counted. Plain
// clients get nothing back; ack-mode clients get acks (below).
//
// Connections are bounded (agent/README.md, "Idle and excess clients"): one
// with no bytes for `idle_timeout` is closed; at `max_connections` a new
// client takes the place of the connection idle longest (if idle for at
// least `evictable_idle`), else it waits in the listen backlog until a
// place frees (never accepted and dropped). Closing for either reason first
// shuts the connection for reading, so a client's later write fails (EPIPE)
// instead of vanishing, then takes what the client wrote before. Both are
// counted and logged.
//
// Ack mode (docs/delivery.md, "The ack mode"): a client whose first line is
// exactly kAckHello gets it back, then writes {"id":"...","event":{...}}
// lines. After each poll round that read such lines, the intake syncs the
// sink (the batches holding them are written to the spool: a group commit)
// and writes {"acked":N} to each such client, N counting every line after
// the hello that is done (spooled, a duplicate of a known id, or rejected:
// rejected lines are answered {"rejected":{"line":L,"reason":"..."}} first).
// A failed sync (events dropped) acks nothing and closes those clients,
// which resend. Ids are claimed in Options::ids: a known one is a duplicate,
// acked without being spooled again.
//
// Owns the listening socket and the client connections; does not own the
// batcher, clock or metrics. Thread-safe: one internal thread does all the
// I/O; stats() and Stop() may be called from any thread.
#ifndef GOODPUT_AGENT_INTAKE_H_
#define GOODPUT_AGENT_INTAKE_H_

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "agent/event_ids.h"
#include "agent/event_sink.h"
#include "agent/log_limiter.h"
#include "codec/line_decoder.h"
#include "codec/plain_step.h"
#include "util/clock.h"
#include "util/logger.h"

namespace goodput::agent {

class Intake {
 public:
  // A connection's first line that opts into ack mode, and the reply.
  static constexpr char kAckHello[] = "{\"hello\":{\"ack\":1}}";
  static constexpr size_t kMaxIdBytes = 128;

  struct Options {
    std::string socket_path;
    size_t max_line_bytes = size_t{1} << 20;
    // Bounds memory at max_connections x max_line_bytes; a client beyond
    // it replaces the longest-idle one, or waits in the backlog.
    size_t max_connections = 256;
    // A connection with no bytes this long (on the Clock) is closed; zero:
    // never (the agent's --client_idle_timeout defaults to 5m).
    absl::Duration idle_timeout = absl::ZeroDuration();
    // At max_connections, a connection idle this long may make room.
    absl::Duration evictable_idle = absl::Seconds(1);
    Logger log{"goodput-agent"};  // where its log lines go
    // Not owned; may be null (ack-mode ids are then not deduplicated).
    EventIds* ids = nullptr;
  };

  struct Stats {
    int64_t connections = 0;  // accepted since start
    int64_t idle_closed = 0;  // closed after idle_timeout
    int64_t evicted = 0;      // closed at max_connections for a new client
    int64_t full_waits = 0;   // times new clients had to wait in the backlog
    int64_t open_connections = 0;
    int64_t accepted_lines = 0;
    int64_t blank_lines = 0;  // skipped, not an error
    int64_t invalid_lines = 0;
    int64_t too_long_lines = 0;
    int64_t partial_lines = 0;    // no '\n' before the disconnect
    int64_t ack_connections = 0;  // that sent the hello
    int64_t duplicate_lines = 0;  // ack mode: an id taken before
    int64_t acks_sent = 0;        // {"acked":N} lines written
    int64_t failed_syncs = 0;     // rounds whose sync failed (no ack)
    int64_t rejected_lines() const {
      return invalid_lines + too_long_lines + partial_lines;
    }
  };

  // Binds the socket (replacing a stale socket file, refusing a live one or
  // a file that is not a socket) and starts serving.
  static absl::StatusOr<std::unique_ptr<Intake>> Start(Options options,
                                                       EventSink* batcher,
                                                       Clock* clock);
  ~Intake();
  Intake(const Intake&) = delete;

  // Logs how many warnings the rate limit suppressed in an interval that
  // has ended (`all`: also in the running one, at shutdown), if any (the
  // agent's ticker calls it).
  void FlushSuppressedLogs(bool all = false);
  Intake& operator=(const Intake&) = delete;

  // Takes what connected clients already wrote (up to 1 MiB each), then
  // closes every connection and the socket (removing its file). After it
  // returns, nothing more reaches the batcher. Idempotent.
  void Stop();

  Stats stats() const;
  // Waits until `done(stats())` holds; false on timeout.
  bool AwaitStats(const std::function<bool(const Stats&)>& done,
                  absl::Duration timeout) const;

 private:
  struct Connection {
    int fd = -1;
    int64_t id = 0;
    int64_t last_active_ns = 0;  // accepted, or its last bytes (clock)
    int64_t line = 1;            // number of the line being read
    std::string buffer;          // its bytes so far
    bool discarding = false;     // it is too long: skip to its '\n'
    bool ack_mode = false;       // sent kAckHello
    int64_t done = 0;            // ack mode: lines after the hello handled
    int64_t acked = 0;           // ... of them acknowledged
    std::string out;             // bytes to write to the client
    bool broken = false;         // a write failed: close it
  };
  enum class Outcome { kAccepted, kBlank, kInvalid, kTooLong, kPartial };

  Intake(Options options, int listen_fd, int wake_read, int wake_write,
         dev_t dev, ino_t ino, EventSink* batcher, Clock* clock);

  void Loop();
  // poll()'s timeout: until the next idle deadline, or -1.
  int PollTimeoutMs() const;
  // Whether to poll the listening socket (not while clients already wait
  // at the cap with nobody idle enough to make room).
  bool MayAccept() const;
  void AcceptAll();
  // At max_connections: closes the connection idle longest if it is
  // evictable and returns true; else false.
  bool EvictIdlest();
  // Closes connections idle for idle_timeout.
  void CloseIdle();
  // Shuts `c` for reading, takes what its client wrote before, closes it.
  void ShutDownAndClose(Connection* c);
  void LogLimited(const std::string& line);
  // Reads what `c` sent; false when the connection is finished.
  bool ReadFrom(Connection* c);
  // ProcessLines, then PublishCounts.
  void ProcessChunk(Connection* c, absl::string_view data);
  void ProcessLines(Connection* c, absl::string_view data);
  // Adds the accepted and blank lines counted since the last call to
  // stats_.
  void PublishCounts();
  void HandleLine(Connection* c, absl::string_view line);
  // An ack-mode line: {"id":...,"event":...}.
  void HandleAckLine(Connection* c, absl::string_view line);
  // Syncs the sink and acks every ack-mode client with lines not acked.
  void AckRound();
  // Queues `text` (whole lines) for the client and writes what it can.
  void Reply(Connection* c, absl::string_view text);
  void WriteOut(Connection* c);
  void Close(Connection* c);
  void CloseAll();
  void Count(Outcome outcome, const Connection* c, absl::string_view reason);

  // Poll() over one thread rather than a thread per connection: a
  // LineDecoder is not thread-safe (one per thread would be needed), lines
  // are small and decoding is the only real work, so one thread keeps up
  // with this 2-core host while a misbehaving launcher opening thousands of
  // connections costs file descriptors, not threads. poll()'s linear scan
  // is cheap at the few hundred local clients max_connections allows.
  const Options options_;
  const int listen_fd_;
  const int wake_read_;
  const int wake_write_;
  const dev_t socket_dev_;  // to remove only our own socket file
  const ino_t socket_ino_;
  EventSink* const batcher_;
  Clock* const clock_;
  LogLimiter reject_log_;

  // Used by the I/O thread only.
  codec::LineDecoder decoder_;
  codec::PlainStepDecoder plain_decoder_;  // tried first: the plain steps
  std::vector<std::unique_ptr<Connection>> connections_;
  std::vector<char> read_buffer_;
  int64_t next_id_ = 1;
  int64_t accepted_unpublished_ = 0;  // lines counted, not yet in stats_
  int64_t blank_unpublished_ = 0;
  bool waiting_ = false;  // new clients wait in the backlog now

  std::atomic<bool> stopping_{false};
  std::thread thread_;
  mutable absl::Mutex mu_;
  Stats stats_ ABSL_GUARDED_BY(mu_);
  bool stopped_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace goodput::agent

#endif  // GOODPUT_AGENT_INTAKE_H_
