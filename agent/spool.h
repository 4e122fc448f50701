// Spool: the agent's durable queue of event batches on disk, and its
// identity (SPEC section 5). Owns its directory's contents and the lock on
// it; reads and writes through a FileSystem (util/file_system.h) it does not
// own unless none is given. Thread-safe (one mutex; the batcher appends
// while the uplink reads and acks).
//
// Layout of the directory:
//   lock           flock'ed by the one process using this identity; holds
//                  "pid N". Open fails while another process holds it.
//   agent_id       the agent's UUID, created on first start and never
//                  changed (a new directory is a new agent).
//   last_sequence  a sequence no batch has gone above (decimal), so
//                  sequences never go back even after every batch was
//                  acknowledged and deleted. Append reserves sequences in
//                  blocks of 1024 (rewriting it once per block); a clean
//                  close writes the last one assigned. After a kill the
//                  next run skips the rest of the block (the server takes
//                  a gap in an agent's sequences).
//   batch-<20-digit sequence>-<19-digit received ns>.pb
//                  one batch: the 4 bytes "GPB1", the CRC-32C of the rest
//                  (4 bytes, little-endian), then one serialized
//                  goodput.v1.Batch (agent_id, sequence, events). Files of
//                  earlier agents have no header (just the Batch) and are
//                  still read. The second number is when the batch's first
//                  event reached the agent (Unix ns): the age metric.
//   dead-letter/   batches that are never sent again (DeadLetter): the
//                  batch file as it was, and <file>.reason, one line why.
//   *.tmp          a write in progress; removed at Open.
// Every file is written to a .tmp name, read back and compared, and renamed
// into place. The small files (agent_id, last_sequence) are fsync'ed before
// their rename, so a crash leaves the old file or the new one. A batch file
// costs one fsync too, but not in Append: after its rename it goes to a
// FileSyncer, whose threads fsync several batch files at once, and the next
// Commit waits for those fsyncs, then makes the renames durable with one
// directory fsync for every batch appended before it (a group commit). A
// kill -9 loses nothing Append returned (the file is complete in the page
// cache and renamed); a power loss nothing Commit returned. A power loss
// may leave a batch appended after the last Commit torn: it fails its
// checksum and goes to dead-letter/ as corrupt.
//
// Bounded: Append refuses with ResourceExhausted, writing nothing, when the
// batch would take the batch files over `max_bytes`, and when the disk is
// full (ENOSPC, EDQUOT): both make the spool "full" until an Append works
// or an Ack frees space. The caller decides what to do with the events
// (the agent drops and counts them).
#ifndef GOODPUT_AGENT_SPOOL_H_
#define GOODPUT_AGENT_SPOOL_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "agent/event_ids.h"
#include "agent/file_syncer.h"
#include "proto/event.pb.h"
#include "proto/service.pb.h"
#include "util/file_system.h"

namespace goodput::agent {

struct SpoolStats {
  uint64_t bytes = 0;                         // of the pending batch files
  uint64_t pending_batches = 0;               // appended, not acknowledged
  std::optional<int64_t> oldest_received_ns;  // of the oldest pending batch
  uint64_t last_sequence = 0;                 // highest sequence ever assigned
  bool full = false;  // an Append was refused and nothing was acked since
  // The last Append failed on an I/O error (not a full spool): the disk is
  // failing. Cleared by the next Append that works.
  bool failing = false;
  std::string last_error;          // of the last failed Append; empty if none
  uint64_t write_errors = 0;       // failed Appends (full disk or I/O)
  uint64_t no_space = 0;           // of them, refused for ENOSPC/EDQUOT
  uint64_t dead_letters = 0;       // batches moved to dead-letter/ since Open
  uint64_t sync_errors = 0;        // failed Commits (directory fsync)
  uint64_t reserved_sequence = 0;  // in the last_sequence file
};

class Spool {
 public:
  struct Options {
    std::string dir;                         // created if missing
    uint64_t max_bytes = uint64_t{1} << 30;  // of batch files
    FileSystem* fs = nullptr;                // not owned; null: the real disk
    uint64_t sequence_block = 1024;  // sequences reserved per last_sequence
    // Threads fsyncing batch files at once, and batch files appended but
    // not yet fsync'ed at most (Append waits beyond it).
    int sync_threads = 8;
    size_t max_unsynced = 64;
  };

  // Opens (or creates) the spool in `options.dir`, reading what a previous
  // run left: identity, high-water mark and pending batches.
  static absl::StatusOr<std::unique_ptr<Spool>> Open(const Options& options);

  // Commits, and writes the last sequence assigned (no gap at restart).
  ~Spool();
  Spool(const Spool&) = delete;
  Spool& operator=(const Spool&) = delete;

  const std::string& agent_id() const { return agent_id_; }
  const std::string& dir() const { return dir_; }

  // Called (outside the lock) after every successful Append; set it once,
  // before the spool is shared between threads.
  void SetAppendListener(std::function<void()> listener);
  // Where events' client ids are kept (not owned): Append records a
  // batch's ids in it, Ack syncs it before deleting batches. Records the
  // newest pending batch's ids now (a kill may have come between its write
  // and its Record). Set it once, before the spool is shared.
  void SetEventIds(EventIds* ids);

  // Writes `events` as the next batch (renamed into place: a kill -9 keeps
  // it; Commit makes it survive a power loss) and returns its sequence.
  // `received_ns` is when its first event reached the agent. On any error
  // nothing is written and no sequence is used. Waits while
  // Options::max_unsynced batch files wait for their fsync.
  absl::StatusOr<uint64_t> Append(std::vector<v1::Event> events,
                                  int64_t received_ns);
  // The same, with each event's id hash (0: none; same size as `events`,
  // or empty), kept in the batch file and recorded in Options::ids.
  absl::StatusOr<uint64_t> Append(std::vector<v1::Event> events,
                                  int64_t received_ns,
                                  std::vector<uint64_t> ids);
  // The same with the `count` events already serialized as a Batch's
  // events fields, one after another (tag 3, length, the Event's bytes;
  // the batcher's form): the file is byte for byte what Append writes for
  // those events. The bytes are not parsed (the batcher wrote them).
  absl::StatusOr<uint64_t> AppendWire(absl::string_view events_wire,
                                      size_t count, int64_t received_ns,
                                      std::vector<uint64_t> ids);

  // Makes every batch appended so far durable against a power loss: waits
  // for their files' fsyncs, then one directory fsync (none if nothing was
  // appended since the last). An error (a file's or the directory's fsync)
  // makes the spool failing (SpoolStats::failing, sync_errors) and the
  // batches stay to be committed by the next call.
  absl::Status Commit();

  // Sequences of the pending batches, ascending.
  std::vector<uint64_t> Pending() const;
  // The smallest pending sequence above `sequence`, if any.
  std::optional<uint64_t> NextPendingAfter(uint64_t sequence) const;

  // The pending batch `sequence`: NotFound if it is not pending (or its
  // file vanished), DataLoss if the file is not that batch, another error
  // if the file cannot be read now.
  absl::StatusOr<v1::Batch> Read(uint64_t sequence) const;

  // The pending batch `sequence` as it goes on the wire: its serialized
  // Batch without the agent-local event_ids, found by walking the top-level
  // fields (the events are not parsed: a bad event is the server's to
  // refuse). Errors as Read's: DataLoss if the checksum fails or the bytes
  // are not batch `sequence` of this agent.
  absl::StatusOr<std::string> ReadWire(uint64_t sequence) const;

  // The server acknowledged `sequence`: deletes it and every pending batch
  // below it (their files once they left the pending list, outside the
  // lock: Append does not wait for the unlinks). A failed unlink is
  // returned and leaves that batch and the ones above it pending. Acking a
  // sequence that is not pending is not an error.
  absl::Status Ack(uint64_t sequence);

  // Deletes the one batch `sequence` (e.g. an unreadable file).
  absl::Status Discard(uint64_t sequence);

  // Moves the batch `sequence` to dead-letter/ with `reason` beside it, so
  // it is never sent again but can be inspected (the server refused it as
  // invalid, or its file is corrupt). Not pending afterwards even on error.
  absl::Status DeadLetter(uint64_t sequence, absl::string_view reason);

  SpoolStats Stats() const;

 private:
  struct Entry {
    std::string file;  // name inside dir_
    int64_t received_ns = 0;
    uint64_t bytes = 0;
  };

  Spool(const Options& options, std::unique_ptr<FileSystem> own_fs,
        std::unique_ptr<FileSystem::Lock> lock, std::string agent_id,
        uint64_t last_sequence, std::map<uint64_t, Entry> pending);

  // The checked payload of the pending batch `sequence`'s file, and its
  // path (for errors).
  absl::StatusOr<std::string> ReadPayload(uint64_t sequence,
                                          std::string* path) const;
  absl::StatusOr<uint64_t> WriteBatch(absl::string_view events_wire,
                                      int64_t received_ns,
                                      std::vector<uint64_t> ids);

  // Makes sure last_sequence covers `sequence` (reserves a new block).
  absl::Status ReserveLocked(uint64_t sequence)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Records a failed Append: full for ENOSPC, failing otherwise.
  absl::Status NoteWriteError(absl::Status s)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Ack's deletions, outside mu_; the entries from the first that fails
  // are pending again.
  absl::Status RemoveAcked(std::vector<std::pair<uint64_t, Entry>> gone)
      ABSL_LOCKS_EXCLUDED(mu_);
  // Removes the file of `it` and forgets it.
  absl::Status RemoveLocked(std::map<uint64_t, Entry>::iterator it)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const std::string dir_;
  const uint64_t max_bytes_;
  const uint64_t sequence_block_;
  std::unique_ptr<FileSystem> own_fs_;  // when Options::fs was null
  FileSystem* const fs_;
  std::unique_ptr<FileSystem::Lock> lock_;  // held for the spool's life
  std::unique_ptr<FileSyncer> syncer_;      // fsyncs the batch files
  EventIds* ids_ = nullptr;                 // SetEventIds
  const std::string agent_id_;
  std::function<void()> listener_;

  absl::Mutex commit_mu_;  // one Commit at a time; taken before mu_
  mutable absl::Mutex mu_;
  uint64_t last_sequence_ ABSL_GUARDED_BY(mu_);
  uint64_t reserved_ ABSL_GUARDED_BY(mu_);      // in the last_sequence file
  bool unsynced_ ABSL_GUARDED_BY(mu_) = false;  // renames since Commit
  std::map<uint64_t, Entry> pending_ ABSL_GUARDED_BY(mu_);
  uint64_t bytes_ ABSL_GUARDED_BY(mu_) = 0;
  bool full_ ABSL_GUARDED_BY(mu_) = false;
  bool failing_ ABSL_GUARDED_BY(mu_) = false;
  std::string last_error_ ABSL_GUARDED_BY(mu_);
  uint64_t write_errors_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t no_space_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t dead_letters_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t sync_errors_ ABSL_GUARDED_BY(mu_) = 0;
};

// Appends one Batch events field to `wire` (tag 3, the length `size`, then
// the event's `size` bytes, which `write` puts at the pointer it gets): the
// form Spool::AppendWire takes.
void AppendEventsField(size_t size, absl::FunctionRef<void(uint8_t*)> write,
                       std::string* wire);

}  // namespace goodput::agent

#endif  // GOODPUT_AGENT_SPOOL_H_
