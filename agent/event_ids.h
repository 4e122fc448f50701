// EventIds: the ids of the events the agent took with an id (socket lines
// in ack mode, client spool files), so that an event a client sends again
// (it saw no ack before a reconnect, or spooled it to its spool file) is
// counted once (docs/delivery.md, "The ack mode"). Ids are kept as 64-bit
// FNV-1a hashes of the client's id string, the newest `max_ids` of them.
//
// Survives the agent's restart through a journal file: the Spool records
// a batch's ids in it right after the batch file is durable (Record) and
// syncs it before it deletes acknowledged batches (Sync); at Open the
// spool adds the ids of its newest batch, the only one a kill can leave
// unrecorded. Journal: 8-byte little-endian hashes, appended; rewritten to
// the newest `max_ids` when it holds twice that.
//
// Owns the journal's file descriptor. Thread-safe (one mutex).
#ifndef GOODPUT_AGENT_EVENT_IDS_H_
#define GOODPUT_AGENT_EVENT_IDS_H_

#include <cstdint>
#include <deque>
#include <memory>
#include <string>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/types/span.h"

namespace goodput::agent {

class EventIds {
 public:
  // Loads (or creates) the journal at `path`.
  static absl::StatusOr<std::unique_ptr<EventIds>> Open(std::string path,
                                                        size_t max_ids);
  ~EventIds();
  EventIds(const EventIds&) = delete;
  EventIds& operator=(const EventIds&) = delete;

  // The id's hash: FNV-1a 64, never 0 (0 means "no id").
  static uint64_t Hash(absl::string_view id);

  // Takes `id` for an event about to be spooled: false if it is known
  // (taken before, or recorded by an earlier run): a duplicate.
  bool Claim(uint64_t id);
  // The events of `ids` were not spooled after all (dropped): forgets them,
  // so that the client's resend is taken.
  void Release(absl::Span<const uint64_t> ids);
  // The events of `ids` are durable in a spool: appends them to the journal
  // (and knows them). A failed write is returned; the ids stay known.
  absl::Status Record(absl::Span<const uint64_t> ids);
  // Makes the journal durable (before spooled batches are deleted); a no-op
  // when nothing was written since the last successful sync.
  absl::Status Sync();

  bool Contains(uint64_t id) const;
  size_t size() const;
  // fdatasync calls made by Sync so far.
  int64_t syncs() const;

 private:
  EventIds(std::string path, size_t max_ids, int fd);
  bool InsertLocked(uint64_t id) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Rewrites the journal to the ids known now, when it grew past 2x.
  absl::Status CompactLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const std::string path_;
  const size_t max_ids_;

  mutable absl::Mutex mu_;
  int fd_ ABSL_GUARDED_BY(mu_);
  bool unsynced_ ABSL_GUARDED_BY(mu_) = false;  // written since the last sync
  int64_t syncs_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t journal_entries_ ABSL_GUARDED_BY(mu_) = 0;
  absl::flat_hash_set<uint64_t> known_ ABSL_GUARDED_BY(mu_);
  std::deque<uint64_t> order_ ABSL_GUARDED_BY(mu_);  // oldest first
};

}  // namespace goodput::agent

#endif  // GOODPUT_AGENT_EVENT_IDS_H_
