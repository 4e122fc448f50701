#include "agent/spool.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "util/uuid.h"

namespace goodput::agent {
namespace {

namespace fs = std::filesystem;

constexpr char kAgentIdFile[] = "agent_id";
constexpr char kLastSequenceFile[] = "last_sequence";
constexpr char kTmpSuffix[] = ".tmp";

absl::Status Errno(absl::string_view what, const std::string& path) {
  return absl::ErrnoToStatus(errno, absl::StrCat(what, " ", path));
}

std::string Join(const std::string& dir, absl::string_view name) {
  return absl::StrCat(dir, "/", name);
}

absl::Status FsyncDir(const std::string& dir) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return Errno("open", dir);
  int rc = ::fsync(fd);
  int saved = errno;
  ::close(fd);
  errno = saved;
  return rc == 0 ? absl::OkStatus() : Errno("fsync", dir);
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

// tmp file, fsync, rename, fsync of the directory.
absl::Status WriteFileAtomically(const std::string& dir, absl::string_view name,
                                 absl::string_view data) {
  const std::string path = Join(dir, name);
  const std::string tmp = absl::StrCat(path, kTmpSuffix);
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return Errno("open", tmp);
  absl::Status s = WriteAll(fd, data, tmp);
  if (s.ok() && ::fsync(fd) != 0) s = Errno("fsync", tmp);
  ::close(fd);
  if (s.ok() && ::rename(tmp.c_str(), path.c_str()) != 0) {
    s = Errno("rename", tmp);
  }
  if (!s.ok()) {
    ::unlink(tmp.c_str());
    return s;
  }
  return FsyncDir(dir);
}

absl::StatusOr<std::string> ReadFile(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Errno("open", path);
  std::string out;
  char buf[65536];
  while (true) {
    ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      absl::Status s = Errno("read", path);
      ::close(fd);
      return s;
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return out;
}

std::string BatchFileName(uint64_t sequence, int64_t received_ns) {
  return absl::StrFormat("batch-%020u-%019d.pb", sequence, received_ns);
}

bool ParseBatchFileName(absl::string_view name, uint64_t* sequence,
                        int64_t* received_ns) {
  if (!absl::ConsumePrefix(&name, "batch-") ||
      !absl::ConsumeSuffix(&name, ".pb")) {
    return false;
  }
  std::vector<absl::string_view> parts = absl::StrSplit(name, '-');
  return parts.size() == 2 && parts[0].size() == 20 && parts[1].size() == 19 &&
         absl::SimpleAtoi(parts[0], sequence) &&
         absl::SimpleAtoi(parts[1], received_ns) && *sequence > 0;
}

bool IsUuid(absl::string_view s) {
  if (s.size() != 36) return false;
  for (size_t i = 0; i < s.size(); ++i) {
    bool dash = i == 8 || i == 13 || i == 18 || i == 23;
    if (dash ? s[i] != '-' : !absl::ascii_isxdigit(s[i])) return false;
  }
  return true;
}

struct BatchFile {
  uint64_t sequence = 0;
  std::string name;
  int64_t received_ns = 0;
  uint64_t bytes = 0;
};

// Removes leftovers of interrupted writes and lists the batch files.
absl::StatusOr<std::vector<BatchFile>> ScanDir(const std::string& dir) {
  std::error_code ec;
  std::vector<BatchFile> files;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (absl::EndsWith(name, kTmpSuffix)) {
      fs::remove(entry.path(), ec);
      continue;
    }
    BatchFile f;
    if (!ParseBatchFileName(name, &f.sequence, &f.received_ns)) continue;
    f.name = name;
    f.bytes = fs::file_size(entry.path(), ec);
    if (ec) return absl::InternalError(absl::StrCat(name, ": ", ec.message()));
    files.push_back(std::move(f));
  }
  if (ec) return absl::InternalError(absl::StrCat(dir, ": ", ec.message()));
  return files;
}

// The identity in `dir`, created unless the directory holds batches of an
// identity that was lost.
absl::StatusOr<std::string> LoadOrCreateAgentId(const std::string& dir,
                                                bool has_batches) {
  const std::string path = Join(dir, kAgentIdFile);
  if (::access(path.c_str(), F_OK) == 0) {
    auto text = ReadFile(path);
    if (!text.ok()) return text.status();
    std::string id(absl::StripAsciiWhitespace(*text));
    if (!IsUuid(id)) {
      return absl::DataLossError(absl::StrCat(
          path,
          ": not a UUID; move the spool directory away to start as a "
          "new agent"));
    }
    return id;
  }
  if (has_batches) {
    return absl::FailedPreconditionError(absl::StrCat(
        dir,
        " holds batches but no agent_id file; move it away to start as "
        "a new agent"));
  }
  auto id = RandomUuid();
  if (!id.ok()) return id.status();
  absl::Status s = WriteFileAtomically(dir, kAgentIdFile, *id + "\n");
  if (!s.ok()) return s;
  return id;
}

// The persisted high-water mark (0 when the file does not exist).
absl::StatusOr<uint64_t> LoadLastSequence(const std::string& dir) {
  const std::string path = Join(dir, kLastSequenceFile);
  if (::access(path.c_str(), F_OK) != 0) return uint64_t{0};
  auto text = ReadFile(path);
  if (!text.ok()) return text.status();
  uint64_t value = 0;
  if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(*text), &value)) {
    return absl::DataLossError(absl::StrCat(
        path,
        ": not a number; sequences cannot be trusted, move the spool "
        "directory away to start as a new agent"));
  }
  return value;
}

absl::Status WriteLastSequence(const std::string& dir, uint64_t sequence) {
  return WriteFileAtomically(dir, kLastSequenceFile,
                             absl::StrCat(sequence, "\n"));
}

}  // namespace

absl::StatusOr<std::unique_ptr<Spool>> Spool::Open(const Options& options) {
  std::error_code ec;
  fs::create_directories(options.dir, ec);
  if (ec) {
    return absl::InternalError(
        absl::StrCat("spool_dir ", options.dir, ": ", ec.message()));
  }
  auto files = ScanDir(options.dir);
  if (!files.ok()) return files.status();
  auto agent_id = LoadOrCreateAgentId(options.dir, !files->empty());
  if (!agent_id.ok()) return agent_id.status();
  auto stored = LoadLastSequence(options.dir);
  if (!stored.ok()) return stored.status();
  std::map<uint64_t, Entry> pending;
  uint64_t last = *stored;
  for (BatchFile& f : *files) {
    last = std::max(last, f.sequence);
    pending[f.sequence] = Entry{std::move(f.name), f.received_ns, f.bytes};
  }
  // A crash between a batch's rename and the high-water write: persist the
  // mark now, before the batch can be acked and deleted.
  if (last != *stored) {
    absl::Status s = WriteLastSequence(options.dir, last);
    if (!s.ok()) return s;
  }
  return std::unique_ptr<Spool>(new Spool(options.dir, options.max_bytes,
                                          *std::move(agent_id), last,
                                          std::move(pending)));
}

Spool::Spool(std::string dir, uint64_t max_bytes, std::string agent_id,
             uint64_t last_sequence, std::map<uint64_t, Entry> pending)
    : dir_(std::move(dir)),
      max_bytes_(max_bytes),
      agent_id_(std::move(agent_id)),
      last_sequence_(last_sequence),
      pending_(std::move(pending)) {
  for (const auto& [seq, entry] : pending_) bytes_ += entry.bytes;
}

void Spool::SetAppendListener(std::function<void()> listener) {
  listener_ = std::move(listener);
}

absl::StatusOr<uint64_t> Spool::Append(std::vector<v1::Event> events,
                                       int64_t received_ns) {
  if (events.empty()) return absl::InvalidArgumentError("empty batch");
  absl::StatusOr<uint64_t> sequence =
      WriteBatch(std::move(events), received_ns);
  if (sequence.ok() && listener_) listener_();
  return sequence;
}

absl::StatusOr<uint64_t> Spool::WriteBatch(std::vector<v1::Event> events,
                                           int64_t received_ns) {
  absl::MutexLock lock(&mu_);
  const uint64_t sequence = last_sequence_ + 1;
  v1::Batch batch;
  batch.set_agent_id(agent_id_);
  batch.set_sequence(sequence);
  for (v1::Event& e : events) *batch.add_events() = std::move(e);
  const std::string data = batch.SerializeAsString();
  if (bytes_ + data.size() > max_bytes_) {
    full_ = true;
    return absl::ResourceExhaustedError(absl::StrFormat(
        "spool full: %d of %d bytes used, a batch of %d bytes does not fit",
        bytes_, max_bytes_, data.size()));
  }
  const std::string name = BatchFileName(sequence, received_ns);
  absl::Status s = WriteFileAtomically(dir_, name, data);
  if (s.ok()) s = WriteLastSequence(dir_, sequence);
  if (!s.ok()) {
    ::unlink(Join(dir_, name).c_str());  // nothing written on error
    return s;
  }
  last_sequence_ = sequence;
  pending_[sequence] = Entry{name, received_ns, data.size()};
  bytes_ += data.size();
  return sequence;
}

std::vector<uint64_t> Spool::Pending() const {
  absl::MutexLock lock(&mu_);
  std::vector<uint64_t> out;
  out.reserve(pending_.size());
  for (const auto& [seq, entry] : pending_) out.push_back(seq);
  return out;
}

std::optional<uint64_t> Spool::NextPendingAfter(uint64_t sequence) const {
  absl::MutexLock lock(&mu_);
  auto it = pending_.upper_bound(sequence);
  if (it == pending_.end()) return std::nullopt;
  return it->first;
}

absl::StatusOr<v1::Batch> Spool::Read(uint64_t sequence) const {
  std::string path;
  {
    absl::MutexLock lock(&mu_);
    auto it = pending_.find(sequence);
    if (it == pending_.end()) {
      return absl::NotFoundError(
          absl::StrCat("batch ", sequence, " is not pending"));
    }
    path = Join(dir_, it->second.file);
  }
  auto data = ReadFile(path);  // an I/O error is not DataLoss: retry later
  if (!data.ok()) return data.status();
  v1::Batch batch;
  if (!batch.ParseFromString(*data) || batch.sequence() != sequence ||
      batch.agent_id() != agent_id_) {
    return absl::DataLossError(
        absl::StrCat(path, ": not batch ", sequence, " of ", agent_id_));
  }
  return batch;
}

absl::Status Spool::RemoveLocked(std::map<uint64_t, Entry>::iterator it) {
  const std::string path = Join(dir_, it->second.file);
  if (::unlink(path.c_str()) != 0 && errno != ENOENT) {
    return Errno("unlink", path);
  }
  bytes_ -= it->second.bytes;
  full_ = false;  // space was freed: let the next Append try
  pending_.erase(it);
  return absl::OkStatus();
}

absl::Status Spool::Ack(uint64_t sequence) {
  absl::MutexLock lock(&mu_);
  // Deleting needs no directory fsync: a file that reappears after a crash
  // is sent again and the server answers it as a duplicate.
  while (!pending_.empty() && pending_.begin()->first <= sequence) {
    absl::Status s = RemoveLocked(pending_.begin());
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::Status Spool::Discard(uint64_t sequence) {
  absl::MutexLock lock(&mu_);
  auto it = pending_.find(sequence);
  if (it == pending_.end()) return absl::OkStatus();
  return RemoveLocked(it);
}

SpoolStats Spool::Stats() const {
  absl::MutexLock lock(&mu_);
  SpoolStats stats;
  stats.bytes = bytes_;
  stats.pending_batches = pending_.size();
  if (!pending_.empty()) {
    stats.oldest_received_ns = pending_.begin()->second.received_ns;
  }
  stats.last_sequence = last_sequence_;
  stats.full = full_;
  return stats;
}

}  // namespace goodput::agent
