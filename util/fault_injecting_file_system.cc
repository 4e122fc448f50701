#include "util/fault_injecting_file_system.h"

#include <errno.h>

#include "absl/strings/str_cat.h"

namespace goodput {
namespace {

absl::Status Injected(int err, absl::string_view what,
                      const std::string& path) {
  return absl::ErrnoToStatus(err, absl::StrCat(what, " ", path, " (injected)"));
}

}  // namespace

void FaultInjectingFileSystem::Inject(Fault fault, int times) {
  absl::MutexLock lock(&mu_);
  armed_[fault] = times;
}

void FaultInjectingFileSystem::Clear() {
  absl::MutexLock lock(&mu_);
  armed_.clear();
}

int FaultInjectingFileSystem::fired(Fault fault) const {
  absl::MutexLock lock(&mu_);
  auto it = fired_.find(fault);
  return it == fired_.end() ? 0 : it->second;
}

bool FaultInjectingFileSystem::Take(Fault fault) {
  absl::MutexLock lock(&mu_);
  auto it = armed_.find(fault);
  if (it == armed_.end() || it->second == 0) return false;
  if (it->second > 0) --it->second;
  ++fired_[fault];
  return true;
}

std::optional<FaultInjectingFileSystem::Fault>
FaultInjectingFileSystem::TakeWriteFault() {
  for (Fault f : {Fault::kNoSpace, Fault::kTornWrite, Fault::kFsyncFails}) {
    if (Take(f)) return f;
  }
  return std::nullopt;
}

absl::Status FaultInjectingFileSystem::CreateDirs(const std::string& dir) {
  return base_->CreateDirs(dir);
}

absl::Status FaultInjectingFileSystem::WriteFile(const std::string& path,
                                                 absl::string_view data) {
  const std::optional<Fault> fault = TakeWriteFault();
  if (!fault) return base_->WriteFile(path, data);
  if (*fault == Fault::kFsyncFails) {
    absl::Status s = base_->WriteFile(path, data);
    return s.ok() ? Injected(EIO, "fsync", path) : s;
  }
  absl::Status s = base_->WriteFile(path, data.substr(0, data.size() / 2));
  if (!s.ok() || *fault == Fault::kTornWrite) return s;
  return Injected(ENOSPC, "write", path);
}

absl::Status FaultInjectingFileSystem::WriteFileUnsynced(
    const std::string& path, absl::string_view data) {
  std::optional<Fault> fault;
  for (Fault f : {Fault::kNoSpace, Fault::kTornWrite}) {
    if (!fault && Take(f)) fault = f;
  }
  if (!fault) return base_->WriteFileUnsynced(path, data);
  absl::Status s =
      base_->WriteFileUnsynced(path, data.substr(0, data.size() / 2));
  if (!s.ok() || *fault == Fault::kTornWrite) return s;
  return Injected(ENOSPC, "write", path);
}

absl::Status FaultInjectingFileSystem::SyncFile(const std::string& path) {
  if (Take(Fault::kFsyncFails)) return Injected(EIO, "fdatasync", path);
  return base_->SyncFile(path);
}

absl::Status FaultInjectingFileSystem::Rename(const std::string& from,
                                              const std::string& to) {
  if (Take(Fault::kRenameFails)) return Injected(EIO, "rename", from);
  return base_->Rename(from, to);
}

absl::Status FaultInjectingFileSystem::SyncDir(const std::string& dir) {
  if (Take(Fault::kFsyncFails)) return Injected(EIO, "fsync", dir);
  return base_->SyncDir(dir);
}

absl::StatusOr<std::string> FaultInjectingFileSystem::ReadFile(
    const std::string& path) {
  return base_->ReadFile(path);
}

absl::StatusOr<std::vector<std::string>> FaultInjectingFileSystem::ListDir(
    const std::string& dir) {
  return base_->ListDir(dir);
}

absl::StatusOr<uint64_t> FaultInjectingFileSystem::FileSize(
    const std::string& path) {
  return base_->FileSize(path);
}

bool FaultInjectingFileSystem::Exists(const std::string& path) {
  return base_->Exists(path);
}

absl::Status FaultInjectingFileSystem::Remove(const std::string& path) {
  return base_->Remove(path);
}

absl::StatusOr<std::unique_ptr<FileSystem::Lock>>
FaultInjectingFileSystem::LockFile(const std::string& path,
                                   absl::string_view owner) {
  return base_->LockFile(path, owner);
}

}  // namespace goodput
