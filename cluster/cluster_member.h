// ClusterMember: one goodputd instance's apply side in cluster mode
// (docs/scaling.md, "Cluster mode"). TickLeases runs a LeaseKeeper round
// and opens a log reader for each partition it acquired, from the sink's
// last applied sequence + 1 (so a takeover reads only what this instance
// has not applied), and closes the readers of partitions it released. Pump
// feeds the held partitions' next messages to the sink in log order, each
// partition's fetched messages as one run (PartitionSink::ApplyAll); it
// stops applying a partition the moment its lease is no longer held, and a
// pump that runs out of time goes on with the next partition next time. Every
// member also applies every heartbeat message (kHeartbeatPartition), which
// needs no lease: each instance's capacity covers every host.
//
// With snapshots enabled (EnableSnapshots), a partition acquired is first
// brought to the newest complete snapshot of it in the cluster when that is
// ahead of what this instance applied (PartitionSink::ImportPartition), so
// its reader starts after the snapshot: a takeover reads the snapshot and
// the tail, not the partition's history. A snapshot that cannot be read or
// imported is counted and the partition is read from the log as without
// snapshots. An acquired partition is then opened (and its snapshot
// imported) by the next Pump, not by the lease round, and a pump that runs out
// of time leaves the rest to the next one, so imports never delay the leases'
// renewal. And each held partition's snapshot is published once
// `every_events` of its events were applied since the last one, or
// `every_ns` passed with at least one applied.
//
// A message that does not parse as a Batch is skipped and counted (it
// cannot come from a goodputd, whose parts always parse). Borrows the
// keeper, log, sink, snapshots and clock, which must outlive it. Not
// thread-safe: one thread ticks and pumps.
#ifndef GOODPUT_CLUSTER_CLUSTER_MEMBER_H_
#define GOODPUT_CLUSTER_CLUSTER_MEMBER_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "cluster/batch_publisher.h"
#include "cluster/event_log.h"
#include "cluster/lease_keeper.h"
#include "cluster/partition_sink.h"
#include "cluster/partition_snapshots.h"
#include "util/clock.h"

namespace goodput::cluster {

struct SnapshotPolicy {
  std::string self;  // this member's id, in snapshot ids
  int64_t every_events = 100'000;
  int64_t every_ns = 5LL * 60 * 1'000'000'000;
};

// What ClusterMember did with snapshots (for /metrics).
struct SnapshotStats {
  int64_t published = 0;           // snapshots stored in the log
  int64_t publish_errors = 0;      // exports or publishes that failed
  int64_t imported = 0;            // partitions brought to a snapshot
  int64_t import_errors = 0;       // reads or imports that failed
  int64_t skipped_incomplete = 0;  // torn or partial snapshots seen
  int64_t chunks_read = 0;         // snapshot messages read at takeovers
};

class ClusterMember {
 public:
  ClusterMember(LeaseKeeper* leases, EventLog* log, PartitionSink* sink,
                const BatchPublisher* subjects)
      : leases_(leases), log_(log), sink_(sink), subjects_(subjects) {}

  // One lease round; the status is the round's first error (leases still
  // held keep being applied until they lapse).
  absl::Status TickLeases();
  // Applies up to `max_per_partition` messages of each held partition,
  // waiting up to `timeout_ms` per partition for the first (a partition
  // behind returns what the log holds at once); returns how many were
  // applied. Once `out_of_time` (if set) says so, no further partition is
  // started: the next Pump starts with the first one this one left out.
  absl::StatusOr<int64_t> Pump(
      int max_per_partition, int64_t timeout_ms,
      const std::function<bool()>& out_of_time = nullptr);

  // Takes partitions over from their newest snapshot and publishes the
  // held ones' snapshots under `policy`.
  void EnableSnapshots(PartitionSnapshots* snapshots, Clock* clock,
                       SnapshotPolicy policy);

  // Partitions with an open reader, ascending.
  std::vector<int32_t> Applying() const;
  int64_t unparsable() const { return unparsable_; }
  const SnapshotStats& snapshot_stats() const { return snapshot_stats_; }

 private:
  // A reader of `partition`'s subject (or the heartbeats') from the sink's
  // last applied sequence + 1.
  absl::StatusOr<std::unique_ptr<LogReader>> ReaderFor(int32_t partition);
  absl::Status Open(int32_t partition);
  // Opens the held partitions without a reader (importing their snapshots),
  // none after the first once `out_of_time` says so.
  absl::Status OpenHeld(const std::function<bool()>& out_of_time);
  // Imports `partition`'s newest snapshot if it is ahead of the sink.
  void ImportNewest(int32_t partition);
  // Publishes `partition`'s snapshot if the policy says it is due.
  void MaybePublish(int32_t partition, int64_t events);
  void Publish(int32_t partition);
  absl::StatusOr<int64_t> PumpHeartbeats(int max, int64_t timeout_ms);
  // The open readers' partitions, from next_partition_ on, then wrapping.
  std::vector<int32_t> PumpOrder() const;
  // PumpOne on `partition`'s reader if its lease is still held; a lapsed
  // lease or a failed pump closes the reader. Returns what was applied.
  int64_t PumpPartition(int32_t partition, int max, int64_t timeout_ms);
  // Applies `reader`'s next messages; returns how many, and adds their
  // events to `*events`.
  absl::StatusOr<int64_t> PumpOne(int32_t partition, LogReader* reader, int max,
                                  int64_t timeout_ms, int64_t* events);

  LeaseKeeper* const leases_;
  EventLog* const log_;
  PartitionSink* const sink_;
  const BatchPublisher* const subjects_;
  std::map<int32_t, std::unique_ptr<LogReader>> readers_;
  std::unique_ptr<LogReader> heartbeats_;  // opened at the first Pump
  int32_t next_partition_ = 0;             // where the next Pump starts
  int64_t unparsable_ = 0;
  // Snapshots (null: disabled).
  struct SnapshotDue {
    int64_t events = 0;    // applied since the last snapshot
    int64_t since_ns = 0;  // the last snapshot (or the acquisition)
  };
  PartitionSnapshots* snapshots_ = nullptr;
  Clock* clock_ = nullptr;
  SnapshotPolicy policy_;
  std::map<int32_t, SnapshotDue> due_;  // of the partitions with readers
  SnapshotStats snapshot_stats_;
};

}  // namespace goodput::cluster

#endif  // GOODPUT_CLUSTER_CLUSTER_MEMBER_H_
