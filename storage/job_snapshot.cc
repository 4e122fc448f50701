#include "storage/job_snapshot.h"

#include "absl/strings/str_cat.h"

namespace goodput::storage {
namespace {

using internal::v1::StoredJobReport;

void FillSpec(const core::JobReport& r, StoredJobReport* out) {
  out->set_job_id(r.job_id);
  out->set_chips(r.chips);
  out->set_accelerator(r.accelerator);
  out->set_workload(r.workload);
  out->set_framework(r.framework);
  out->mutable_labels()->insert(r.labels.begin(), r.labels.end());
  out->set_state(static_cast<int32_t>(r.state));
}

void ReadSpec(const StoredJobReport& in, core::JobReport* r) {
  r->job_id = in.job_id();
  r->chips = in.chips();
  r->accelerator = in.accelerator();
  r->workload = in.workload();
  r->framework = in.framework();
  r->labels.insert(in.labels().begin(), in.labels().end());
  r->state = static_cast<core::JobStateKind>(in.state());
}

void FillNumbers(const core::JobReport& r, StoredJobReport* out) {
  out->set_total_ns(r.total_ns);
  for (int64_t n : r.nanos) out->add_nanos(n);
  out->mutable_custom_nanos()->insert(r.custom_nanos.begin(),
                                      r.custom_nanos.end());
  out->set_at_risk_ns(r.at_risk_ns);
  out->set_ideal_seconds(r.ideal_seconds);
  out->set_costed_productive_ns(r.costed_productive_ns);
  if (r.last_step) out->set_last_step(*r.last_step);
  if (r.last_checkpoint) out->set_last_checkpoint(*r.last_checkpoint);
  out->set_lost_steps(r.lost_steps);
  out->set_interruptions(r.interruptions);
  out->set_duplicates(r.duplicates);
  out->set_notices(r.notices);
}

void ReadNumbers(const StoredJobReport& in, core::JobReport* r) {
  r->total_ns = in.total_ns();
  for (int c = 0; c < core::kNumCategories; ++c) r->nanos[c] = in.nanos(c);
  r->custom_nanos.insert(in.custom_nanos().begin(), in.custom_nanos().end());
  r->at_risk_ns = in.at_risk_ns();
  r->ideal_seconds = in.ideal_seconds();
  r->costed_productive_ns = in.costed_productive_ns();
  if (in.has_last_step()) r->last_step = in.last_step();
  if (in.has_last_checkpoint()) r->last_checkpoint = in.last_checkpoint();
  r->lost_steps = in.lost_steps();
  r->interruptions = in.interruptions();
  r->duplicates = in.duplicates();
  r->notices = in.notices();
}

}  // namespace

internal::v1::JobSnapshot ToRecord(const JobSnapshot& snapshot) {
  internal::v1::JobSnapshot out;
  out.set_through_batch(snapshot.through_batch);
  out.set_first_event_ns(snapshot.first_event_ns);
  out.set_ended_ns(snapshot.ended_ns);
  out.set_events_deleted(snapshot.events_deleted);
  FillSpec(snapshot.report, out.mutable_report());
  FillNumbers(snapshot.report, out.mutable_report());
  return out;
}

absl::Status FromRecord(const internal::v1::JobSnapshot& record,
                        JobSnapshot* snapshot) {
  const StoredJobReport& r = record.report();
  if (r.nanos_size() != core::kNumCategories ||
      r.state() < static_cast<int>(core::JobStateKind::kQueued) ||
      r.state() > static_cast<int>(core::JobStateKind::kEnded)) {
    return absl::DataLossError(
        absl::StrCat("snapshots: job \"", r.job_id(), "\" has ", r.nanos_size(),
                     " categories and state ", r.state(), "; want ",
                     core::kNumCategories, " and a core::JobStateKind"));
  }
  snapshot->through_batch = record.through_batch();
  snapshot->first_event_ns = record.first_event_ns();
  snapshot->ended_ns = record.ended_ns();
  snapshot->events_deleted = record.events_deleted();
  snapshot->report = core::JobReport();
  ReadSpec(r, &snapshot->report);
  ReadNumbers(r, &snapshot->report);
  return absl::OkStatus();
}

}  // namespace goodput::storage
