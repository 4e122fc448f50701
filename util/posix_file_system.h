// PosixFileSystem: FileSystem on the real disk through POSIX calls (open,
// write, fsync, rename, flock, ...). Stateless; thread-safe.
#ifndef GOODPUT_UTIL_POSIX_FILE_SYSTEM_H_
#define GOODPUT_UTIL_POSIX_FILE_SYSTEM_H_

#include <memory>
#include <string>
#include <vector>

#include "util/file_system.h"

namespace goodput {

class PosixFileSystem : public FileSystem {
 public:
  absl::Status CreateDirs(const std::string& dir) override;
  absl::Status WriteFile(const std::string& path,
                         absl::string_view data) override;
  absl::Status WriteFileUnsynced(const std::string& path,
                                 absl::string_view data) override;
  absl::Status WriteFileVerified(const std::string& path,
                                 absl::string_view data) override;
  absl::Status SyncFile(const std::string& path) override;
  absl::Status Rename(const std::string& from, const std::string& to) override;
  absl::Status SyncDir(const std::string& dir) override;
  absl::StatusOr<std::string> ReadFile(const std::string& path) override;
  absl::StatusOr<std::vector<std::string>> ListDir(
      const std::string& dir) override;
  absl::StatusOr<uint64_t> FileSize(const std::string& path) override;
  bool Exists(const std::string& path) override;
  absl::Status Remove(const std::string& path) override;
  absl::StatusOr<std::unique_ptr<Lock>> LockFile(
      const std::string& path, absl::string_view owner) override;

  // WriteFileVerified's check of the open file `fd` (of `path`), read
  // from its start with pread: OK if it holds exactly `expected`, else
  // DataLoss naming `path` and the bytes read back, or the offset of the
  // first byte that differs.
  static absl::Status VerifyReadBack(int fd, absl::string_view expected,
                                     const std::string& path);

 private:
  // WriteFile (`sync`) or WriteFileUnsynced.
  absl::Status Write(const std::string& path, absl::string_view data,
                     bool sync);
};

}  // namespace goodput

#endif  // GOODPUT_UTIL_POSIX_FILE_SYSTEM_H_
