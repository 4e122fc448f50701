#ifndef GOODPUT_SERVER_QUERY_POOL_H_
#define GOODPUT_SERVER_QUERY_POOL_H_

#include <cstdint>
#include <deque>
#include <memory>
#include <thread>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"

namespace goodput::server {

// The threads that run goodputd's heavy reads (Query.Report, Jobs, Fleet,
// Summary, and the /metrics collection) at a lower CPU priority than
// ingest: each thread raises its own nice value to `nice` once, at start
// (Linux nice is per thread), so a read takes the CPU that ingest and
// RocksDB leave idle instead of an even share of it (--query_nice; 0 runs
// reads at ingest's priority). A separate pool because a process without
// CAP_SYS_NICE cannot lower a thread's nice value again, so gRPC's own
// threads must not be reniced. Run blocks its caller until its function
// has run on a pool thread (in arrival order). Owns its threads; the
// destructor runs what is queued and joins them. Thread-safe.
class QueryPool {
 public:
  struct Options {
    int threads = 5;  // >= 1
    int nice = 10;    // 0..19
  };

  // InvalidArgument naming --query_nice or the thread count if out of
  // range; Internal if a thread could not lower its priority.
  static absl::StatusOr<std::unique_ptr<QueryPool>> Start(Options options);
  ~QueryPool();
  QueryPool(const QueryPool&) = delete;
  QueryPool& operator=(const QueryPool&) = delete;

  // Runs `fn` on a pool thread and returns once it has returned.
  void Run(absl::FunctionRef<void()> fn);

  int nice() const { return options_.nice; }

 private:
  struct Task;

  explicit QueryPool(Options options) : options_(options) {}
  // A thread's life: its priority (reported through `started`), then
  // tasks until Stop.
  void Work();
  // Waits for the next task; null once stopping and the queue is empty.
  Task* Next();
  bool AllStarted() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  bool HasWork() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Adds options_.nice to this thread's nice value.
  absl::Status LowerPriority() const;

  const Options options_;
  mutable absl::Mutex mu_;
  std::deque<Task*> queue_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  int started_ ABSL_GUARDED_BY(mu_) = 0;
  absl::Status start_status_ ABSL_GUARDED_BY(mu_);
  std::vector<std::thread> threads_;
};

}  // namespace goodput::server

#endif  // GOODPUT_SERVER_QUERY_POOL_H_
