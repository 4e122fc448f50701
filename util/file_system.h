// FileSystem: the narrow set of file operations the agent's spool needs
// (write with or without fsync or read-back, file and directory fsync,
// rename, read, list, size, remove, lock), so
// tests can put a fault-injecting fake (util/fault_injecting_file_system.h)
// under the spool. The real one is util/posix_file_system.h. Paths are plain
// strings; errors are absl::Status built from errno (ENOSPC and EDQUOT are
// ResourceExhausted, a missing file is NotFound). Implementations must be
// thread-safe.
#ifndef GOODPUT_UTIL_FILE_SYSTEM_H_
#define GOODPUT_UTIL_FILE_SYSTEM_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace goodput {

class FileSystem {
 public:
  // An exclusive lock on a file, held until this object is destroyed.
  class Lock {
   public:
    virtual ~Lock() = default;
  };

  virtual ~FileSystem() = default;

  // Creates `dir` and its missing parents; OK if it exists.
  virtual absl::Status CreateDirs(const std::string& dir) = 0;
  // Creates or truncates `path`, writes all of `data`, fsyncs and closes it.
  virtual absl::Status WriteFile(const std::string& path,
                                 absl::string_view data) = 0;
  // The same without the fsync: the data is in the page cache (it survives
  // a killed process, not a power loss) until SyncFile.
  virtual absl::Status WriteFileUnsynced(const std::string& path,
                                         absl::string_view data) = 0;
  // WriteFileUnsynced, then the file read back and compared with `data`:
  // DataLoss if it holds other bytes (a torn write), the file left as it
  // is. This one reads it with ReadFile; PosixFileSystem reads it back
  // through the descriptor it wrote with (one open, not two).
  virtual absl::Status WriteFileVerified(const std::string& path,
                                         absl::string_view data) {
    absl::Status s = WriteFileUnsynced(path, data);
    if (!s.ok()) return s;
    absl::StatusOr<std::string> back = ReadFile(path);
    if (!back.ok()) return back.status();
    if (*back == data) return absl::OkStatus();
    return TornWrite(path, back->size(), data.size());
  }
  // Makes the data of the file `path` durable (fdatasync): NotFound if it
  // does not exist.
  virtual absl::Status SyncFile(const std::string& path) = 0;
  // rename(2): atomically replaces `to`.
  virtual absl::Status Rename(const std::string& from,
                              const std::string& to) = 0;
  // fsyncs the directory `dir` (makes renames and creations durable).
  virtual absl::Status SyncDir(const std::string& dir) = 0;
  virtual absl::StatusOr<std::string> ReadFile(const std::string& path) = 0;
  // Names of the entries of `dir`, without "." and "..", in no order.
  virtual absl::StatusOr<std::vector<std::string>> ListDir(
      const std::string& dir) = 0;
  virtual absl::StatusOr<uint64_t> FileSize(const std::string& path) = 0;
  virtual bool Exists(const std::string& path) = 0;
  // Removes the file `path`: NotFound if it does not exist.
  virtual absl::Status Remove(const std::string& path) = 0;
  // Takes an exclusive advisory lock (flock) on `path`, creating it, and
  // writes `owner` into it. FailedPrecondition naming the holder's `owner`
  // text when another open file (any process) holds it. The lock dies with
  // the process, so a killed holder never leaves it stale.
  virtual absl::StatusOr<std::unique_ptr<Lock>> LockFile(
      const std::string& path, absl::string_view owner) = 0;

 protected:
  // WriteFileVerified's error: `read` bytes read back of `written`.
  static absl::Status TornWrite(const std::string& path, uint64_t read,
                                uint64_t written) {
    return absl::DataLossError(
        absl::StrCat("write ", path, ": read back ", read, " of ", written,
                     " bytes, not what was written (torn write)"));
  }
};

}  // namespace goodput

#endif  // GOODPUT_UTIL_FILE_SYSTEM_H_
