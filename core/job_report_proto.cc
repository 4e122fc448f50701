#include "core/job_report_proto.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace goodput::core {
namespace {

void IdentityToProto(const JobReport& job, v1::JobReport* out) {
  out->set_job_id(job.job_id);
  out->set_chips(job.chips);
  out->set_accelerator(job.accelerator);
  out->set_workload(job.workload);
  out->set_framework(job.framework);
  out->mutable_labels()->insert(job.labels.begin(), job.labels.end());
  out->set_state(static_cast<v1::JobState>(job.state));
}

void NumbersToProto(const JobReport& job, v1::JobReport* out) {
  out->set_total_ns(job.total_ns);
  for (int64_t ns : job.nanos) out->add_category_ns(ns);
  out->mutable_custom_ns()->insert(job.custom_nanos.begin(),
                                   job.custom_nanos.end());
  out->set_at_risk_ns(job.at_risk_ns);
  out->set_ideal_seconds(job.ideal_seconds);
  out->set_costed_productive_ns(job.costed_productive_ns);
  if (job.last_step) out->set_last_step(*job.last_step);
  if (job.last_checkpoint) out->set_last_checkpoint(*job.last_checkpoint);
  out->set_lost_steps(job.lost_steps);
  out->set_interruptions(job.interruptions);
  out->set_duplicates(job.duplicates);
  out->set_notices(job.notices);
  out->set_checkpoints(job.checkpoints);
  if (job.usd_per_chip_hour) out->set_usd_per_chip_hour(*job.usd_per_chip_hour);
  if (job.watts_per_chip) out->set_watts_per_chip(*job.watts_per_chip);
  if (job.step_time) {
    v1::StepTime* st = out->mutable_step_time();
    st->set_baseline_steps(job.step_time->baseline_steps);
    st->set_baseline_median_seconds(job.step_time->baseline_median_s);
    st->set_baseline_mad_seconds(job.step_time->baseline_mad_s);
    st->set_recent_steps(job.step_time->recent_steps);
    st->set_recent_p50_seconds(job.step_time->recent_p50_s);
  }
  if (!job.min_chips) return;
  out->set_min_chips(*job.min_chips);
  for (double cs : job.chip_seconds) out->add_category_chip_seconds(cs);
  out->set_costed_productive_chip_seconds(job.costed_productive_chip_seconds);
}

// Records written before exclusions added `excluded` (the last category)
// hold one category fewer; those written before rule 14 added `reshard`,
// two.
constexpr int kCategoriesBeforeExcluded = kNumCategories - 1;
constexpr int kCategoriesBeforeReshard = kNumCategories - 2;

absl::Status CheckFits(const v1::JobReport& in) {
  if (in.category_ns_size() != kNumCategories &&
      in.category_ns_size() != kCategoriesBeforeExcluded &&
      in.category_ns_size() != kCategoriesBeforeReshard) {
    return absl::InvalidArgumentError(
        absl::StrCat("job '", in.job_id(), "': category_ns: want ",
                     kNumCategories, " values, got ", in.category_ns_size()));
  }
  if (in.category_chip_seconds_size() != 0 &&
      in.category_chip_seconds_size() != kNumCategories &&
      in.category_chip_seconds_size() != kCategoriesBeforeExcluded) {
    return absl::InvalidArgumentError(absl::StrCat(
        "job '", in.job_id(), "': category_chip_seconds: want 0 or ",
        kNumCategories, " values, got ", in.category_chip_seconds_size()));
  }
  if (in.state() < static_cast<int>(JobStateKind::kQueued) ||
      in.state() > static_cast<int>(JobStateKind::kEnded)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "job '", in.job_id(), "': state: ", static_cast<int>(in.state()),
        " is not a job state"));
  }
  return absl::OkStatus();
}

void IdentityFromProto(const v1::JobReport& in, JobReport* job) {
  job->job_id = in.job_id();
  job->chips = in.chips();
  job->accelerator = in.accelerator();
  job->workload = in.workload();
  job->framework = in.framework();
  job->labels.insert(in.labels().begin(), in.labels().end());
  job->state = static_cast<JobStateKind>(in.state());
}

void NumbersFromProto(const v1::JobReport& in, JobReport* job) {
  job->total_ns = in.total_ns();
  // A record of the former layout has no reshard: it is 0, the categories
  // after it move up one.
  const bool former = in.category_ns_size() == kCategoriesBeforeReshard;
  const int reshard = Index(Category::kReshard);
  // Categories past the record's end (`excluded`) are 0.
  for (int c = 0; c < kNumCategories; ++c) {
    if (former && c == reshard) continue;
    const int i = former && c > reshard ? c - 1 : c;
    if (i < in.category_ns_size()) job->nanos[c] = in.category_ns(i);
  }
  job->custom_nanos.insert(in.custom_ns().begin(), in.custom_ns().end());
  job->at_risk_ns = in.at_risk_ns();
  job->ideal_seconds = in.ideal_seconds();
  job->costed_productive_ns = in.costed_productive_ns();
  if (in.has_last_step()) job->last_step = in.last_step();
  if (in.has_last_checkpoint()) job->last_checkpoint = in.last_checkpoint();
  job->lost_steps = in.lost_steps();
  job->interruptions = in.interruptions();
  job->duplicates = in.duplicates();
  job->notices = in.notices();
  job->checkpoints = in.checkpoints();
  if (in.has_usd_per_chip_hour()) {
    job->usd_per_chip_hour = in.usd_per_chip_hour();
  }
  if (in.has_watts_per_chip()) job->watts_per_chip = in.watts_per_chip();
  if (in.has_step_time()) {
    const v1::StepTime& st = in.step_time();
    job->step_time =
        StepTimeSummary{st.baseline_steps(),       st.baseline_median_seconds(),
                        st.baseline_mad_seconds(), st.recent_steps(),
                        st.recent_p50_seconds(),   std::nullopt};
    job->step_time->SetRatio();
  }
  if (in.has_min_chips()) job->min_chips = in.min_chips();
  for (int c = 0; c < in.category_chip_seconds_size(); ++c) {
    job->chip_seconds[c] = in.category_chip_seconds(c);
  }
  job->costed_productive_chip_seconds = in.costed_productive_chip_seconds();
}

}  // namespace

v1::JobReport JobReportToProto(const JobReport& job) {
  v1::JobReport out;
  JobReportToProto(job, &out);
  return out;
}

void JobReportToProto(const JobReport& job, v1::JobReport* out) {
  IdentityToProto(job, out);
  NumbersToProto(job, out);
}

absl::StatusOr<JobReport> JobReportFromProto(const v1::JobReport& in) {
  if (absl::Status s = CheckFits(in); !s.ok()) return s;
  JobReport job;
  IdentityFromProto(in, &job);
  NumbersFromProto(in, &job);
  return job;
}

}  // namespace goodput::core
