#ifndef GOODPUT_STORAGE_MEMORY_EVENT_STORE_H_
#define GOODPUT_STORAGE_MEMORY_EVENT_STORE_H_

#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "storage/event_store.h"

namespace goodput::storage {

// The in-memory fake of EventStore, for tests: same semantics, nothing on
// disk. Can be told to fail its next write of a kind (a batch or an
// eviction, snapshots, a meta record, a deletion of job or of fleet
// events). Thread-safe.
class MemoryEventStore : public EventStore {
 public:
  absl::StatusOr<uint64_t> Write(const BatchWrite& batch) override;
  absl::StatusOr<std::map<std::string, uint64_t>> AgentSequences() override;
  uint64_t LastBatchId() override;
  absl::Status ReadJob(const std::string& job_id, uint64_t after_batch,
                       uint64_t through_batch,
                       std::vector<v1::Event>* out) override;
  absl::Status ListJobs(const JobVisitor& visit) override;
  absl::Status ScanHeartbeatsAfter(uint64_t after_batch,
                                   const BatchVisitor& visit) override;
  // Fails after FailNextFleetDelete.
  absl::Status DeleteFleetEvents(uint64_t through_batch) override;
  absl::Status ScanJobsForRestore(const RestoreVisitor& visit) override;
  absl::Status ScanAllJobs(const RestoreVisitor& visit) override;
  absl::Status WriteJobStates(
      const std::vector<internal::v1::StoredJobState>& states,
      const std::vector<std::pair<std::string, uint64_t>>& remove) override;
  absl::Status ReadJobStates(const std::string& job_id,
                             std::vector<internal::v1::StoredJobState>* out,
                             int* unreadable) override;
  // Fails after FailNextSnapshotWrite.
  absl::Status WriteSnapshots(
      const std::vector<JobSnapshot>& snapshots) override;
  absl::Status ReadSnapshots(std::vector<JobSnapshot>* out) override;
  absl::Status ReadHeldSnapshots(std::vector<JobSnapshot>* out) override;
  absl::Status ReadSnapshot(const std::string& job_id,
                            std::optional<JobSnapshot>* out) override;
  absl::Status ReadEvictedSnapshot(const std::string& job_id,
                                   std::optional<JobSnapshot>* out) override;
  absl::Status ReadEvictedEndedBefore(int64_t before_ns,
                                      std::vector<JobSnapshot>* out) override;
  // Fails like Write after FailNextWrite.
  absl::Status EvictJobs(const std::vector<JobSnapshot>& snapshots,
                         const std::optional<std::string>& totals) override;
  // Fails after FailNextDeletes.
  absl::Status DeleteJobEvents(
      const std::vector<JobSnapshot>& retired) override;
  absl::Status ImportJobs(const JobImport& import) override;
  // Fail after FailMetaWrite.
  absl::Status WriteMeta(const std::string& name,
                         const std::string& value) override;
  absl::Status WriteMetas(
      const std::vector<std::pair<std::string, std::string>>& records) override;
  absl::Status ReadMeta(const std::string& name,
                        std::optional<std::string>* value) override;
  absl::Status ScanMeta(const std::string& prefix,
                        const MetaVisitor& visit) override;
  absl::Status DeleteMeta(const std::vector<std::string>& names) override;
  absl::Status DeadLetters(size_t limit, std::vector<v1::DeadLetter>* out,
                           uint64_t* total) override;

  // The next Write fails with `status` and stores nothing.
  void FailNextWrite(absl::Status status);
  // The next DeleteJobEvents fails with `status` and deletes nothing.
  void FailNextDelete(absl::Status status);
  // The next `n` DeleteJobEvents (a store that keeps failing) do the same.
  void FailNextDeletes(int n, absl::Status status);
  // The next DeleteFleetEvents fails with `status` and deletes nothing.
  void FailNextFleetDelete(absl::Status status);
  // The next WriteSnapshots fails with `status` and stores nothing.
  void FailNextSnapshotWrite(absl::Status status);
  // The `n`-th WriteMeta or WriteMetas from now (1: the next) fails with
  // `status` and writes nothing.
  void FailMetaWrite(int n, absl::Status status);

 private:
  absl::Mutex mu_;
  std::vector<std::vector<v1::Event>> batches_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, uint64_t> agents_ ABSL_GUARDED_BY(mu_);
  std::vector<v1::DeadLetter> dead_letters_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, JobSnapshot> snapshots_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, JobSnapshot> evicted_ ABSL_GUARDED_BY(mu_);
  // The end-time index of evicted_ (EvictJobs): (ended_ns, job id).
  std::set<std::pair<int64_t, std::string>> evicted_end_ ABSL_GUARDED_BY(mu_);
  // Evicted jobs and the batch count then: no head until a later event.
  std::map<std::string, size_t> evicted_at_ ABSL_GUARDED_BY(mu_);
  // job id -> through_batch -> state
  std::map<std::string, std::map<uint64_t, internal::v1::StoredJobState>>
      states_ ABSL_GUARDED_BY(mu_);
  absl::Status next_failure_ ABSL_GUARDED_BY(mu_);
  absl::Status next_delete_failure_ ABSL_GUARDED_BY(mu_);
  int delete_failures_left_ ABSL_GUARDED_BY(mu_) = 0;
  absl::Status next_fleet_delete_failure_ ABSL_GUARDED_BY(mu_);
  absl::Status next_snapshot_failure_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, std::string> meta_ ABSL_GUARDED_BY(mu_);
  int meta_writes_to_failure_ ABSL_GUARDED_BY(mu_) = 0;  // 0: none
  absl::Status meta_failure_ ABSL_GUARDED_BY(mu_);
  // Jobs imported with a state record (listed with those that have events).
  std::set<std::string> imported_ ABSL_GUARDED_BY(mu_);
  // The failure FailNextWrite set (OK if none), cleared.
  absl::Status TakeFailureLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The jobs with events in batches from index `from_batch` on.
  std::set<std::string> JobsLocked(size_t from_batch) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status ScanJobs(bool all, const RestoreVisitor& visit);
  // Clears the stored events and states of `job_ids`.
  void DeleteLocked(const std::vector<std::string>& job_ids)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
};

}  // namespace goodput::storage

#endif  // GOODPUT_STORAGE_MEMORY_EVENT_STORE_H_
