// Spool: the agent's durable queue of event batches on disk, and its
// identity (SPEC section 5). Owns its directory's contents; thread-safe
// (one mutex; the batcher appends while the uplink reads and acks).
//
// Layout of the directory:
//   agent_id       the agent's UUID, created on first start and never
//                  changed (a new directory is a new agent).
//   last_sequence  the highest sequence ever assigned (decimal), written
//                  atomically on every Append, so sequences never go back
//                  even after every batch was acknowledged and deleted.
//   batch-<20-digit sequence>-<19-digit received ns>.pb
//                  one serialized goodput.v1.Batch (agent_id, sequence,
//                  events). The second number is when the batch's first
//                  event reached the agent (Unix ns): the age metric.
//   *.tmp          a write in progress; removed at Open.
// Every file is written to a .tmp name, fsync'ed, renamed into place and
// the directory fsync'ed, so a crash leaves the old file or the new one.
//
// Bounded: Append refuses with ResourceExhausted, writing nothing, when the
// batch would take the batch files over `max_bytes`. The caller decides
// what to do with the events (the agent drops and counts them).
#ifndef GOODPUT_AGENT_SPOOL_H_
#define GOODPUT_AGENT_SPOOL_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "proto/event.pb.h"
#include "proto/service.pb.h"

namespace goodput::agent {

struct SpoolStats {
  uint64_t bytes = 0;                         // of the pending batch files
  uint64_t pending_batches = 0;               // appended, not acknowledged
  std::optional<int64_t> oldest_received_ns;  // of the oldest pending batch
  uint64_t last_sequence = 0;                 // highest sequence ever assigned
  bool full = false;  // an Append was refused and nothing was acked since
};

class Spool {
 public:
  struct Options {
    std::string dir;                         // created if missing
    uint64_t max_bytes = uint64_t{1} << 30;  // of batch files
  };

  // Opens (or creates) the spool in `options.dir`, reading what a previous
  // run left: identity, high-water mark and pending batches.
  static absl::StatusOr<std::unique_ptr<Spool>> Open(const Options& options);

  Spool(const Spool&) = delete;
  Spool& operator=(const Spool&) = delete;

  const std::string& agent_id() const { return agent_id_; }
  const std::string& dir() const { return dir_; }

  // Called (outside the lock) after every successful Append; set it once,
  // before the spool is shared between threads.
  void SetAppendListener(std::function<void()> listener);

  // Writes `events` durably as the next batch and returns its sequence.
  // `received_ns` is when its first event reached the agent. On any error
  // nothing is written and no sequence is used.
  absl::StatusOr<uint64_t> Append(std::vector<v1::Event> events,
                                  int64_t received_ns);

  // Sequences of the pending batches, ascending.
  std::vector<uint64_t> Pending() const;
  // The smallest pending sequence above `sequence`, if any.
  std::optional<uint64_t> NextPendingAfter(uint64_t sequence) const;

  // The pending batch `sequence`: NotFound if it is not pending (or its
  // file vanished), DataLoss if the file is not that batch, another error
  // if the file cannot be read now.
  absl::StatusOr<v1::Batch> Read(uint64_t sequence) const;

  // The server acknowledged `sequence`: deletes it and every pending batch
  // below it. Acking a sequence that is not pending is not an error.
  absl::Status Ack(uint64_t sequence);

  // Deletes the one batch `sequence` (e.g. an unreadable file).
  absl::Status Discard(uint64_t sequence);

  SpoolStats Stats() const;

 private:
  struct Entry {
    std::string file;  // name inside dir_
    int64_t received_ns = 0;
    uint64_t bytes = 0;
  };

  Spool(std::string dir, uint64_t max_bytes, std::string agent_id,
        uint64_t last_sequence, std::map<uint64_t, Entry> pending);

  absl::StatusOr<uint64_t> WriteBatch(std::vector<v1::Event> events,
                                      int64_t received_ns);
  // Removes the file of `it` and forgets it.
  absl::Status RemoveLocked(std::map<uint64_t, Entry>::iterator it)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const std::string dir_;
  const uint64_t max_bytes_;
  const std::string agent_id_;
  std::function<void()> listener_;

  mutable absl::Mutex mu_;
  uint64_t last_sequence_ ABSL_GUARDED_BY(mu_);
  std::map<uint64_t, Entry> pending_ ABSL_GUARDED_BY(mu_);
  uint64_t bytes_ ABSL_GUARDED_BY(mu_) = 0;
  bool full_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace goodput::agent

#endif  // GOODPUT_AGENT_SPOOL_H_
