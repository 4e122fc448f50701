// Batcher: gathers accepted events into batches for the Spool, serialized
// as they come (the batch's events fields, Spool::AppendWire's form; a
// plain step line's event without building a v1::Event). A batch is
// written when it holds `batch_events` events or when the next event would
// take its serialized size over `batch_bytes` (in Add: the batch is split on
// that event's boundary; an event larger than `batch_bytes` goes alone), or
// when
// `batch_delay` has passed on the Clock since its first event (in Poll,
// which the agent's ticker calls; see DeadlineNanos). Fills in `host` on
// events that lack it. When the spool refuses a batch (full or failing),
// its events are dropped and counted (goodput_agent_dropped_events_total,
// and a failed write in goodput_agent_spool_write_errors_total) with at
// most one log line a minute: the agent never blocks its clients
// and never holds more than one batch in memory. Does not own the spool,
// clock or metrics. Thread-safe.
#ifndef GOODPUT_AGENT_BATCHER_H_
#define GOODPUT_AGENT_BATCHER_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "agent/event_ids.h"
#include "agent/event_sink.h"
#include "agent/log_limiter.h"
#include "agent/spool.h"
#include "proto/event.pb.h"
#include "util/clock.h"
#include "util/logger.h"

namespace goodput::agent {

class Batcher : public EventSink {
 public:
  struct Options {
    size_t batch_events = 500;
    absl::Duration batch_delay = absl::Milliseconds(200);
    std::string host;  // set on events without one
    // Called (outside the lock) when an empty batcher gets its first
    // event, so the ticker can recompute its deadline.
    std::function<void()> on_batch_started;
    // Serialized Batch bytes at most (agent_id and sequence included).
    uint64_t batch_bytes = uint64_t{1} << 20;
    // Not owned; may be null. The ids of a dropped batch are released here.
    EventIds* ids = nullptr;
    Logger log{"goodput-agent"};  // where its log lines go
  };

  // What it has written and dropped since it was made.
  struct Stats {
    int64_t spooled_batches = 0;
    int64_t spooled_events = 0;
    int64_t dropped_events = 0;  // accepted, but the spool was full or failed
    // Failed spool writes (their events are dropped) and failed directory
    // fsyncs of a commit (io), by reason.
    int64_t write_errors_no_space = 0;
    int64_t write_errors_io = 0;

    void Add(const Stats& o);
  };

  // An upper bound of what an event of `size` serialized bytes adds to a
  // serialized Batch: its bytes plus the field's tag and length.
  static uint64_t EventBytes(size_t size);

  Batcher(Options options, Spool* spool, Clock* clock);
  Batcher(const Batcher&) = delete;
  Batcher& operator=(const Batcher&) = delete;

  // Takes one accepted event; writes the batch when it is full.
  void Add(v1::Event event) override;
  void AddWithId(v1::Event event, uint64_t id) override;
  void AddPlainStep(const codec::PlainStep& step) override;
  // Flush, then not OK if any batch was dropped since the last Sync or the
  // spool's Commit failed: a power loss now loses nothing accepted before.
  absl::Status Sync() override;
  // Writes the batch if its delay has passed, and commits the spool at
  // most once per `batch_delay` (a power loss loses at most that much).
  void Poll();
  // Writes the batch now and commits the spool (shutdown, client spool
  // files).
  void Flush();
  // Logs the drops and failed commits the rate limits suppressed in
  // intervals that have ended (`all`: also in the
  // running ones, at shutdown), if any.
  void FlushSuppressedLogs(bool all = false) ABSL_LOCKS_EXCLUDED(mu_);

  // When Poll will write the waiting batch; nullopt when none waits.
  std::optional<int64_t> DeadlineNanos() const;
  size_t buffered() const;
  Stats stats() const;

 private:
  // Adds an event of `size` serialized bytes, which `write` writes at the
  // address it is given, with its id (0: none).
  void AddSerialized(size_t size, uint64_t id,
                     absl::FunctionRef<void(uint8_t*)> write)
      ABSL_LOCKS_EXCLUDED(mu_);
  // Appends its events field (tag, length, the bytes `write` writes).
  void AppendEventLocked(size_t size, absl::FunctionRef<void(uint8_t*)> write)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void FlushLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void ReportDrop(size_t events, const absl::Status& status)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Spool::Commit; a failure is counted (spool_write_errors_total, io) and
  // logged at most once a minute.
  absl::Status Commit() ABSL_LOCKS_EXCLUDED(mu_);
  // Counts the failed writes between two Stats() of the spool by reason.
  void CountWriteError(const SpoolStats& before, const SpoolStats& after)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const Options options_;
  Spool* const spool_;
  Clock* const clock_;
  LogLimiter drop_log_;
  LogLimiter commit_log_ ABSL_GUARDED_BY(mu_);

  mutable absl::Mutex mu_;
  // The batch's events, serialized as its events fields (tag, length,
  // Event), and how many; the buffer is kept from batch to batch.
  std::string wire_ ABSL_GUARDED_BY(mu_);
  size_t count_ ABSL_GUARDED_BY(mu_) = 0;
  std::vector<uint64_t> ids_ ABSL_GUARDED_BY(mu_);  // of the events, 0: none
  bool has_ids_ ABSL_GUARDED_BY(mu_) = false;       // any of ids_ is not 0
  absl::Status dropped_since_sync_ ABSL_GUARDED_BY(mu_);
  int64_t first_ns_ ABSL_GUARDED_BY(mu_) = 0;  // arrival of the first event
  uint64_t bytes_ ABSL_GUARDED_BY(mu_) = 0;    // Batch bytes, upper bound
  Stats stats_ ABSL_GUARDED_BY(mu_);
  int64_t dropped_unlogged_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t last_commit_ns_ ABSL_GUARDED_BY(mu_) = 0;  // Poll's last Commit
};

}  // namespace goodput::agent

#endif  // GOODPUT_AGENT_BATCHER_H_
