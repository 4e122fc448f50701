#ifndef GOODPUT_CORE_JOB_REPORT_PROTO_H_
#define GOODPUT_CORE_JOB_REPORT_PROTO_H_

#include "absl/status/statusor.h"
#include "core/report.h"
#include "proto/report.pb.h"

namespace goodput::core {

// The one conversion between core::JobReport and goodput.v1.JobReport
// (proto/report.proto), used by the storage snapshots and the shard
// reports. Stateless, thread-safe functions.

// `job` field for field.
v1::JobReport JobReportToProto(const JobReport& job);
// The same into `*out`, a cleared message (maybe on an arena: the streamed
// report converts each chunk on one), with no intermediate copy.
void JobReportToProto(const JobReport& job, v1::JobReport* out);

// The job of `in`: InvalidArgument naming the job and the field when
// category_ns does not have one value per category or the state is not a
// core::JobStateKind.
absl::StatusOr<JobReport> JobReportFromProto(const v1::JobReport& in);

}  // namespace goodput::core

#endif  // GOODPUT_CORE_JOB_REPORT_PROTO_H_
