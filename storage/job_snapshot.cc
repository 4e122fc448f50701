#include "storage/job_snapshot.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "core/job_report_proto.h"

namespace goodput::storage {

internal::v1::JobSnapshot ToRecord(const JobSnapshot& snapshot) {
  internal::v1::JobSnapshot out;
  out.set_through_batch(snapshot.through_batch);
  out.set_first_event_ns(snapshot.first_event_ns);
  out.set_ended_ns(snapshot.ended_ns);
  out.set_events_deleted(snapshot.events_deleted);
  out.set_imported(snapshot.imported);
  *out.mutable_report() = core::JobReportToProto(snapshot.report);
  return out;
}

absl::Status FromRecord(const internal::v1::JobSnapshot& record,
                        JobSnapshot* snapshot) {
  absl::StatusOr<core::JobReport> report =
      core::JobReportFromProto(record.report());
  if (!report.ok()) {
    return absl::DataLossError(
        absl::StrCat("snapshots: ", report.status().message()));
  }
  snapshot->through_batch = record.through_batch();
  snapshot->first_event_ns = record.first_event_ns();
  snapshot->ended_ns = record.ended_ns();
  snapshot->events_deleted = record.events_deleted();
  snapshot->imported = record.imported();
  snapshot->report = *std::move(report);
  return absl::OkStatus();
}

}  // namespace goodput::storage
