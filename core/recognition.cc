#include "core/recognition.h"

#include "core/state_fields.h"

namespace goodput::core {
namespace {

void SaveObservation(const CheckpointObservation& o,
                     internal::v1::CheckpointObservationState* out) {
  out->set_run_seconds(o.run_seconds);
  out->set_interruptions(o.interruptions);
  out->set_checkpoint_seconds(o.checkpoint_seconds);
  out->set_checkpoints(o.checkpoints);
  out->set_restart_seconds(o.restart_seconds);
  out->set_chips(o.chips);
}

CheckpointObservation LoadObservation(
    const internal::v1::CheckpointObservationState& in) {
  CheckpointObservation o;
  o.run_seconds = in.run_seconds();
  o.interruptions = in.interruptions();
  o.checkpoint_seconds = in.checkpoint_seconds();
  o.checkpoints = in.checkpoints();
  o.restart_seconds = in.restart_seconds();
  o.chips = in.chips();
  return o;
}

}  // namespace

int ReasonIndex(v1::Interruption::Reason reason) {
  switch (reason) {
    case v1::Interruption::PREEMPTED:
      return 0;
    case v1::Interruption::FAILED:
      return 1;
    case v1::Interruption::HOST_FAILURE:
      return 2;
    case v1::Interruption::MAINTENANCE:
      return 3;
    default:
      return 4;
  }
}

const char* ReasonName(int index) {
  static constexpr const char* kNames[kNumReasons] = {
      "PREEMPTED", "FAILED", "HOST_FAILURE", "MAINTENANCE", "OTHER"};
  return index >= 0 && index < kNumReasons ? kNames[index] : "OTHER";
}

void AddCounters(const Recognized& from, Recognized* to) {
  for (int c = 0; c < kNumCategories; ++c) {
    to->nanos[c] += from.nanos[c];
    to->chip_seconds[c] += from.chip_seconds[c];
  }
  to->costed_productive_chip_seconds += from.costed_productive_chip_seconds;
  for (int r = 0; r < kNumReasons; ++r) {
    to->interruptions[r] += from.interruptions[r];
    to->notices[r] += from.notices[r];
  }
  to->costed_productive_ns += from.costed_productive_ns;
  to->ideal_seconds += from.ideal_seconds;
  to->pg_above_one_steps += from.pg_above_one_steps;
  to->duplicates += from.duplicates;
  to->steps += from.steps;
}

void SaveRecognized(const Recognized& r, internal::v1::RecognizedState* out) {
  SaveArray(r.nanos, out->mutable_nanos());
  out->set_costed_productive_ns(r.costed_productive_ns);
  out->set_ideal_seconds(r.ideal_seconds);
  SaveArray(r.interruptions, out->mutable_interruptions());
  SaveArray(r.notices, out->mutable_notices());
  out->set_pg_above_one_steps(r.pg_above_one_steps);
  out->set_duplicates(r.duplicates);
  out->set_steps(r.steps);
  out->set_at_risk_ns(r.at_risk_ns);
  if (r.last_step_ns) out->set_last_step_ns(*r.last_step_ns);
  if (r.last_checkpoint_ns) out->set_last_checkpoint_ns(*r.last_checkpoint_ns);
  out->set_state(static_cast<internal::v1::RecognizedState::JobState>(r.state));
  out->set_chips(r.chips);
  out->set_last_event_ns(r.last_event_ns);
  if (r.min_chips) out->set_min_chips(*r.min_chips);
  // Kept only where set: a fixed-size job's (or group's) are all 0.
  if (r.min_chips || r.costed_productive_chip_seconds != 0 ||
      r.chip_seconds != CategoryChipSeconds{}) {
    SaveArray(r.chip_seconds, out->mutable_chip_seconds());
  }
  out->set_costed_productive_chip_seconds(r.costed_productive_chip_seconds);
  if (r.step_time) {
    out->set_step_baseline_steps(r.step_time->baseline_steps);
    out->set_step_baseline_median_seconds(r.step_time->baseline_median_s);
    out->set_step_baseline_mad_seconds(r.step_time->baseline_mad_s);
    out->set_step_recent_steps(r.step_time->recent_steps);
    out->set_step_recent_p50_seconds(r.step_time->recent_p50_s);
  }
  if (r.checkpoint_advised_s) {
    out->set_checkpoint_advised_seconds(*r.checkpoint_advised_s);
  }
  if (r.checkpoint_actual_s) {
    out->set_checkpoint_actual_seconds(*r.checkpoint_actual_s);
  }
  if (r.checkpoint) SaveObservation(*r.checkpoint, out->mutable_checkpoint());
}

absl::Status LoadRecognized(const internal::v1::RecognizedState& in,
                            absl::string_view field, Recognized* out) {
  Recognized r;
  for (absl::Status s :
       {LoadCategoryArray(in.nanos(), SubField(field, "nanos"), &r.nanos),
        LoadArray(in.interruptions(), SubField(field, "interruptions"),
                  &r.interruptions),
        LoadArray(in.notices(), SubField(field, "notices"), &r.notices)}) {
    if (!s.ok()) return s;
  }
  if (!internal::v1::RecognizedState::JobState_IsValid(in.state())) {
    return CorruptField(SubField(field, "state"), absl::StrCat(in.state()));
  }
  r.costed_productive_ns = in.costed_productive_ns();
  r.ideal_seconds = in.ideal_seconds();
  r.pg_above_one_steps = in.pg_above_one_steps();
  r.duplicates = in.duplicates();
  r.steps = in.steps();
  r.at_risk_ns = in.at_risk_ns();
  if (in.has_last_step_ns()) r.last_step_ns = in.last_step_ns();
  if (in.has_last_checkpoint_ns()) {
    r.last_checkpoint_ns = in.last_checkpoint_ns();
  }
  r.state = static_cast<JobStateKind>(in.state());
  r.chips = in.chips();
  r.last_event_ns = in.last_event_ns();
  if (in.chip_seconds_size() > 0) {
    absl::Status s = LoadCategoryArray(
        in.chip_seconds(), SubField(field, "chip_seconds"), &r.chip_seconds);
    if (!s.ok()) return s;
  }
  r.costed_productive_chip_seconds = in.costed_productive_chip_seconds();
  if (in.has_min_chips()) r.min_chips = in.min_chips();
  if (in.has_step_baseline_steps()) {
    r.step_time = StepTimeSummary{
        in.step_baseline_steps(),       in.step_baseline_median_seconds(),
        in.step_baseline_mad_seconds(), in.step_recent_steps(),
        in.step_recent_p50_seconds(),   std::nullopt};
    r.step_time->SetRatio();
  }
  if (in.has_checkpoint_advised_seconds()) {
    r.checkpoint_advised_s = in.checkpoint_advised_seconds();
  }
  if (in.has_checkpoint_actual_seconds()) {
    r.checkpoint_actual_s = in.checkpoint_actual_seconds();
  }
  if (in.has_checkpoint()) r.checkpoint = LoadObservation(in.checkpoint());
  *out = r;
  return absl::OkStatus();
}

}  // namespace goodput::core
