#include "server/query_pool.h"

#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"

namespace goodput::server {

struct QueryPool::Task {
  absl::FunctionRef<void()> fn;
  bool done = false;
};

absl::StatusOr<std::unique_ptr<QueryPool>> QueryPool::Start(Options options) {
  if (options.nice < 0 || options.nice > 19) {
    return absl::InvalidArgumentError(
        absl::StrCat("--query_nice=", options.nice, ": must be 0 (off) to 19"));
  }
  if (options.threads < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("query threads: ", options.threads, ": must be >= 1"));
  }
  std::unique_ptr<QueryPool> pool(new QueryPool(options));
  for (int i = 0; i < options.threads; ++i) {
    pool->threads_.emplace_back([p = pool.get()] { p->Work(); });
  }
  absl::MutexLock lock(&pool->mu_);
  pool->mu_.Await(absl::Condition(pool.get(), &QueryPool::AllStarted));
  // On an error the pool's destructor (on return) stops and joins.
  if (!pool->start_status_.ok()) return pool->start_status_;
  return pool;
}

QueryPool::~QueryPool() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  for (std::thread& t : threads_) t.join();
}

void QueryPool::Run(absl::FunctionRef<void()> fn) {
  Task task{fn};
  absl::MutexLock lock(&mu_);
  queue_.push_back(&task);
  mu_.Await(absl::Condition(&task.done));
}

void QueryPool::Work() {
  absl::Status priority = LowerPriority();
  {
    absl::MutexLock lock(&mu_);
    if (!priority.ok() && start_status_.ok()) start_status_ = priority;
    ++started_;
  }
  while (Task* task = Next()) {
    task->fn();
    absl::MutexLock lock(&mu_);
    task->done = true;
  }
}

QueryPool::Task* QueryPool::Next() {
  absl::MutexLock lock(&mu_);
  mu_.Await(absl::Condition(this, &QueryPool::HasWork));
  if (queue_.empty()) return nullptr;
  Task* task = queue_.front();
  queue_.pop_front();
  return task;
}

bool QueryPool::AllStarted() const { return started_ == options_.threads; }

bool QueryPool::HasWork() const { return stopping_ || !queue_.empty(); }

absl::Status QueryPool::LowerPriority() const {
  if (options_.nice == 0) return absl::OkStatus();
  const id_t tid = static_cast<id_t>(syscall(SYS_gettid));
  // Adds to the nice value goodputd was started with (never lowers it).
  const int base = getpriority(PRIO_PROCESS, tid);
  const int target = std::min(19, base + options_.nice);
  if (setpriority(PRIO_PROCESS, tid, target) != 0) {
    return absl::InternalError(
        absl::StrCat("--query_nice=", options_.nice,
                     ": setpriority: ", std::strerror(errno)));
  }
  return absl::OkStatus();
}

}  // namespace goodput::server
