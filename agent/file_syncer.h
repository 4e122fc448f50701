// FileSyncer: makes files durable (FileSystem::SyncFile, fdatasync) on a
// small pool of threads, so that the device flushes of several files
// overlap instead of queueing one behind the other (on this class of disk
// one flush takes milliseconds whatever it carries; several concurrent
// ones cost little more than one). The Spool adds each batch file right
// after its rename and, at a commit, waits until every file added up to
// then is synced. A failed sync is returned once by the next SyncThrough
// that covers it and retried by the one after, by writing the file again:
// after a failed fsync Linux may have dropped its dirty pages while they
// still read back, so a second fsync of the same file could succeed with
// nothing on disk. Does not own the file system. Thread-safe (one mutex).
#ifndef GOODPUT_AGENT_FILE_SYNCER_H_
#define GOODPUT_AGENT_FILE_SYNCER_H_

#include <cstdint>
#include <deque>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "util/file_system.h"

namespace goodput::agent {

class FileSyncer {
 public:
  // `threads` (at least 1) sync at once; AwaitRoom waits while
  // `max_pending` files are added and not yet synced.
  FileSyncer(FileSystem* fs, int threads, size_t max_pending);
  // Syncs what was added, then stops the threads.
  ~FileSyncer();
  FileSyncer(const FileSyncer&) = delete;
  FileSyncer& operator=(const FileSyncer&) = delete;

  // Blocks while `max_pending` files wait for their sync (a disk slower
  // than the appends slows the appends, as a synchronous fsync would).
  void AwaitRoom();
  // Queues `path` for a sync. `id` (e.g. the batch's sequence) orders the
  // files for SyncThrough; each id is added once.
  void Add(uint64_t id, std::string path);
  // Waits until every file added with an id <= `id` is synced: OK, or the
  // error of a failed sync (reported once; the next call retries it). A
  // file deleted meanwhile (NotFound) needs no sync.
  absl::Status SyncThrough(uint64_t id);
  // Successful SyncFile calls so far.
  int64_t syncs() const;

 private:
  struct Failure {
    std::string path;
    absl::Status error;
    bool reported = false;
  };
  void Run();
  // Syncs `path`; a failure goes to failed_ under `id`.
  void SyncOne(uint64_t id, const std::string& path);
  // Retries (or reports) the failures with ids <= `id`.
  absl::Status RetryFailed(uint64_t id);
  // Writes `path` again from what it reads back: a synced tmp file renamed
  // over it (durable with the directory's next fsync, which a commit does
  // after SyncThrough). A file the uplink deleted meanwhile is NotFound
  // (or comes back as a batch goodputd acknowledged: sent again after a
  // restart, it is acknowledged again as a duplicate).
  absl::Status Rewrite(const std::string& path);

  FileSystem* const fs_;
  const size_t max_pending_;
  mutable absl::Mutex mu_;
  std::deque<std::pair<uint64_t, std::string>> queue_ ABSL_GUARDED_BY(mu_);
  std::set<uint64_t> busy_ ABSL_GUARDED_BY(mu_);  // queued or syncing
  std::map<uint64_t, Failure> failed_ ABSL_GUARDED_BY(mu_);
  int64_t syncs_ ABSL_GUARDED_BY(mu_) = 0;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<std::thread> threads_;
};

}  // namespace goodput::agent

#endif  // GOODPUT_AGENT_FILE_SYNCER_H_
