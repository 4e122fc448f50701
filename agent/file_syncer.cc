#include "agent/file_syncer.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace goodput::agent {

FileSyncer::FileSyncer(FileSystem* fs, int threads, size_t max_pending)
    : fs_(fs), max_pending_(std::max<size_t>(max_pending, 1)) {
  for (int i = 0; i < std::max(threads, 1); ++i) {
    threads_.emplace_back([this] { Run(); });
  }
}

FileSyncer::~FileSyncer() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  for (std::thread& t : threads_) t.join();
}

void FileSyncer::AwaitRoom() {
  absl::MutexLock lock(&mu_);
  auto room = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return busy_.size() < max_pending_;
  };
  mu_.Await(absl::Condition(&room));
}

void FileSyncer::Add(uint64_t id, std::string path) {
  absl::MutexLock lock(&mu_);
  busy_.insert(id);
  queue_.emplace_back(id, std::move(path));
}

void FileSyncer::Run() {
  while (true) {
    std::pair<uint64_t, std::string> next;
    {
      absl::MutexLock lock(&mu_);
      auto ready = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        return stopping_ || !queue_.empty();
      };
      mu_.Await(absl::Condition(&ready));
      if (queue_.empty()) return;  // stopping, and everything is synced
      next = std::move(queue_.front());
      queue_.pop_front();
    }
    SyncOne(next.first, next.second);
  }
}

void FileSyncer::SyncOne(uint64_t id, const std::string& path) {
  absl::Status s = fs_->SyncFile(path);
  absl::MutexLock lock(&mu_);
  busy_.erase(id);
  if (s.ok()) ++syncs_;
  if (!s.ok() && !absl::IsNotFound(s)) failed_[id] = Failure{path, s};
}

absl::Status FileSyncer::SyncThrough(uint64_t id) {
  {
    absl::MutexLock lock(&mu_);
    auto done = [this, id]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return busy_.empty() || *busy_.begin() > id;
    };
    mu_.Await(absl::Condition(&done));
  }
  return RetryFailed(id);
}

absl::Status FileSyncer::RetryFailed(uint64_t id) {
  std::vector<std::pair<uint64_t, std::string>> retry;
  {
    absl::MutexLock lock(&mu_);
    for (auto it = failed_.begin(); it != failed_.end() && it->first <= id;
         ++it) {
      // A failure is reported before it is retried: a retried fsync may
      // succeed although the pages of the failed one were lost.
      if (!it->second.reported) {
        it->second.reported = true;
        return it->second.error;
      }
      retry.emplace_back(it->first, it->second.path);
    }
  }
  for (const auto& [failed_id, path] : retry) {
    absl::Status s = Rewrite(path);
    absl::MutexLock lock(&mu_);
    if (!s.ok() && !absl::IsNotFound(s)) return s;
    if (s.ok()) ++syncs_;
    failed_.erase(failed_id);
  }
  return absl::OkStatus();
}

absl::Status FileSyncer::Rewrite(const std::string& path) {
  absl::StatusOr<std::string> data = fs_->ReadFile(path);
  if (!data.ok()) return data.status();  // NotFound: deleted meanwhile
  const std::string tmp = absl::StrCat(path, ".tmp");
  absl::Status s = fs_->WriteFile(tmp, *data);  // written and fsync'ed
  if (s.ok()) s = fs_->Rename(tmp, path);
  if (!s.ok()) (void)fs_->Remove(tmp);
  return s;
}

int64_t FileSyncer::syncs() const {
  absl::MutexLock lock(&mu_);
  return syncs_;
}

}  // namespace goodput::agent
