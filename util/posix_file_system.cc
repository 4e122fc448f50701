#include "util/posix_file_system.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <optional>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

namespace goodput {
namespace {

absl::Status Errno(int err, absl::string_view what, const std::string& path) {
  return absl::ErrnoToStatus(err, absl::StrCat(what, " ", path));
}

absl::Status Errno(absl::string_view what, const std::string& path) {
  return Errno(errno, what, path);
}

// Closes `fd`, keeping errno of the failure before it.
void CloseKeepingErrno(int fd) {
  const int saved = errno;
  ::close(fd);
  errno = saved;
}

// Opens `path` with `flags`, calls `sync` (fsync or fdatasync, named
// `what` in the error) on it and closes it.
absl::Status OpenAndSync(const std::string& path, int flags, int (*sync)(int),
                         absl::string_view what) {
  int fd = ::open(path.c_str(), flags);
  if (fd < 0) return Errno("open", path);
  if (sync(fd) != 0) {
    absl::Status s = Errno(what, path);
    CloseKeepingErrno(fd);
    return s;
  }
  ::close(fd);
  return absl::OkStatus();
}

absl::Status WriteAll(int fd, absl::string_view data, const std::string& path) {
  while (!data.empty()) {
    ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Errno("write", path);
    data.remove_prefix(static_cast<size_t>(n));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> ReadAll(int fd, const std::string& path) {
  std::string out;
  char buf[65536];
  while (true) {
    ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Errno("read", path);
    if (n == 0) return out;
    out.append(buf, static_cast<size_t>(n));
  }
}

// The offset of the first byte of `got` that differs from `want` (at
// least as long); nullopt if none does.
std::optional<size_t> FirstDifference(absl::string_view got,
                                      absl::string_view want) {
  if (std::memcmp(got.data(), want.data(), got.size()) == 0) {
    return std::nullopt;
  }
  return std::mismatch(got.begin(), got.end(), want.begin()).first -
         got.begin();
}

class PosixLock : public FileSystem::Lock {
 public:
  explicit PosixLock(int fd) : fd_(fd) {}
  ~PosixLock() override { ::close(fd_); }  // releases the flock

 private:
  const int fd_;
};

// Replaces the content of the locked file `fd` with `owner`.
absl::Status WriteOwner(int fd, absl::string_view owner,
                        const std::string& path) {
  if (::ftruncate(fd, 0) != 0) return Errno("ftruncate", path);
  if (::lseek(fd, 0, SEEK_SET) != 0) return Errno("lseek", path);
  return WriteAll(fd, absl::StrCat(owner, "\n"), path);
}

}  // namespace

absl::Status PosixFileSystem::CreateDirs(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return Errno(ec.value(), "mkdir", dir);
  return absl::OkStatus();
}

absl::Status PosixFileSystem::WriteFile(const std::string& path,
                                        absl::string_view data) {
  return Write(path, data, /*sync=*/true);
}

absl::Status PosixFileSystem::WriteFileUnsynced(const std::string& path,
                                                absl::string_view data) {
  return Write(path, data, /*sync=*/false);
}

absl::Status PosixFileSystem::Write(const std::string& path,
                                    absl::string_view data, bool sync) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return Errno("open", path);
  absl::Status s = WriteAll(fd, data, path);
  if (s.ok() && sync && ::fsync(fd) != 0) s = Errno("fsync", path);
  if (!s.ok()) {
    CloseKeepingErrno(fd);
    return s;
  }
  if (::close(fd) != 0) return Errno("close", path);
  return absl::OkStatus();
}

absl::Status PosixFileSystem::WriteFileVerified(const std::string& path,
                                                absl::string_view data) {
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return Errno("open", path);
  absl::Status s = WriteAll(fd, data, path);
  if (s.ok()) s = VerifyReadBack(fd, data, path);
  if (!s.ok()) {
    CloseKeepingErrno(fd);
    return s;
  }
  if (::close(fd) != 0) return Errno("close", path);
  return absl::OkStatus();
}

absl::Status PosixFileSystem::VerifyReadBack(int fd, absl::string_view expected,
                                             const std::string& path) {
  char buf[65536];
  uint64_t read = 0;
  while (true) {
    const ssize_t n = ::pread(fd, buf, sizeof(buf), static_cast<off_t>(read));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Errno("read back", path);
    if (n == 0) break;
    const absl::string_view got(buf, static_cast<size_t>(n));
    if (read + got.size() > expected.size()) {
      return TornWrite(path, read + got.size(), expected.size());
    }
    if (std::optional<size_t> at =
            FirstDifference(got, expected.substr(read, got.size()))) {
      return absl::DataLossError(
          absl::StrCat("write ", path, ": the byte at offset ", read + *at,
                       " reads back other than written (torn write)"));
    }
    read += got.size();
  }
  if (read == expected.size()) return absl::OkStatus();
  return TornWrite(path, read, expected.size());
}

absl::Status PosixFileSystem::SyncFile(const std::string& path) {
  return OpenAndSync(path, O_RDONLY | O_CLOEXEC, ::fdatasync, "fdatasync");
}

absl::Status PosixFileSystem::Rename(const std::string& from,
                                     const std::string& to) {
  if (::rename(from.c_str(), to.c_str()) != 0) {
    return Errno("rename", absl::StrCat(from, " to ", to));
  }
  return absl::OkStatus();
}

absl::Status PosixFileSystem::SyncDir(const std::string& dir) {
  return OpenAndSync(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC, ::fsync, "fsync");
}

absl::StatusOr<std::string> PosixFileSystem::ReadFile(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Errno("open", path);
  absl::StatusOr<std::string> data = ReadAll(fd, path);
  ::close(fd);
  return data;
}

absl::StatusOr<std::vector<std::string>> PosixFileSystem::ListDir(
    const std::string& dir) {
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return Errno("opendir", dir);
  std::vector<std::string> names;
  errno = 0;
  while (const dirent* entry = ::readdir(d)) {
    const std::string name = entry->d_name;
    if (name != "." && name != "..") names.push_back(name);
  }
  absl::Status s = errno == 0 ? absl::OkStatus() : Errno("readdir", dir);
  ::closedir(d);
  if (!s.ok()) return s;
  return names;
}

absl::StatusOr<uint64_t> PosixFileSystem::FileSize(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return Errno("stat", path);
  return static_cast<uint64_t>(st.st_size);
}

bool PosixFileSystem::Exists(const std::string& path) {
  return ::access(path.c_str(), F_OK) == 0;
}

absl::Status PosixFileSystem::Remove(const std::string& path) {
  if (::unlink(path.c_str()) != 0) return Errno("unlink", path);
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<FileSystem::Lock>> PosixFileSystem::LockFile(
    const std::string& path, absl::string_view owner) {
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return Errno("open", path);
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    absl::StatusOr<std::string> holder = ReadAll(fd, path);
    ::close(fd);
    if (err != EWOULDBLOCK) return Errno(err, "flock", path);
    std::string who =
        holder.ok() ? std::string(absl::StripAsciiWhitespace(*holder)) : "";
    if (who.empty()) who = "another process";
    return absl::FailedPreconditionError(
        absl::StrCat(path, " is locked by ", who));
  }
  absl::Status s = WriteOwner(fd, owner, path);
  if (!s.ok()) {
    ::close(fd);
    return s;
  }
  return std::unique_ptr<Lock>(new PosixLock(fd));
}

}  // namespace goodput
