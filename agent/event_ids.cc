#include "agent/event_ids.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include <string>
#include <utility>

#include "absl/strings/str_cat.h"

namespace goodput::agent {
namespace {

absl::Status Errno(absl::string_view what, const std::string& path) {
  return absl::ErrnoToStatus(
      errno, absl::StrCat("event id journal ", path, ": ", what));
}

void PutHash(uint64_t id, std::string* out) {
  for (int i = 0; i < 8; ++i) out->push_back(static_cast<char>(id >> (8 * i)));
}

uint64_t GetHash(const char* p) {
  uint64_t id = 0;
  for (int i = 7; i >= 0; --i)
    id = (id << 8) | static_cast<unsigned char>(p[i]);
  return id;
}

absl::Status WriteAll(int fd, absl::string_view data, const std::string& path) {
  while (!data.empty()) {
    ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return Errno("write", path);
    data.remove_prefix(static_cast<size_t>(n));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> ReadAll(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0 && errno == ENOENT) return std::string();
  if (fd < 0) return Errno("open", path);
  std::string data;
  char buffer[65536];
  ssize_t n;
  while ((n = ::read(fd, buffer, sizeof(buffer))) != 0) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      absl::Status s = Errno("read", path);
      ::close(fd);
      return s;
    }
    data.append(buffer, static_cast<size_t>(n));
  }
  ::close(fd);
  return data;
}

}  // namespace

absl::StatusOr<std::unique_ptr<EventIds>> EventIds::Open(std::string path,
                                                         size_t max_ids) {
  auto data = ReadAll(path);
  if (!data.ok()) return data.status();
  int fd =
      ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return Errno("open", path);
  std::unique_ptr<EventIds> ids(new EventIds(std::move(path), max_ids, fd));
  absl::MutexLock lock(&ids->mu_);
  // A torn last entry (a kill mid-write) is ignored.
  for (size_t at = 0; at + 8 <= data->size(); at += 8) {
    ids->InsertLocked(GetHash(data->data() + at));
  }
  ids->journal_entries_ = data->size() / 8;
  if (data->size() % 8 != 0) {
    absl::Status s = ids->CompactLocked();  // drop the torn bytes
    if (!s.ok()) return s;
  }
  return ids;
}

EventIds::EventIds(std::string path, size_t max_ids, int fd)
    : path_(std::move(path)), max_ids_(max_ids), fd_(fd) {}

EventIds::~EventIds() {
  absl::MutexLock lock(&mu_);
  if (fd_ >= 0) ::close(fd_);
}

uint64_t EventIds::Hash(absl::string_view id) {
  uint64_t h = 14695981039346656037ull;
  for (char c : id) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ull;
  }
  return h == 0 ? 1 : h;
}

bool EventIds::Claim(uint64_t id) {
  absl::MutexLock lock(&mu_);
  return InsertLocked(id);
}

void EventIds::Release(absl::Span<const uint64_t> ids) {
  absl::MutexLock lock(&mu_);
  for (uint64_t id : ids) known_.erase(id);  // order_ forgets it lazily
}

absl::Status EventIds::Record(absl::Span<const uint64_t> ids) {
  absl::MutexLock lock(&mu_);
  std::string data;
  for (uint64_t id : ids) {
    if (id == 0) continue;
    InsertLocked(id);
    PutHash(id, &data);
  }
  if (data.empty()) return absl::OkStatus();
  unsynced_ = true;
  absl::Status s = WriteAll(fd_, data, path_);
  journal_entries_ += data.size() / 8;
  if (s.ok() && journal_entries_ > 2 * max_ids_) s = CompactLocked();
  return s;
}

absl::Status EventIds::Sync() {
  absl::MutexLock lock(&mu_);
  if (!unsynced_) return absl::OkStatus();
  ++syncs_;
  if (::fdatasync(fd_) != 0) return Errno("fdatasync", path_);
  unsynced_ = false;
  return absl::OkStatus();
}

int64_t EventIds::syncs() const {
  absl::MutexLock lock(&mu_);
  return syncs_;
}

bool EventIds::Contains(uint64_t id) const {
  absl::MutexLock lock(&mu_);
  return known_.contains(id);
}

size_t EventIds::size() const {
  absl::MutexLock lock(&mu_);
  return known_.size();
}

bool EventIds::InsertLocked(uint64_t id) {
  if (id == 0 || !known_.insert(id).second) return false;
  order_.push_back(id);
  while (order_.size() > max_ids_) {
    known_.erase(order_.front());
    order_.pop_front();
  }
  return true;
}

absl::Status EventIds::CompactLocked() {
  std::string data;
  data.reserve(order_.size() * 8);
  for (uint64_t id : order_) {
    if (known_.contains(id)) PutHash(id, &data);
  }
  const std::string tmp = absl::StrCat(path_, ".tmp");
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return Errno("open", tmp);
  absl::Status s = WriteAll(fd, data, tmp);
  if (s.ok() && ::fsync(fd) != 0) s = Errno("fsync", tmp);
  ::close(fd);
  if (s.ok() && ::rename(tmp.c_str(), path_.c_str()) != 0) {
    s = Errno("rename", tmp);
  }
  if (!s.ok()) return s;
  int fresh = ::open(path_.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
  if (fresh < 0) return Errno("open", path_);
  ::close(fd_);
  fd_ = fresh;
  journal_entries_ = data.size() / 8;
  return absl::OkStatus();
}

}  // namespace goodput::agent
