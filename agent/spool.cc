#include "agent/spool.h"

#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/wire_format_lite.h"
#include "util/crc32c.h"
#include "util/posix_file_system.h"
#include "util/uuid.h"

namespace goodput::agent {
namespace {

constexpr char kAgentIdFile[] = "agent_id";
constexpr char kLastSequenceFile[] = "last_sequence";
constexpr char kLockFile[] = "lock";
constexpr char kDeadLetterDir[] = "dead-letter";
constexpr char kTmpSuffix[] = ".tmp";
// Batch files start with this magic and the CRC-32C of the rest. A
// serialized Batch never starts with 'G' (field 8, wire type 7 does not
// exist), so a file without it is an earlier agent's bare Batch.
constexpr absl::string_view kBatchMagic = "GPB1";
constexpr size_t kHeaderBytes = 8;
// Batch's fields: agent_id 1 and events 3 length-delimited, sequence 2 a
// varint, event_ids 15 (agent-local).
constexpr uint8_t kAgentIdTag = (1 << 3) | 2;
constexpr uint8_t kSequenceTag = (2 << 3) | 0;
constexpr uint8_t kEventsTag = (3 << 3) | 2;
constexpr uint32_t kEventIdsField = 15;
using google::protobuf::internal::WireFormatLite;
using google::protobuf::io::CodedInputStream;
using google::protobuf::io::CodedOutputStream;

std::string Join(const std::string& dir, absl::string_view name) {
  return absl::StrCat(dir, "/", name);
}

// tmp file (written, and fsync'ed if `sync`), read back and compared
// (without `sync` through the descriptor that wrote it: WriteFileVerified),
// renamed into place. Nothing is left behind on error. The rename is
// durable only after the directory's next fsync.
absl::Status WriteFileRenamed(FileSystem* fs, const std::string& dir,
                              absl::string_view name, absl::string_view data,
                              bool sync = true) {
  const std::string path = Join(dir, name);
  const std::string tmp = absl::StrCat(path, kTmpSuffix);
  absl::Status s =
      sync ? fs->WriteFile(tmp, data) : fs->WriteFileVerified(tmp, data);
  if (s.ok() && sync) {
    absl::StatusOr<std::string> back = fs->ReadFile(tmp);
    if (!back.ok()) s = back.status();
    if (back.ok() && *back != data) {
      s = absl::DataLossError(absl::StrCat(
          "write ", tmp, ": read back ", back->size(), " of ", data.size(),
          " bytes, not what was written (torn write)"));
    }
  }
  if (s.ok()) s = fs->Rename(tmp, path);
  if (!s.ok()) (void)fs->Remove(tmp);
  return s;
}

// WriteFileRenamed, then fsync of the directory.
absl::Status WriteFileAtomically(FileSystem* fs, const std::string& dir,
                                 absl::string_view name,
                                 absl::string_view data) {
  absl::Status s = WriteFileRenamed(fs, dir, name, data);
  return s.ok() ? fs->SyncDir(dir) : s;
}

void AppendLittleEndian32(uint32_t v, std::string* out) {
  for (int i = 0; i < 4; ++i) out->push_back(static_cast<char>(v >> (8 * i)));
}

uint32_t LittleEndian32(absl::string_view four) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) {
    v = (v << 8) | static_cast<unsigned char>(four[i]);
  }
  return v;
}

// `events` as a Batch's events fields (tag, length, event), the form
// Spool::AppendWire takes.
std::string EventsWire(const std::vector<v1::Event>& events) {
  size_t total = 0;
  for (const v1::Event& e : events) {
    const size_t size = e.ByteSizeLong();
    total += 1 + CodedOutputStream::VarintSize32(size) + size;
  }
  std::string out;
  out.reserve(total);
  for (const v1::Event& e : events) {
    AppendEventsField(
        e.GetCachedSize(),
        [&e](uint8_t* p) { e.SerializeWithCachedSizesToArray(p); }, &out);
  }
  return out;
}

// A batch file: the header, then exactly Batch::SerializeAsString() of the
// batch (agent_id, sequence, events, event_ids: fields in number order, as
// protobuf writes them), with the events fields as given (`events_wire`,
// already serialized: no Batch built, no events copied).
std::string EncodeBatchFile(const std::string& agent_id, uint64_t sequence,
                            absl::string_view events_wire,
                            const std::vector<uint64_t>& ids) {
  v1::Batch head;
  head.set_agent_id(agent_id);
  head.set_sequence(sequence);
  v1::Batch tail;
  tail.mutable_event_ids()->Assign(ids.begin(), ids.end());
  const size_t head_size = head.ByteSizeLong();
  std::string out(
      kHeaderBytes + head_size + events_wire.size() + tail.ByteSizeLong(),
      '\0');
  auto* p = reinterpret_cast<uint8_t*>(&out[kHeaderBytes]);
  p = head.SerializeWithCachedSizesToArray(p);
  std::memcpy(p, events_wire.data(), events_wire.size());
  tail.SerializeWithCachedSizesToArray(p + events_wire.size());
  std::memcpy(&out[0], kBatchMagic.data(), 4);
  std::string crc;
  AppendLittleEndian32(Crc32c(absl::string_view(out).substr(kHeaderBytes)),
                       &crc);
  std::memcpy(&out[4], crc.data(), 4);
  return out;
}

// The serialized Batch inside a batch file's `data`: DataLoss when the
// checksum does not match. A file without the header is taken whole.
absl::StatusOr<absl::string_view> DecodeBatchFile(absl::string_view data,
                                                  const std::string& path) {
  if (!absl::StartsWith(data, kBatchMagic)) return data;  // earlier agents
  if (data.size() < kHeaderBytes) {
    return absl::DataLossError(absl::StrCat(path, ": truncated header"));
  }
  const uint32_t want = LittleEndian32(data.substr(4, 4));
  absl::string_view payload = data.substr(kHeaderBytes);
  const uint32_t got = Crc32c(payload);
  if (got != want) {
    return absl::DataLossError(absl::StrFormat(
        "%s: checksum mismatch (CRC-32C %08x, header says %08x)", path, got,
        want));
  }
  return payload;
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

struct BatchHead {
  bool ok = false;  // the bytes are a well-formed message
  std::string agent_id;
  uint64_t sequence = 0;
};

// `payload` (a serialized Batch) without its event_ids fields, walking the
// top-level fields only; agent_id and sequence in `*head`.
std::string WithoutEventIds(absl::string_view payload, BatchHead* head) {
  google::protobuf::io::CodedInputStream in(
      reinterpret_cast<const uint8_t*>(payload.data()),
      static_cast<int>(payload.size()));
  std::string out;
  out.reserve(payload.size());
  bool ok = true;
  while (ok) {
    const int start = in.CurrentPosition();
    const uint32_t tag = in.ReadTag();
    if (tag == 0) break;  // the end, or a malformed tag (checked below)
    const uint32_t field = tag >> 3;
    uint32_t length = 0;
    if (tag == kAgentIdTag) {
      ok = in.ReadVarint32(&length) && in.ReadString(&head->agent_id, length);
    } else if (tag == kSequenceTag) {
      ok = in.ReadVarint64(&head->sequence);
    } else {
      ok = WireFormatLite::SkipField(&in, tag);
    }
    if (field != kEventIdsField) {
      const absl::string_view piece =
          payload.substr(start, in.CurrentPosition() - start);
      out.append(piece.data(), piece.size());
    }
  }
  head->ok = ok && in.CurrentPosition() == static_cast<int>(payload.size());
  return out;
}

struct BatchFile {
  uint64_t sequence = 0;
  std::string name;
  int64_t received_ns = 0;
  uint64_t bytes = 0;
};

// Removes leftovers of interrupted writes and lists the batch files.
absl::StatusOr<std::vector<BatchFile>> ScanDir(FileSystem* fs,
                                               const std::string& dir) {
  absl::StatusOr<std::vector<std::string>> names = fs->ListDir(dir);
  if (!names.ok()) return names.status();
  std::vector<BatchFile> files;
  for (const std::string& name : *names) {
    if (absl::EndsWith(name, kTmpSuffix)) {
      (void)fs->Remove(Join(dir, name));
      continue;
    }
    BatchFile f;
    if (!ParseBatchFileName(name, &f.sequence, &f.received_ns)) continue;
    absl::StatusOr<uint64_t> bytes = fs->FileSize(Join(dir, name));
    if (!bytes.ok()) return bytes.status();
    f.name = name;
    f.bytes = *bytes;
    files.push_back(std::move(f));
  }
  return files;
}

// The identity in `dir`, created unless the directory holds batches of an
// identity that was lost.
absl::StatusOr<std::string> LoadOrCreateAgentId(FileSystem* fs,
                                                const std::string& dir,
                                                bool has_batches) {
  const std::string path = Join(dir, kAgentIdFile);
  if (fs->Exists(path)) {
    auto text = fs->ReadFile(path);
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
  absl::Status s = WriteFileAtomically(fs, dir, kAgentIdFile, *id + "\n");
  if (!s.ok()) return s;
  return id;
}

// The persisted high-water mark (0 when the file does not exist).
absl::StatusOr<uint64_t> LoadLastSequence(FileSystem* fs,
                                          const std::string& dir) {
  const std::string path = Join(dir, kLastSequenceFile);
  if (!fs->Exists(path)) return uint64_t{0};
  auto text = fs->ReadFile(path);
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

absl::Status WriteLastSequence(FileSystem* fs, const std::string& dir,
                               uint64_t sequence) {
  return WriteFileAtomically(fs, dir, kLastSequenceFile,
                             absl::StrCat(sequence, "\n"));
}

// Creates `dir` and takes its lock: one process per identity.
absl::StatusOr<std::unique_ptr<FileSystem::Lock>> LockSpoolDir(
    FileSystem* fs, const std::string& dir) {
  absl::Status s = fs->CreateDirs(dir);
  if (s.ok()) s = fs->CreateDirs(Join(dir, kDeadLetterDir));
  if (!s.ok())
    return absl::Status(s.code(),
                        absl::StrCat("spool_dir ", dir, ": ", s.message()));
  auto lock =
      fs->LockFile(Join(dir, kLockFile), absl::StrCat("pid ", ::getpid()));
  if (absl::IsFailedPrecondition(lock.status())) {
    return absl::FailedPreconditionError(absl::StrCat(
        "spool_dir ", dir, " is in use by another agent (",
        lock.status().message(),
        "): two agents must not share one spool directory and identity; "
        "give each its own --spool_dir (docs/delivery.md, \"Agent "
        "identity\")"));
  }
  return lock;
}

}  // namespace

void AppendEventsField(size_t size, absl::FunctionRef<void(uint8_t*)> write,
                       std::string* wire) {
  const size_t at = wire->size();
  wire->resize(at + 1 + CodedOutputStream::VarintSize32(size) + size);
  auto* p = reinterpret_cast<uint8_t*>(&(*wire)[at]);
  *p++ = kEventsTag;
  write(
      CodedOutputStream::WriteVarint32ToArray(static_cast<uint32_t>(size), p));
}

absl::StatusOr<std::unique_ptr<Spool>> Spool::Open(const Options& options) {
  std::unique_ptr<FileSystem> own_fs;
  if (options.fs == nullptr) own_fs = std::make_unique<PosixFileSystem>();
  FileSystem* fs = options.fs ? options.fs : own_fs.get();
  auto lock = LockSpoolDir(fs, options.dir);
  if (!lock.ok()) return lock.status();
  auto files = ScanDir(fs, options.dir);
  if (!files.ok()) return files.status();
  auto agent_id = LoadOrCreateAgentId(fs, options.dir, !files->empty());
  if (!agent_id.ok()) return agent_id.status();
  auto stored = LoadLastSequence(fs, options.dir);
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
    absl::Status s = WriteLastSequence(fs, options.dir, last);
    if (!s.ok()) return s;
  }
  return std::unique_ptr<Spool>(
      new Spool(options, std::move(own_fs), *std::move(lock),
                *std::move(agent_id), last, std::move(pending)));
}

Spool::~Spool() {
  (void)Commit();
  absl::MutexLock lock(&mu_);
  // A clean stop gives back the unused reserved sequences: the next run
  // goes on without a gap. A failed write leaves the (higher) reservation.
  if (reserved_ != last_sequence_) {
    (void)WriteLastSequence(fs_, dir_, last_sequence_);
  }
}

void Spool::SetEventIds(EventIds* ids) {
  ids_ = ids;
  std::optional<uint64_t> newest;
  {
    absl::MutexLock lock(&mu_);
    if (ids_ == nullptr || pending_.empty()) return;
    newest = pending_.rbegin()->first;
  }
  absl::StatusOr<v1::Batch> batch = Read(*newest);
  // An unreadable batch is never sent (dead-lettered): nothing to record.
  if (!batch.ok() || batch->event_ids().empty()) return;
  (void)ids_->Record(std::vector<uint64_t>(batch->event_ids().begin(),
                                           batch->event_ids().end()));
}

Spool::Spool(const Options& options, std::unique_ptr<FileSystem> own_fs,
             std::unique_ptr<FileSystem::Lock> lock, std::string agent_id,
             uint64_t last_sequence, std::map<uint64_t, Entry> pending)
    : dir_(options.dir),
      max_bytes_(options.max_bytes),
      sequence_block_(std::max<uint64_t>(options.sequence_block, 1)),
      own_fs_(std::move(own_fs)),
      fs_(options.fs ? options.fs : own_fs_.get()),
      lock_(std::move(lock)),
      syncer_(std::make_unique<FileSyncer>(fs_, options.sync_threads,
                                           options.max_unsynced)),
      agent_id_(std::move(agent_id)),
      last_sequence_(last_sequence),
      reserved_(last_sequence),
      pending_(std::move(pending)) {
  for (const auto& [seq, entry] : pending_) bytes_ += entry.bytes;
}

void Spool::SetAppendListener(std::function<void()> listener) {
  listener_ = std::move(listener);
}

absl::StatusOr<uint64_t> Spool::Append(std::vector<v1::Event> events,
                                       int64_t received_ns) {
  return Append(std::move(events), received_ns, {});
}

absl::StatusOr<uint64_t> Spool::Append(std::vector<v1::Event> events,
                                       int64_t received_ns,
                                       std::vector<uint64_t> ids) {
  return AppendWire(EventsWire(events), events.size(), received_ns,
                    std::move(ids));
}

absl::StatusOr<uint64_t> Spool::AppendWire(absl::string_view events_wire,
                                           size_t count, int64_t received_ns,
                                           std::vector<uint64_t> ids) {
  if (count == 0) return absl::InvalidArgumentError("empty batch");
  if (!ids.empty() && ids.size() != count) {
    return absl::InvalidArgumentError(
        absl::StrCat("batch of ", count, " events with ", ids.size(), " ids"));
  }
  syncer_->AwaitRoom();
  absl::StatusOr<uint64_t> sequence =
      WriteBatch(events_wire, received_ns, std::move(ids));
  if (sequence.ok() && listener_) listener_();
  return sequence;
}

absl::StatusOr<uint64_t> Spool::WriteBatch(absl::string_view events_wire,
                                           int64_t received_ns,
                                           std::vector<uint64_t> ids) {
  absl::MutexLock lock(&mu_);
  const uint64_t sequence = last_sequence_ + 1;
  if (ids_ == nullptr) ids.clear();
  const std::string data =
      EncodeBatchFile(agent_id_, sequence, events_wire, ids);
  if (bytes_ + data.size() > max_bytes_) {
    full_ = true;
    return absl::ResourceExhaustedError(absl::StrFormat(
        "spool full: %d of %d bytes used, a batch of %d bytes does not fit",
        bytes_, max_bytes_, data.size()));
  }
  const std::string name = BatchFileName(sequence, received_ns);
  absl::Status s = ReserveLocked(sequence);
  if (s.ok()) s = WriteFileRenamed(fs_, dir_, name, data, /*sync=*/false);
  if (!s.ok()) return NoteWriteError(std::move(s));
  // Queued under mu_, so a Commit that sees this sequence waits for it.
  syncer_->Add(sequence, Join(dir_, name));
  unsynced_ = true;
  last_sequence_ = sequence;
  pending_[sequence] = Entry{name, received_ns, data.size()};
  bytes_ += data.size();
  full_ = false;
  failing_ = false;
  // Under mu_, so no Ack deletes the batch before its ids are journaled. A
  // failed journal write leaves them known until the agent restarts.
  if (ids_ != nullptr && !ids.empty()) (void)ids_->Record(ids);
  return sequence;
}

absl::Status Spool::ReserveLocked(uint64_t sequence) {
  if (sequence <= reserved_) return absl::OkStatus();
  // One rewrite of last_sequence (two fsyncs) per block, not per batch.
  const uint64_t through = sequence + sequence_block_ - 1;
  absl::Status s = WriteLastSequence(fs_, dir_, through);
  if (s.ok()) reserved_ = through;
  return s;
}

absl::Status Spool::Commit() {
  absl::MutexLock commit(&commit_mu_);
  uint64_t through = 0;
  {
    absl::MutexLock lock(&mu_);
    if (!unsynced_) return absl::OkStatus();
    unsynced_ = false;  // an Append from now on sets it again
    through = last_sequence_;
  }
  absl::Status s = syncer_->SyncThrough(through);
  if (s.ok()) s = fs_->SyncDir(dir_);
  if (s.ok()) return s;
  absl::MutexLock lock(&mu_);
  unsynced_ = true;
  ++sync_errors_;
  failing_ = true;
  last_error_ = s.ToString();
  return s;
}

absl::Status Spool::NoteWriteError(absl::Status s) {
  ++write_errors_;
  last_error_ = s.ToString();
  if (!absl::IsResourceExhausted(s)) {
    failing_ = true;
    return s;
  }
  ++no_space_;
  full_ = true;
  return absl::ResourceExhaustedError(
      absl::StrCat("spool full: no space left on the disk: ", s.message()));
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

absl::StatusOr<std::string> Spool::ReadPayload(uint64_t sequence,
                                               std::string* path) const {
  {
    absl::MutexLock lock(&mu_);
    auto it = pending_.find(sequence);
    if (it == pending_.end()) {
      return absl::NotFoundError(
          absl::StrCat("batch ", sequence, " is not pending"));
    }
    *path = Join(dir_, it->second.file);
  }
  auto data = fs_->ReadFile(*path);  // an I/O error is not DataLoss: retry
  if (!data.ok()) return data.status();
  absl::StatusOr<absl::string_view> payload = DecodeBatchFile(*data, *path);
  if (!payload.ok()) return payload.status();
  if (payload->size() == data->size()) return data;  // an earlier agent's
  return std::string(*payload);
}

absl::StatusOr<v1::Batch> Spool::Read(uint64_t sequence) const {
  std::string path;
  absl::StatusOr<std::string> payload = ReadPayload(sequence, &path);
  if (!payload.ok()) return payload.status();
  v1::Batch batch;
  if (!batch.ParseFromString(*payload) || batch.sequence() != sequence ||
      batch.agent_id() != agent_id_) {
    return absl::DataLossError(
        absl::StrCat(path, ": not batch ", sequence, " of ", agent_id_));
  }
  return batch;
}

absl::StatusOr<std::string> Spool::ReadWire(uint64_t sequence) const {
  std::string path;
  absl::StatusOr<std::string> payload = ReadPayload(sequence, &path);
  if (!payload.ok()) return payload.status();
  BatchHead head;
  std::string wire = WithoutEventIds(*payload, &head);
  if (!head.ok || head.sequence != sequence || head.agent_id != agent_id_) {
    return absl::DataLossError(
        absl::StrCat(path, ": not batch ", sequence, " of ", agent_id_));
  }
  return wire;
}

absl::Status Spool::RemoveLocked(std::map<uint64_t, Entry>::iterator it) {
  absl::Status s = fs_->Remove(Join(dir_, it->second.file));
  if (!s.ok() && !absl::IsNotFound(s)) return s;
  bytes_ -= it->second.bytes;
  full_ = false;  // space was freed: let the next Append try
  pending_.erase(it);
  return absl::OkStatus();
}

absl::Status Spool::Ack(uint64_t sequence) {
  std::vector<std::pair<uint64_t, Entry>> gone;
  {
    absl::MutexLock lock(&mu_);
    // Deleting needs no directory fsync: a file that reappears after a
    // crash is sent again and the server answers it as a duplicate. The ids
    // of what goes must be durable first: they are the only record left.
    if (ids_ != nullptr && !pending_.empty() &&
        pending_.begin()->first <= sequence) {
      absl::Status s = ids_->Sync();
      if (!s.ok()) return s;
    }
    while (!pending_.empty() && pending_.begin()->first <= sequence) {
      bytes_ -= pending_.begin()->second.bytes;
      gone.push_back(std::move(*pending_.begin()));
      pending_.erase(pending_.begin());
      full_ = false;  // space was freed: let the next Append try
    }
  }
  return RemoveAcked(std::move(gone));
}

absl::Status Spool::RemoveAcked(std::vector<std::pair<uint64_t, Entry>> gone) {
  // Outside mu_: on a disk mounted with `discard` an unlink waits for the
  // blocks' discard, and Append (the intake thread) must not wait for it.
  for (size_t i = 0; i < gone.size(); ++i) {
    absl::Status s = fs_->Remove(Join(dir_, gone[i].second.file));
    if (s.ok() || absl::IsNotFound(s)) continue;
    absl::MutexLock lock(&mu_);  // the rest stays pending, as before
    for (; i < gone.size(); ++i) {
      bytes_ += gone[i].second.bytes;
      pending_.insert(std::move(gone[i]));
    }
    return s;
  }
  return absl::OkStatus();
}

absl::Status Spool::Discard(uint64_t sequence) {
  absl::MutexLock lock(&mu_);
  auto it = pending_.find(sequence);
  if (it == pending_.end()) return absl::OkStatus();
  return RemoveLocked(it);
}

absl::Status Spool::DeadLetter(uint64_t sequence, absl::string_view reason) {
  absl::MutexLock lock(&mu_);
  auto it = pending_.find(sequence);
  if (it == pending_.end()) return absl::OkStatus();
  const std::string& file = it->second.file;
  const std::string to = Join(Join(dir_, kDeadLetterDir), file);
  absl::Status s = fs_->Rename(Join(dir_, file), to);
  if (s.ok()) {
    s = fs_->WriteFile(absl::StrCat(to, ".reason"), absl::StrCat(reason, "\n"));
  } else {
    (void)fs_->Remove(Join(dir_, file));  // it must not block the spool
  }
  ++dead_letters_;
  bytes_ -= it->second.bytes;
  full_ = false;
  pending_.erase(it);
  return s;
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
  stats.failing = failing_;
  stats.last_error = last_error_;
  stats.write_errors = write_errors_;
  stats.no_space = no_space_;
  stats.dead_letters = dead_letters_;
  stats.sync_errors = sync_errors_;
  stats.reserved_sequence = reserved_;
  return stats;
}

}  // namespace goodput::agent
