// The machine form of the drill-down views in the Query API
// (proto/service.proto): goodputd converts core's views to the responses,
// goodputctl converts them back and renders them with report/'s writers.
// Each FromProto inverts its ToProto (a round-trip test holds them to it)
// and names the field of a malformed message. Stateless, thread-safe
// functions.
#ifndef GOODPUT_REPORT_QUERY_PROTO_H_
#define GOODPUT_REPORT_QUERY_PROTO_H_

#include <cstddef>

#include "absl/status/statusor.h"
#include "core/drilldown.h"
#include "core/job_timeline.h"
#include "core/report.h"
#include "proto/service.pb.h"

namespace goodput::report {

v1::Totals TotalsToProto(const core::Totals& totals);
absl::StatusOr<core::Totals> TotalsFromProto(const v1::Totals& in);

v1::TimelineEntry TimelineEntryToProto(const core::TimelineEntry& entry);
core::TimelineEntry TimelineEntryFromProto(const v1::TimelineEntry& in);

v1::JobsResponse JobsViewToProto(const core::JobsView& view);
absl::StatusOr<core::JobsView> JobsViewFromProto(const v1::JobsResponse& in);

v1::JobResponse JobViewToProto(const core::JobView& view);
absl::StatusOr<core::JobView> JobViewFromProto(const v1::JobResponse& in);

v1::FleetResponse FleetViewToProto(const core::FleetView& view);
absl::StatusOr<core::FleetView> FleetViewFromProto(const v1::FleetResponse& in);

// Query.Summary's report part of `report`: fleet totals and ratios, jobs
// by state (every state, zeros included), badput by category (positive,
// largest first) and the `worst` jobs with the most lost chip-seconds.
// The caller adds the ingest counters.
v1::SummaryResponse SummaryFromReport(const core::FleetReport& report,
                                      size_t worst);

// Sets `out`'s fleet, ratios and badput (positive, largest first) from
// `totals`.
void SummarizeTotals(const core::Totals& totals, v1::SummaryResponse* out);

// The ratios of `totals` (core::ComputeRatios) as a message.
v1::Ratios RatiosToProto(const core::TotalsRatios& ratios);

}  // namespace goodput::report

#endif  // GOODPUT_REPORT_QUERY_PROTO_H_
