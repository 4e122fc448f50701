#include "storage/memory_event_store.h"

#include <algorithm>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "storage/read_job_reader.h"

namespace goodput::storage {

absl::StatusOr<uint64_t> MemoryEventStore::Write(const BatchWrite& batch) {
  absl::MutexLock lock(&mu_);
  if (absl::Status failure = TakeFailureLocked(); !failure.ok()) {
    return failure;
  }
  batches_.push_back(batch.accepted);
  agents_[batch.agent_id] = batch.sequence;
  for (const auto& [agent, sequence] : batch.more_agents) {
    agents_[agent] = sequence;
  }
  dead_letters_.insert(dead_letters_.end(), batch.dead_letters.begin(),
                       batch.dead_letters.end());
  return batches_.size();
}

absl::StatusOr<std::map<std::string, uint64_t>>
MemoryEventStore::AgentSequences() {
  absl::MutexLock lock(&mu_);
  return agents_;
}

uint64_t MemoryEventStore::LastBatchId() {
  absl::MutexLock lock(&mu_);
  return batches_.size();
}

absl::Status MemoryEventStore::ReadJob(const std::string& job_id,
                                       uint64_t after_batch,
                                       uint64_t through_batch,
                                       std::vector<v1::Event>* out) {
  absl::MutexLock lock(&mu_);
  for (size_t b = after_batch; b < batches_.size() && b < through_batch; ++b) {
    for (const v1::Event& e : batches_[b]) {
      if (e.job_id() == job_id && !IsFleetEvent(e) &&
          e.body_case() != v1::Event::BODY_NOT_SET) {
        out->push_back(e);
      }
    }
  }
  return absl::OkStatus();
}

absl::Status MemoryEventStore::ListJobs(const JobVisitor& visit) {
  std::set<std::string> jobs;  // visit without the lock, like an iterator
  {
    absl::MutexLock lock(&mu_);
    jobs = JobsLocked(/*from_batch=*/0);
    jobs.insert(imported_.begin(), imported_.end());
  }
  for (const std::string& job_id : jobs) {
    if (absl::Status s = visit(job_id); !s.ok()) return s;
  }
  return absl::OkStatus();
}

std::set<std::string> MemoryEventStore::JobsLocked(size_t from_batch) const {
  std::set<std::string> jobs;
  for (size_t b = from_batch; b < batches_.size(); ++b) {
    for (const v1::Event& e : batches_[b]) {
      if (!IsFleetEvent(e) && e.body_case() != v1::Event::BODY_NOT_SET) {
        jobs.insert(e.job_id());
      }
    }
  }
  return jobs;
}

absl::Status MemoryEventStore::ScanJobsForRestore(const RestoreVisitor& visit) {
  return ScanJobs(/*all=*/false, visit);
}

absl::Status MemoryEventStore::ScanAllJobs(const RestoreVisitor& visit) {
  return ScanJobs(/*all=*/true, visit);
}

absl::Status MemoryEventStore::ScanJobs(bool all, const RestoreVisitor& visit) {
  std::set<std::string> jobs;
  {
    absl::MutexLock lock(&mu_);
    jobs = JobsLocked(0);
    jobs.insert(imported_.begin(), imported_.end());
    for (const auto& [job_id, at] : evicted_at_) {
      // As RocksDB's: an evicted job has no head until a later event.
      if (!all && !imported_.count(job_id) && !JobsLocked(at).count(job_id)) {
        jobs.erase(job_id);
      }
    }
    if (all) {
      for (const auto& [job_id, s] : evicted_) jobs.insert(job_id);
    }
  }
  for (const std::string& job_id : jobs) {
    std::vector<internal::v1::StoredJobState> states;
    int unreadable = 0;
    if (absl::Status s = ReadJobStates(job_id, &states, &unreadable); !s.ok()) {
      return s;
    }
    ReadJobReader reader(this, job_id);
    if (absl::Status s = visit(job_id, &states, &reader); !s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::Status MemoryEventStore::ScanHeartbeatsAfter(uint64_t after_batch,
                                                   const BatchVisitor& visit) {
  std::vector<std::vector<v1::Event>> beats;
  {
    absl::MutexLock lock(&mu_);
    for (size_t b = after_batch; b < batches_.size(); ++b) {
      std::vector<v1::Event>& out = beats.emplace_back();
      for (const v1::Event& e : batches_[b]) {
        if (IsFleetEvent(e)) out.push_back(e);
      }
    }
  }
  for (size_t b = 0; b < beats.size(); ++b) {
    if (beats[b].empty()) continue;
    if (absl::Status s = visit(after_batch + b + 1, &beats[b]); !s.ok()) {
      return s;
    }
  }
  return absl::OkStatus();
}

absl::Status MemoryEventStore::WriteJobStates(
    const std::vector<internal::v1::StoredJobState>& states,
    const std::vector<std::pair<std::string, uint64_t>>& remove) {
  absl::MutexLock lock(&mu_);
  for (const auto& [job_id, through] : remove) states_[job_id].erase(through);
  for (const internal::v1::StoredJobState& s : states) {
    states_[s.job_id()][s.through_batch()] = s;
  }
  return absl::OkStatus();
}

absl::Status MemoryEventStore::ReadJobStates(
    const std::string& job_id, std::vector<internal::v1::StoredJobState>* out,
    int*) {
  absl::MutexLock lock(&mu_);
  auto it = states_.find(job_id);
  if (it == states_.end()) return absl::OkStatus();
  for (const auto& [through, state] : it->second) out->push_back(state);
  return absl::OkStatus();
}

void MemoryEventStore::FailMetaWrite(int n, absl::Status status) {
  absl::MutexLock lock(&mu_);
  meta_writes_to_failure_ = n;
  meta_failure_ = std::move(status);
}

absl::Status MemoryEventStore::WriteMeta(const std::string& name,
                                         const std::string& value) {
  return WriteMetas({{name, value}});
}

absl::Status MemoryEventStore::WriteMetas(
    const std::vector<std::pair<std::string, std::string>>& records) {
  absl::MutexLock lock(&mu_);
  if (meta_writes_to_failure_ > 0 && --meta_writes_to_failure_ == 0) {
    return meta_failure_;
  }
  for (const auto& [name, value] : records) meta_[name] = value;
  return absl::OkStatus();
}

absl::Status MemoryEventStore::ReadMeta(const std::string& name,
                                        std::optional<std::string>* value) {
  absl::MutexLock lock(&mu_);
  auto it = meta_.find(name);
  if (it == meta_.end()) {
    value->reset();
  } else {
    *value = it->second;
  }
  return absl::OkStatus();
}

absl::Status MemoryEventStore::ScanMeta(const std::string& prefix,
                                        const MetaVisitor& visit) {
  std::vector<std::pair<std::string, std::string>> found;
  {
    absl::MutexLock lock(&mu_);
    for (auto it = meta_.lower_bound(prefix);
         it != meta_.end() && it->first.compare(0, prefix.size(), prefix) == 0;
         ++it) {
      found.emplace_back(*it);
    }
  }
  for (const auto& [name, value] : found) {
    if (absl::Status s = visit(name, value); !s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::Status MemoryEventStore::DeleteMeta(
    const std::vector<std::string>& names) {
  absl::MutexLock lock(&mu_);
  for (const std::string& name : names) meta_.erase(name);
  return absl::OkStatus();
}

absl::Status MemoryEventStore::DeleteFleetEvents(uint64_t through_batch) {
  absl::MutexLock lock(&mu_);
  if (!next_fleet_delete_failure_.ok()) {
    return std::exchange(next_fleet_delete_failure_, absl::OkStatus());
  }
  if (through_batch >= batches_.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("delete fleet events: through_batch ", through_batch,
                     " is not before the newest batch ", batches_.size()));
  }
  for (uint64_t b = 0; b < through_batch; ++b) {
    std::vector<v1::Event>& events = batches_[b];
    events.erase(std::remove_if(events.begin(), events.end(), IsFleetEvent),
                 events.end());
  }
  return absl::OkStatus();
}

absl::Status MemoryEventStore::DeadLetters(size_t limit,
                                           std::vector<v1::DeadLetter>* out,
                                           uint64_t* total) {
  absl::MutexLock lock(&mu_);
  *total = dead_letters_.size();
  for (size_t i = 0; i < dead_letters_.size() && i < limit; ++i) {
    out->push_back(dead_letters_[i]);
  }
  return absl::OkStatus();
}

absl::Status MemoryEventStore::WriteSnapshots(
    const std::vector<JobSnapshot>& snapshots) {
  absl::MutexLock lock(&mu_);
  if (!next_snapshot_failure_.ok()) {
    return std::exchange(next_snapshot_failure_, absl::OkStatus());
  }
  for (const JobSnapshot& s : snapshots) snapshots_[s.report.job_id] = s;
  return absl::OkStatus();
}

absl::Status MemoryEventStore::ReadSnapshots(std::vector<JobSnapshot>* out) {
  absl::MutexLock lock(&mu_);
  std::map<std::string, const JobSnapshot*> all;
  for (const auto& [id, s] : evicted_) all[id] = &s;
  for (const auto& [id, s] : snapshots_) all[id] = &s;  // the held one wins
  for (const auto& [id, s] : all) out->push_back(*s);
  return absl::OkStatus();
}

absl::Status MemoryEventStore::ReadHeldSnapshots(
    std::vector<JobSnapshot>* out) {
  absl::MutexLock lock(&mu_);
  for (const auto& [id, s] : snapshots_) out->push_back(s);
  return absl::OkStatus();
}

absl::Status MemoryEventStore::ReadSnapshot(const std::string& job_id,
                                            std::optional<JobSnapshot>* out) {
  absl::MutexLock lock(&mu_);
  out->reset();
  if (auto it = snapshots_.find(job_id); it != snapshots_.end()) {
    *out = it->second;
  } else if (auto e = evicted_.find(job_id); e != evicted_.end()) {
    *out = e->second;
  }
  return absl::OkStatus();
}

absl::Status MemoryEventStore::ReadEvictedSnapshot(
    const std::string& job_id, std::optional<JobSnapshot>* out) {
  absl::MutexLock lock(&mu_);
  out->reset();
  if (auto e = evicted_.find(job_id); e != evicted_.end()) *out = e->second;
  return absl::OkStatus();
}

absl::Status MemoryEventStore::ReadEvictedEndedBefore(
    int64_t before_ns, std::vector<JobSnapshot>* out) {
  absl::MutexLock lock(&mu_);
  for (const auto& [ended_ns, id] : evicted_end_) {
    if (ended_ns >= before_ns) break;
    if (auto it = evicted_.find(id); it != evicted_.end()) {
      out->push_back(it->second);
    }
  }
  return absl::OkStatus();
}

absl::Status MemoryEventStore::EvictJobs(
    const std::vector<JobSnapshot>& snapshots,
    const std::optional<std::string>& totals) {
  absl::MutexLock lock(&mu_);
  if (absl::Status failure = TakeFailureLocked(); !failure.ok()) {
    return failure;
  }
  for (const JobSnapshot& s : snapshots) {
    evicted_[s.report.job_id] = s;
    if (!s.events_deleted) evicted_end_.emplace(s.ended_ns, s.report.job_id);
    snapshots_.erase(s.report.job_id);
    evicted_at_[s.report.job_id] = batches_.size();
    imported_.erase(s.report.job_id);  // its head goes too
  }
  if (totals) meta_[kEvictedTotalsMeta] = *totals;
  return absl::OkStatus();
}

absl::Status MemoryEventStore::DeleteJobEvents(
    const std::vector<JobSnapshot>& retired) {
  absl::MutexLock lock(&mu_);
  if (delete_failures_left_ > 0) {
    --delete_failures_left_;
    return next_delete_failure_;
  }
  std::vector<std::string> job_ids;
  for (const JobSnapshot& s : retired) {
    job_ids.push_back(s.report.job_id);
    evicted_end_.erase({s.ended_ns, s.report.job_id});
  }
  DeleteLocked(job_ids);
  return absl::OkStatus();
}

void MemoryEventStore::DeleteLocked(const std::vector<std::string>& job_ids) {
  const std::set<std::string> doomed(job_ids.begin(), job_ids.end());
  for (const std::string& job_id : job_ids) {
    states_.erase(job_id);
    imported_.erase(job_id);
  }
  for (auto& batch : batches_) {
    for (v1::Event& e : batch) {
      if (!IsFleetEvent(e) && doomed.count(e.job_id())) e.Clear();
    }
  }
}

absl::Status MemoryEventStore::ImportJobs(const JobImport& import) {
  absl::MutexLock lock(&mu_);
  std::vector<std::string> jobs;
  for (const auto& s : import.states) jobs.push_back(s.job_id());
  for (const JobSnapshot& s : import.finals) jobs.push_back(s.report.job_id);
  DeleteLocked(jobs);
  for (const std::string& job_id : jobs) snapshots_.erase(job_id);
  for (const auto& s : import.states) {
    states_[s.job_id()][s.through_batch()] = s;
    imported_.insert(s.job_id());  // with a head, evicted or not
  }
  for (const JobSnapshot& s : import.finals) snapshots_[s.report.job_id] = s;
  agents_[import.agent_id] = import.sequence;
  return absl::OkStatus();
}

absl::Status MemoryEventStore::TakeFailureLocked() {
  return std::exchange(next_failure_, absl::OkStatus());
}

void MemoryEventStore::FailNextWrite(absl::Status status) {
  absl::MutexLock lock(&mu_);
  next_failure_ = std::move(status);
}

void MemoryEventStore::FailNextDelete(absl::Status status) {
  FailNextDeletes(1, std::move(status));
}

void MemoryEventStore::FailNextDeletes(int n, absl::Status status) {
  absl::MutexLock lock(&mu_);
  delete_failures_left_ = n;
  next_delete_failure_ = std::move(status);
}

void MemoryEventStore::FailNextFleetDelete(absl::Status status) {
  absl::MutexLock lock(&mu_);
  next_fleet_delete_failure_ = std::move(status);
}

void MemoryEventStore::FailNextSnapshotWrite(absl::Status status) {
  absl::MutexLock lock(&mu_);
  next_snapshot_failure_ = std::move(status);
}

}  // namespace goodput::storage
