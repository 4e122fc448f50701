#include "clients/cpp/client_spool_file.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "clients/cpp/event_json.h"
#include "util/uuid.h"

namespace goodput::client {
namespace {

absl::Status Errno(const std::string& what, const std::string& path) {
  return absl::UnavailableError(absl::StrCat("client spool: cannot ", what, " ",
                                             path, ": ", strerror(errno)));
}

}  // namespace

ClientSpoolFile::~ClientSpoolFile() { (void)Close(); }

absl::Status ClientSpoolFile::Open() {
  std::error_code ec;
  if (std::filesystem::create_directories(dir_, ec)) {
    ::chmod(dir_.c_str(), 01777);  // shared by every user's jobs, like /tmp
  }
  absl::StatusOr<std::string> id = RandomUuid();
  if (!id.ok()) return id.status();
  path_ = absl::StrCat(dir_, "/spool-", ::getpid(), "-",
                       absl::StrReplaceAll(*id, {{"-", ""}}), ".open");
  fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd_ < 0) return Errno("create", path_);
  return absl::OkStatus();
}

absl::Status ClientSpoolFile::Append(const v1::Event& event) {
  absl::StatusOr<std::string> id = RandomUuid();
  if (!id.ok()) return id.status();
  return Append(*id, event);
}

absl::Status ClientSpoolFile::Append(const std::string& id,
                                     const v1::Event& event) {
  if (fd_ < 0) {
    absl::Status opened = Open();
    if (!opened.ok()) return opened;
  }
  const std::string line = SpoolRecordLine(id, event);
  ssize_t n = ::write(fd_, line.data(), line.size());
  if (n != static_cast<ssize_t>(line.size())) return Errno("append to", path_);
  return absl::OkStatus();
}

absl::Status ClientSpoolFile::Close() {
  if (fd_ < 0) return absl::OkStatus();
  ::close(fd_);
  fd_ = -1;
  std::string done = path_.substr(0, path_.size() - 5) + ".jsonl";
  if (::rename(path_.c_str(), done.c_str()) != 0) return Errno("rename", path_);
  return absl::OkStatus();
}

}  // namespace goodput::client
