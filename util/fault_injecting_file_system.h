// FaultInjectingFileSystem: a FileSystem for tests that forwards to a real
// one (usually PosixFileSystem on a temporary directory) and makes chosen
// operations fail the way a sick disk does:
//   kNoSpace      WriteFile (or WriteFileUnsynced) writes the first half,
//                 then fails with ENOSPC (the disk filled up mid-file);
//   kTornWrite    WriteFile (or WriteFileUnsynced) writes only the first
//                 half and reports success
//                 (a lying disk or a power loss before the data reached it);
//   kFsyncFails   WriteFile writes everything, then fsync fails (EIO); so
//                 do SyncFile and SyncDir;
//   kRenameFails  Rename fails (EIO) and renames nothing.
// Inject(fault, n) arms a fault for the next n operations it applies to
// (n < 0: until Clear()). Does not own the base file system. Thread-safe.
#ifndef GOODPUT_UTIL_FAULT_INJECTING_FILE_SYSTEM_H_
#define GOODPUT_UTIL_FAULT_INJECTING_FILE_SYSTEM_H_

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "util/file_system.h"

namespace goodput {

class FaultInjectingFileSystem : public FileSystem {
 public:
  enum class Fault { kNoSpace, kTornWrite, kFsyncFails, kRenameFails };

  explicit FaultInjectingFileSystem(FileSystem* base) : base_(base) {}

  void Inject(Fault fault, int times = 1);
  void Clear();
  // How many times `fault` fired so far.
  int fired(Fault fault) const;

  absl::Status CreateDirs(const std::string& dir) override;
  absl::Status WriteFile(const std::string& path,
                         absl::string_view data) override;
  absl::Status WriteFileUnsynced(const std::string& path,
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

 private:
  // Consumes one arming of `fault`; whether it fires now.
  bool Take(Fault fault);
  // The WriteFile fault that fires now, if any (at most one per call).
  std::optional<Fault> TakeWriteFault();

  FileSystem* const base_;
  mutable absl::Mutex mu_;
  std::map<Fault, int> armed_ ABSL_GUARDED_BY(mu_);
  std::map<Fault, int> fired_ ABSL_GUARDED_BY(mu_);
};

}  // namespace goodput

#endif  // GOODPUT_UTIL_FAULT_INJECTING_FILE_SYSTEM_H_
