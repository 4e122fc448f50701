#include "server/cluster_runner.h"

#include <utility>

#include "absl/strings/str_cat.h"

namespace goodput::server {

ClusterRunner::ClusterRunner(cluster::LeaseKeeper* leases,
                             cluster::ClusterMember* member, Clock* clock,
                             ClusterRunnerOptions options)
    : leases_(leases),
      member_(member),
      clock_(clock),
      options_(std::move(options)) {}

ClusterRunner::~ClusterRunner() { Stop(); }

void ClusterRunner::Start() {
  thread_ = std::thread([this] { Run(); });
}

void ClusterRunner::Stop() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  if (thread_.joinable()) thread_.join();
  absl::MutexLock lock(&mu_);
  if (left_) return;
  left_ = true;
  if (absl::Status s = leases_->Leave(); !s.ok()) NoteError(s);
  status_.held.clear();
}

void ClusterRunner::CheckReachable() {
  if (!options_.reachable) return;
  const absl::Status s = options_.reachable();
  const int64_t now = clock_->NowNanos();
  if (s.ok() && unreachable_since_ns_ >= 0) {
    options_.log.Info(absl::StrCat(
        "cluster log reachable again after ",
        absl::FormatDuration(absl::Nanoseconds(now - unreachable_since_ns_))));
    unreachable_since_ns_ = -1;
  } else if (!s.ok() && (unreachable_since_ns_ < 0 ||
                         now - unreachable_logged_ns_ >=
                             options_.unreachable_log_every_ns)) {
    if (unreachable_since_ns_ < 0) unreachable_since_ns_ = now;
    unreachable_logged_ns_ = now;
    const int64_t down = now - unreachable_since_ns_;
    options_.log.Error(absl::StrCat(
        s.message(),
        down > 0 ? absl::StrCat(" for ",
                                absl::FormatDuration(absl::Nanoseconds(down)))
                 : "",
        "; agents' batches are refused UNAVAILABLE and stay spooled"));
  }
  absl::MutexLock lock(&mu_);
  status_.unreachable = std::string(s.message());
}

bool ClusterRunner::Step() {
  CheckReachable();
  absl::Status round_status;
  bool ran_round = false;
  if (clock_->NowNanos() >= next_round_ns_) {
    round_status = member_->TickLeases();
    next_round_ns_ = clock_->NowNanos() + options_.tick_ns;
    ran_round = true;
  }
  // A pump stops starting partitions once the next round is due (a new
  // owner's catch-up would otherwise delay the renewals past the leases'
  // hold time); the next one goes on where it stopped.
  absl::StatusOr<int64_t> applied =
      member_->Pump(options_.max_per_pump, options_.pump_wait_ms,
                    [this] { return clock_->NowNanos() >= next_round_ns_; });
  absl::MutexLock lock(&mu_);
  if (ran_round) {
    ++status_.rounds;
    status_.unowned = leases_->unowned();
  }
  status_.held = leases_->Held();
  status_.snapshots = member_->snapshot_stats();
  if (!round_status.ok()) NoteError(round_status);
  if (!applied.ok()) NoteError(applied.status());
  if (round_status.ok() && applied.ok()) status_.last_error.clear();
  if (applied.ok()) status_.applied += *applied;
  return applied.ok() && *applied > 0;
}

void ClusterRunner::Run() {
  for (;;) {
    const bool busy = Step();
    absl::MutexLock lock(&mu_);
    if (!busy) {
      mu_.AwaitWithTimeout(absl::Condition(&stopping_), options_.idle_wait);
    }
    if (stopping_) return;
  }
}

ClusterRunnerStatus ClusterRunner::status() const {
  absl::MutexLock lock(&mu_);
  return status_;
}

void ClusterRunner::NoteError(const absl::Status& s) {
  ++status_.errors;
  status_.last_error = std::string(s.message());
}

}  // namespace goodput::server
