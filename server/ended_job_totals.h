#ifndef GOODPUT_SERVER_ENDED_JOB_TOTALS_H_
#define GOODPUT_SERVER_ENDED_JOB_TOTALS_H_

#include <cstdint>
#include <functional>
#include <map>
#include <string>

#include "absl/status/statusor.h"
#include "core/report.h"
#include "proto/storage.pb.h"

namespace goodput::server {

// The summed final reports of the ended jobs that LiveState evicted from
// memory, one group per label set (accelerator, workload, framework,
// chips, labels): its size is bounded by the label cardinality, not by the
// number of jobs. The metrics exporter counts each group like one ended
// job, so its counters keep the evicted jobs (docs/metrics.md). A plain
// value; not thread-safe.
class EndedJobTotals {
 public:
  struct Group {
    // The label set's identity, and the sums over its jobs of nanos,
    // custom_nanos, total_ns, at_risk_ns, ideal_seconds,
    // costed_productive_ns, last_step, lost_steps, interruptions,
    // duplicates and notices; state ENDED.
    core::JobReport totals;
    int64_t jobs = 0;             // jobs in the group
    int64_t newest_ended_ns = 0;  // the latest job_ended among them
  };

  // Adds the final report of a job that ended at `ended_ns`.
  void Add(const core::JobReport& report, int64_t ended_ns);
  // A job already added as `old` ended with `now` instead (a late event
  // changed it): its group (the one of `old`) takes the difference.
  void Revise(const core::JobReport& old, const core::JobReport& now,
              int64_t ended_ns);

  void ForEach(const std::function<void(const Group&)>& fn) const;

  // The stored form (meta/evicted, storage/KEY_LAYOUT.md "Evicted jobs"),
  // with the newest applied event time when written; and back: DataLoss
  // if a group's report does not fit core's types.
  internal::v1::StoredEvictedTotals ToRecord(int64_t applied_through_ns) const;
  static absl::StatusOr<EndedJobTotals> FromRecord(
      const internal::v1::StoredEvictedTotals& record);

  int64_t jobs() const { return jobs_; }
  size_t groups() const { return groups_.size(); }

 private:
  static std::string KeyOf(const core::JobReport& report);
  Group& GroupOf(const core::JobReport& report, int64_t ended_ns);

  std::map<std::string, Group> groups_;
  int64_t jobs_ = 0;
};

}  // namespace goodput::server

#endif  // GOODPUT_SERVER_ENDED_JOB_TOTALS_H_
