// ClusterRunner: the thread of a goodputd instance in cluster mode that
// keeps its leases and applies its partitions. Each step runs a lease
// round (ClusterMember::TickLeases) when one is due (every `tick_ns` of the
// clock) and then one ClusterMember::Pump, which starts no further
// partition once the next round is due; when a pump applied nothing the
// thread waits `idle_wait` (or until Stop) before the next step. Stop ends
// the thread and gives every lease back (LeaseKeeper::Leave), so the
// partitions move at once instead of after the TTL. Borrows the keeper,
// member and clock, which must outlive it. Each step also checks that the
// log is reachable (options.reachable) and logs when it stops being so
// (rate-limited) and when it is back. Thread-safe: Start and Stop from
// one thread, status() from any; Step only while the thread is not running.
#ifndef GOODPUT_SERVER_CLUSTER_RUNNER_H_
#define GOODPUT_SERVER_CLUSTER_RUNNER_H_

#include <cstdint>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "cluster/cluster_member.h"
#include "cluster/lease_keeper.h"
#include "util/clock.h"
#include "util/logger.h"

namespace goodput::server {

// What a cluster member is doing, for /metrics, /readyz and logs.
struct ClusterRunnerStatus {
  std::vector<int32_t> held;  // partitions held at the last step, ascending
  int32_t unowned = -1;       // LeaseKeeper::unowned() at the last round
  int64_t rounds = 0;         // lease rounds run
  int64_t applied = 0;        // messages applied (partitions and heartbeats)
  int64_t errors = 0;         // failed rounds and pumps
  std::string last_error;     // of the newest failure; empty once one works
  // Why the log is unreachable (options.reachable), as of the last step;
  // empty while it is reachable.
  std::string unreachable;
  cluster::SnapshotStats snapshots;  // as of the last step
};

struct ClusterRunnerOptions {
  int64_t tick_ns = 0;  // between lease rounds (e.g. the TTL / 3)
  // Messages per partition per pump. A partition behind fetches this many
  // at once (one write: PartitionSink::ApplyAll); small enough that one
  // partition's share does not delay the next lease round long.
  int max_per_pump = 100;
  int64_t pump_wait_ms = 0;  // a pump's wait for a partition's first message
  absl::Duration idle_wait = absl::Milliseconds(50);
  // OK while the log (NATS) is reachable, else why not; checked each step.
  // Null: always reachable.
  std::function<absl::Status()> reachable;
  // Says when the log becomes unreachable (then at most once per
  // `unreachable_log_every_ns` while it stays so) and when it is back.
  Logger log = Logger("goodputd");
  int64_t unreachable_log_every_ns = 60LL * 1000 * 1000 * 1000;
};

class ClusterRunner {
 public:
  ClusterRunner(cluster::LeaseKeeper* leases, cluster::ClusterMember* member,
                Clock* clock, ClusterRunnerOptions options);
  ~ClusterRunner();

  void Start();
  // Ends the thread (if started) and leaves the cluster; idempotent.
  void Stop();
  // One step of the loop; true if it applied something.
  bool Step();
  ClusterRunnerStatus status() const;

 private:
  void Run();
  void NoteError(const absl::Status& s) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Checks options_.reachable, logs as it says, records it in status_.
  void CheckReachable();

  cluster::LeaseKeeper* const leases_;
  cluster::ClusterMember* const member_;
  Clock* const clock_;
  const ClusterRunnerOptions options_;
  mutable absl::Mutex mu_;
  ClusterRunnerStatus status_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  bool left_ ABSL_GUARDED_BY(mu_) = false;
  int64_t next_round_ns_ = 0;  // the stepping thread's own
  // Also the stepping thread's: when the log became unreachable (-1: it is
  // reachable) and when that was last logged.
  int64_t unreachable_since_ns_ = -1;
  int64_t unreachable_logged_ns_ = 0;
  std::thread thread_;
};

}  // namespace goodput::server

#endif  // GOODPUT_SERVER_CLUSTER_RUNNER_H_
