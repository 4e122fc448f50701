// The wire form of v1::JobReport (proto/report.proto) written straight from
// core::JobReport: the bytes protobuf's deterministic serialization of
// core::JobReportToProto(job) gives, without building the message (no
// allocation per field, no size pass). Query.Report streams its jobs so.
// A field added to v1::JobReport must be added here too:
// job_report_wire_test fails until it is. Stateless functions; thread-safe.
#ifndef GOODPUT_REPORT_JOB_REPORT_WIRE_H_
#define GOODPUT_REPORT_JOB_REPORT_WIRE_H_

#include <cstddef>
#include <string>

#include "core/report.h"

namespace goodput::report {

// Appends `job` as field `field_number` (a JobReport field, e.g.
// v1::ShardReport's jobs) of an enclosing message: tag, length and the
// serialized v1::JobReport, written from `(*out)[*used]` on; `*used` moves
// past it. `out` grows as needed (its bytes past `*used` are scratch).
void AppendJobReportField(int field_number, const core::JobReport& job,
                          std::string* out, size_t* used);

}  // namespace goodput::report

#endif  // GOODPUT_REPORT_JOB_REPORT_WIRE_H_
