// JobTracker snapshots: its whole state as an internal::v1::JobTrackerState
// (proto/tracker_state.proto), and back (SaveState, FromState).
#include <algorithm>
#include <array>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "core/event_order.h"
#include "core/job_tracker.h"
#include "core/state_fields.h"

namespace goodput::core {
namespace {

using Proto = internal::v1::JobTrackerState;
using NameMap = google::protobuf::Map<std::string, int64_t>;

constexpr int64_t kNoWindow = std::numeric_limits<int64_t>::min();

absl::Status Unfit(absl::string_view field, absl::string_view what) {
  return absl::InvalidArgumentError(
      absl::StrCat(field, ": ", what, "; replay the job's events instead"));
}

std::optional<int64_t> Opt(bool has, int64_t value) {
  return has ? std::optional<int64_t>(value) : std::nullopt;
}

const char* CategoryNameAt(int c) {
  return CategoryName(static_cast<Category>(c));
}

// Saves `counts` by name (zeros left out) and loads them back, failing on
// a name that `name_of` gives no index below `n`.
template <size_t n>
void SaveCounts(const std::array<int64_t, n>& counts,
                const char* (*name_of)(int), NameMap* out) {
  for (size_t i = 0; i < n; ++i) {
    if (counts[i] != 0) (*out)[name_of(static_cast<int>(i))] = counts[i];
  }
}

int IndexOfName(const std::string& name, int n, const char* (*name_of)(int)) {
  for (int i = 0; i < n; ++i) {
    if (name == name_of(i)) return i;
  }
  return -1;
}

template <size_t n>
absl::Status LoadCounts(const NameMap& in, const char* (*name_of)(int),
                        absl::string_view field,
                        std::array<int64_t, n>* counts) {
  *counts = {};
  for (const auto& [name, value] : in) {
    const int i = IndexOfName(name, static_cast<int>(n), name_of);
    if (i < 0)
      return CorruptField(field, absl::StrCat("unknown name \"", name, "\""));
    (*counts)[i] = value;
  }
  return absl::OkStatus();
}

// Whether `index` is absent or an index into a vector of `size` entries.
absl::Status CheckIndex(bool has, int index, size_t size,
                        absl::string_view field) {
  if (!has || (index >= 0 && static_cast<size_t>(index) < size)) {
    return absl::OkStatus();
  }
  return CorruptField(field,
                      absl::StrCat(index, " is out of range [0, ", size, ")"));
}

}  // namespace

// Reads and writes JobTracker's private members, one group per function.
struct JobTrackerStateCodec {
  using Attempt = JobTracker::Attempt;
  using Completion = JobTracker::Completion;
  using FirstStep = JobTracker::FirstStep;
  using Sink = JobTracker::Sink;
  using Recognition = JobTracker::Recognition;

  // The proto enums mirror the tracker's, value for value.
  static_assert(static_cast<int>(JobTracker::Alloc::kShort) ==
                Proto::ALLOC_SHORT);
  static_assert(static_cast<int>(JobTracker::Alloc::kEnough) ==
                Proto::ALLOC_ENOUGH);
  static_assert(static_cast<int>(JobTracker::Fate::kLost) == Proto::FATE_LOST);
  static_assert(static_cast<int>(JobTracker::Fate::kDurable) ==
                Proto::FATE_DURABLE);
  static_assert(static_cast<int>(ObservationKind::kTimeBetweenInterruptions) ==
                Proto::OBSERVATION_TIME_BETWEEN_INTERRUPTIONS);
  static_assert(static_cast<int>(ObservationKind::kTimeToRecover) ==
                Proto::OBSERVATION_TIME_TO_RECOVER);

  // --- Save.
  static void SaveConfig(const JobTracker& t, Proto* s);
  static void SaveSpec(const JobTracker& t, Proto::JobSpec* s);
  static void SaveTimeline(const JobTracker& t, Proto::Timeline* s);
  static void SaveAttempt(const Attempt& a, Proto::Attempt* s);
  static void SaveSink(const Sink& sink, Proto::Sink* s);
  static void SaveTotals(const JobTracker& t, Proto* s);
  // The pending completions as columns (version 7), and their first_ref
  // and chips columns, left empty when all are none or 0.
  static void SaveCompletions(const std::vector<Completion>& all,
                              Proto::CompletionColumns* s);
  static void SaveSparseColumns(const std::vector<Completion>& all,
                                Proto::CompletionColumns* s);
  static void SaveFirstStep(const FirstStep& f, Proto::FirstStep* s);
  static void SaveRecognition(const Recognition& r, Proto::Recognition* s);

  // --- Load.
  static absl::StatusOr<bool> FitsWindow(const Proto& s, const Config& c);
  static absl::Status CheckConfig(const Proto& s, const Config& c);
  static absl::Status Load(const Proto& s, JobTracker* t);
  static absl::Status LoadPeak(const Proto& s, JobTracker* t);
  static void LoadSpec(const Proto::JobSpec& spec, JobTracker* t);
  static absl::Status LoadTimeline(const Proto::Timeline& s, JobTracker* t);
  static absl::Status LoadAttempts(const Proto& s, JobTracker* t);
  static absl::Status LoadSink(const Proto::Sink& s, Sink* sink);
  static void LoadTotals(const Proto& s, JobTracker* t);
  static absl::Status LoadCompletions(const Proto& s, JobTracker* t);
  // The pending completions from the columns (version 7) or the messages
  // (versions 3 to 6), not yet checked against the tracker.
  static absl::StatusOr<std::vector<Completion>> CompletionsOf(const Proto& s);
  static std::vector<Completion> CompletionsOfMessages(const Proto& s);
  // DataLoss naming pending_columns if its columns do not fit together.
  static absl::Status CheckColumns(const Proto& s);
  static absl::Status LoadExclusions(const Proto& s, JobTracker* t);
  static absl::Status LoadFirstSteps(const Proto& s, JobTracker* t);
  static absl::Status LoadRecognition(const Proto::Recognition& s,
                                      JobTracker* t);
  static absl::Status LoadReasons(const Proto::Recognition& s, Recognition* r);
  static absl::Status LoadObservations(const Proto::Recognition& s,
                                       Recognition* r);
  static void ClipToWindow(JobTracker* t);
};

// --- Save.

void JobTracker::SaveState(Proto* state) const {
  using Codec = JobTrackerStateCodec;
  state->Clear();
  Codec::SaveConfig(*this, state);
  state->set_job_id(job_id_);
  Codec::SaveSpec(*this, state->mutable_spec());
  Codec::SaveTimeline(*this, state->mutable_timeline());
  for (const Attempt& a : attempts_)
    Codec::SaveAttempt(a, state->add_attempts());
  Codec::SaveSink(sink_, state->mutable_sink());
  Codec::SaveTotals(*this, state);
  if (!pending_.empty()) {
    Codec::SaveCompletions(pending_, state->mutable_pending_columns());
  }
  for (const FirstStep& f : first_steps_) {
    Codec::SaveFirstStep(f, state->add_first_steps());
  }
  Codec::SaveRecognition(recog_, state->mutable_recognition());
  for (const auto& [start, until] : exclusions_.intervals()) {
    Proto::Interval* i = state->add_exclusions();
    i->set_start_ns(start);
    i->set_until_ns(until);
  }
  step_times_.SaveState(state->mutable_step_times());
}

void JobTrackerStateCodec::SaveConfig(const JobTracker& t, Proto* s) {
  s->set_version(kJobTrackerStateVersion);
  if (t.config_->since_ns != kNoWindow) s->set_since_ns(t.config_->since_ns);
  s->set_stall_after_ns(t.config_->stall_after_ns);
  if (t.peak_ != nullptr) {
    s->mutable_peak()->set_flops_per_second(t.peak_->flops_per_second);
    s->mutable_peak()->set_bytes_per_second(t.peak_->bytes_per_second);
  }
}

void JobTrackerStateCodec::SaveSpec(const JobTracker& t, Proto::JobSpec* s) {
  s->set_requested_chips(t.requested_chips_);
  s->set_weight_chips(t.weight_chips_);
  s->set_accelerator(t.accelerator_);
  s->set_framework(t.framework_);
  s->mutable_labels()->insert(t.labels_.begin(), t.labels_.end());
  s->set_step_flops(t.step_flops_);
  s->set_step_bytes(t.step_bytes_);
  s->set_min_chips(t.min_chips_);
  if (t.alloc_chips_ >= 0) s->set_alloc_chips(t.alloc_chips_);
}

void JobTrackerStateCodec::SaveTimeline(const JobTracker& t,
                                        Proto::Timeline* s) {
  s->set_first_event_ns(t.first_event_ns_);
  s->set_last_event_ns(t.last_event_ns_);
  s->set_cursor_ns(t.cursor_ns_);
  s->set_end_ns(t.end_ns_);
  s->set_workload(t.workload_);
  s->set_activity(t.activity_);
  s->set_alloc(static_cast<Proto::Alloc>(t.alloc_));
  s->set_started(t.started_);
  s->set_ended(t.ended_);
  s->set_job_event_seen(t.job_event_seen_);
  s->set_ever_allocated(t.ever_allocated_);
  s->set_recovering(t.recovering_);
  s->set_running(t.running_);
  s->set_pending_resume(t.pending_resume_);
  s->set_custom_name(t.custom_name_);
  s->set_resize_pending(t.resize_pending_);
  s->set_step_held(t.step_held_);
}

void JobTrackerStateCodec::SaveAttempt(const Attempt& a, Proto::Attempt* s) {
  s->set_id(a.id);
  if (a.max_step) s->set_max_step(*a.max_step);
  if (a.max_checkpoint) s->set_max_checkpoint(*a.max_checkpoint);
  if (a.restore_step) s->set_restore_step(*a.restore_step);
  s->set_ended(a.ended);
  s->set_compile_seen(a.compile_seen);
  s->set_resumed(a.resumed);
  s->set_reported(a.reported);
}

void JobTrackerStateCodec::SaveSink(const Sink& sink, Proto::Sink* s) {
  SaveCounts(sink.nanos, &CategoryNameAt, s->mutable_nanos());
  s->mutable_custom()->insert(sink.custom.begin(), sink.custom.end());
  s->set_open_ns(sink.open_ns);
  s->set_open_prefix_ns(sink.open_prefix_ns);
  s->set_gap_ns(sink.gap_ns);
  s->set_gap_prefix_ns(sink.gap_prefix_ns);
  for (int c = 0; c < kNumCategories; ++c) {
    if (sink.chip_s[c] != 0)
      (*s->mutable_chip_s())[CategoryNameAt(c)] = sink.chip_s[c];
  }
  s->set_open_cns(sink.open_cns);
  s->set_gap_cns(sink.gap_cns);
}

void JobTrackerStateCodec::SaveTotals(const JobTracker& t, Proto* s) {
  s->set_costed_productive_ns(t.costed_productive_ns_);
  s->set_ideal_s(t.ideal_s_);
  s->set_at_risk_ns(t.at_risk_ns_);
  s->set_mean_sum_ns(t.mean_sum_ns_);
  s->set_mean_steps(t.mean_steps_);
  if (t.max_durable_step_) s->set_max_durable_step(*t.max_durable_step_);
  if (t.last_checkpoint_) s->set_last_checkpoint(*t.last_checkpoint_);
  s->set_lost_steps(t.lost_steps_);
  s->set_duplicates(t.duplicates_);
  s->set_costed_productive_cs(t.costed_productive_cs_);
  for (const auto& [held, mean] : t.elastic_means_) {
    Proto::Mean& m = (*s->mutable_elastic_means())[held];
    m.set_sum_ns(mean.sum_ns);
    m.set_steps(mean.steps);
  }
}

void JobTrackerStateCodec::SaveCompletions(const std::vector<Completion>& all,
                                           Proto::CompletionColumns* s) {
  const int n = static_cast<int>(all.size());
  s->mutable_first_step_delta()->Reserve(n);
  s->mutable_extra_steps()->Reserve(n);
  s->mutable_rest_ns()->Reserve(n);
  s->mutable_rest_window_delta_ns()->Reserve(n);
  s->mutable_ideal_s()->Reserve(n);
  s->mutable_costed()->Reserve(n);
  int64_t last_step = 0;
  for (const Completion& c : all) {
    s->add_first_step_delta(WrappingSub(c.first_step, last_step));
    s->add_extra_steps(WrappingSub(c.last_step, c.first_step));
    s->add_rest_ns(c.rest_ns);
    s->add_rest_window_delta_ns(WrappingSub(c.rest_ns, c.rest_window_ns));
    s->add_ideal_s(c.ideal_s);
    s->add_costed(c.costed);
    last_step = c.last_step;
  }
  SaveSparseColumns(all, s);
}

void JobTrackerStateCodec::SaveSparseColumns(const std::vector<Completion>& all,
                                             Proto::CompletionColumns* s) {
  const auto ref = [](const Completion& c) { return c.first_ref >= 0; };
  const auto chips = [](const Completion& c) { return c.chips != 0; };
  if (std::any_of(all.begin(), all.end(), ref)) {
    for (const Completion& c : all) s->add_first_ref_plus_one(c.first_ref + 1);
  }
  if (std::any_of(all.begin(), all.end(), chips)) {
    for (const Completion& c : all) s->add_chips(c.chips);
  }
}

void JobTrackerStateCodec::SaveFirstStep(const FirstStep& f,
                                         Proto::FirstStep* s) {
  s->set_time_ns(f.time_ns);
  s->set_prefix_ns(f.prefix_ns);
  s->set_wait_ns(f.wait_ns);
  s->set_idle_ns(f.idle_ns);
  s->set_steps(f.steps);
  s->set_ideal_s(f.ideal_s);
  s->set_costed(f.costed);
  s->set_fate(static_cast<Proto::Fate>(f.fate));
  if (f.frozen_compile) s->set_frozen_compile(*f.frozen_compile);
  s->set_chips(f.chips);
  s->set_held(f.held);
}

void JobTrackerStateCodec::SaveRecognition(const Recognition& r,
                                           Proto::Recognition* s) {
  SaveCounts(r.interruptions, &ReasonName, s->mutable_interruptions());
  SaveCounts(r.notices, &ReasonName, s->mutable_notices());
  s->set_pg_above_one_steps(r.pg_above_one_steps);
  s->set_checkpoints(r.checkpoints);
  if (r.last_step_ns) s->set_last_step_ns(*r.last_step_ns);
  if (r.last_checkpoint_ns) s->set_last_checkpoint_ns(*r.last_checkpoint_ns);
  if (r.attempt_start_ns) s->set_attempt_start_ns(*r.attempt_start_ns);
  if (r.recover_from_ns) s->set_recover_from_ns(*r.recover_from_ns);
  s->set_pending_ns(r.pending_ns);
  s->set_pending_costed_ns(r.pending_costed_ns);
  s->set_pending_ideal_s(r.pending_ideal_s);
  s->set_pending_cs(r.pending_cs);
  s->set_pending_costed_cs(r.pending_costed_cs);
  s->set_freeze_at_step(r.freeze_at_step);
  s->set_ending_reason(ReasonName(r.ending_reason));
  if (r.unfrozen_first >= 0) s->set_unfrozen_first(r.unfrozen_first);
  s->set_first_step_done(r.first_step_done);
  for (const Observation& o : r.observations) {
    Proto::Observation* so = s->add_observations();
    so->set_kind(static_cast<Proto::ObservationKind>(o.kind));
    so->set_nanos(o.nanos);
  }
}

// --- Load.

absl::StatusOr<JobTracker> JobTracker::FromState(const Proto& state,
                                                 const Config* config) {
  using Codec = JobTrackerStateCodec;
  if (absl::Status s = Codec::CheckConfig(state, *config); !s.ok()) return s;
  absl::StatusOr<bool> clip = Codec::FitsWindow(state, *config);
  if (!clip.ok()) return clip.status();
  JobTracker t(state.job_id(), config);
  if (absl::Status s = Codec::Load(state, &t); !s.ok()) return s;
  if (*clip) Codec::ClipToWindow(&t);
  return t;
}

absl::Status JobTrackerStateCodec::CheckConfig(const Proto& s,
                                               const Config& c) {
  // Version 3 differs only by having no exclusions (read as none),
  // versions 3 and 4 by having no step times (read as none yet), and
  // versions 3 to 5 by having no checkpoint count (read as 0 so far),
  // versions 3 to 6 by having messages where version 7 has columns (both
  // are read).
  if (s.version() < 3 || s.version() > kJobTrackerStateVersion) {
    return Unfit("version", absl::StrCat(s.version(), " is not 3 to ",
                                         kJobTrackerStateVersion));
  }
  if (s.stall_after_ns() != c.stall_after_ns) {
    return Unfit("stall_after_ns",
                 absl::StrCat("saved under ", s.stall_after_ns(),
                              ", the config has ", c.stall_after_ns));
  }
  return absl::OkStatus();
}

// Whether the state fits `c`'s window: false when it was saved under the
// same window (no window for both), true when its window parts are to be
// cleared (ClipToWindow), an error otherwise.
absl::StatusOr<bool> JobTrackerStateCodec::FitsWindow(const Proto& s,
                                                      const Config& c) {
  const int64_t saved = s.has_since_ns() ? s.since_ns() : kNoWindow;
  if (c.since_ns == saved) return false;
  if (saved != kNoWindow) {
    return Unfit("since_ns", absl::StrCat("saved under the window since ",
                                          FormatTimeNanos(saved)));
  }
  const int64_t cursor = s.timeline().cursor_ns();
  if (c.since_ns < cursor) {
    return Unfit("since_ns",
                 absl::StrCat("the window since ", FormatTimeNanos(c.since_ns),
                              " starts before the state's cursor_ns ",
                              FormatTimeNanos(cursor)));
  }
  return true;
}

absl::Status JobTrackerStateCodec::Load(const Proto& s, JobTracker* t) {
  LoadSpec(s.spec(), t);
  absl::Status status = LoadPeak(s, t);
  if (status.ok()) status = LoadTimeline(s.timeline(), t);
  if (status.ok()) status = LoadAttempts(s, t);
  if (status.ok()) status = LoadSink(s.sink(), &t->sink_);
  if (status.ok()) LoadTotals(s, t);
  if (status.ok()) status = LoadFirstSteps(s, t);
  if (status.ok()) status = LoadCompletions(s, t);
  if (status.ok()) status = LoadRecognition(s.recognition(), t);
  if (status.ok()) status = LoadExclusions(s, t);
  if (status.ok()) status = t->step_times_.LoadState(s.step_times());
  return status;
}

absl::Status JobTrackerStateCodec::LoadExclusions(const Proto& s,
                                                  JobTracker* t) {
  for (const Proto::Interval& i : s.exclusions()) {
    if (i.until_ns() <= i.start_ns()) {
      return CorruptField(
          "exclusions", absl::StrCat("until_ns ", i.until_ns(), " <= start_ns ",
                                     i.start_ns()));
    }
    t->exclusions_.Add(i.start_ns(), i.until_ns());
  }
  return absl::OkStatus();
}

// The accelerator's peaks come from the config's catalog, as in
// OnSubmitted; they must be the ones the state was attributed under. (An
// accelerator is only set by job_submitted, which looked it up.)
absl::Status JobTrackerStateCodec::LoadPeak(const Proto& s, JobTracker* t) {
  const std::string& accelerator = s.spec().accelerator();
  const ChipPeak* peak = t->config_->catalog.Find(accelerator);
  if (!s.has_peak() && peak != nullptr && !accelerator.empty()) {
    return Unfit("peak", absl::StrCat("accelerator \"", accelerator,
                                      "\" was not in the catalog"));
  }
  if (s.has_peak() && (peak == nullptr ||
                       peak->flops_per_second != s.peak().flops_per_second() ||
                       peak->bytes_per_second != s.peak().bytes_per_second())) {
    return Unfit("peak", absl::StrCat("the catalog's entry for \"", accelerator,
                                      "\" changed"));
  }
  t->peak_ = s.has_peak() ? peak : nullptr;
  return absl::OkStatus();
}

void JobTrackerStateCodec::LoadSpec(const Proto::JobSpec& spec, JobTracker* t) {
  t->requested_chips_ = spec.requested_chips();
  t->weight_chips_ = spec.weight_chips();
  t->accelerator_ = spec.accelerator();
  t->framework_ = spec.framework();
  t->labels_.insert(spec.labels().begin(), spec.labels().end());
  t->step_flops_ = spec.step_flops();
  t->step_bytes_ = spec.step_bytes();
  t->min_chips_ = spec.min_chips();
  t->alloc_chips_ = spec.has_alloc_chips() ? spec.alloc_chips() : -1;
}

absl::Status JobTrackerStateCodec::LoadTimeline(const Proto::Timeline& s,
                                                JobTracker* t) {
  if (!v1::JobSubmitted::Workload_IsValid(s.workload())) {
    return CorruptField("timeline.workload", absl::StrCat(s.workload()));
  }
  if (!v1::Activity::Kind_IsValid(s.activity())) {
    return CorruptField("timeline.activity", absl::StrCat(s.activity()));
  }
  if (!Proto::Alloc_IsValid(s.alloc())) {
    return CorruptField("timeline.alloc", absl::StrCat(s.alloc()));
  }
  t->first_event_ns_ = s.first_event_ns();
  t->last_event_ns_ = s.last_event_ns();
  t->cursor_ns_ = s.cursor_ns();
  t->end_ns_ = s.end_ns();
  t->workload_ = s.workload();
  t->activity_ = s.activity();
  t->alloc_ = static_cast<JobTracker::Alloc>(s.alloc());
  t->started_ = s.started();
  t->ended_ = s.ended();
  t->job_event_seen_ = s.job_event_seen();
  t->ever_allocated_ = s.ever_allocated();
  t->recovering_ = s.recovering();
  t->running_ = s.running();
  t->pending_resume_ = s.pending_resume();
  t->custom_name_ = s.custom_name();
  t->resize_pending_ = s.resize_pending();
  t->step_held_ = s.step_held();
  return absl::OkStatus();
}

absl::Status JobTrackerStateCodec::LoadAttempts(const Proto& s, JobTracker* t) {
  if (s.timeline().running() && s.attempts().empty()) {
    return CorruptField("attempts", "none while timeline.running");
  }
  t->attempts_.reserve(s.attempts_size());
  for (const Proto::Attempt& in : s.attempts()) {
    Attempt& a = t->attempts_.emplace_back();
    a.id = in.id();
    a.max_step = Opt(in.has_max_step(), in.max_step());
    a.max_checkpoint = Opt(in.has_max_checkpoint(), in.max_checkpoint());
    a.restore_step = Opt(in.has_restore_step(), in.restore_step());
    a.ended = in.ended();
    a.compile_seen = in.compile_seen();
    a.resumed = in.resumed();
    a.reported = in.reported();
  }
  return absl::OkStatus();
}

absl::Status JobTrackerStateCodec::LoadSink(const Proto::Sink& s, Sink* sink) {
  absl::Status status =
      LoadCounts(s.nanos(), &CategoryNameAt, "sink.nanos", &sink->nanos);
  if (!status.ok()) return status;
  sink->custom.insert(s.custom().begin(), s.custom().end());
  sink->open_ns = s.open_ns();
  sink->open_prefix_ns = s.open_prefix_ns();
  sink->gap_ns = s.gap_ns();
  sink->gap_prefix_ns = s.gap_prefix_ns();
  sink->chip_s = {};
  for (const auto& [name, value] : s.chip_s()) {
    const int i = IndexOfName(name, kNumCategories, &CategoryNameAt);
    if (i < 0) {
      return CorruptField("sink.chip_s",
                          absl::StrCat("unknown name \"", name, "\""));
    }
    sink->chip_s[i] = value;
  }
  sink->open_cns = s.open_cns();
  sink->gap_cns = s.gap_cns();
  return absl::OkStatus();
}

void JobTrackerStateCodec::LoadTotals(const Proto& s, JobTracker* t) {
  t->costed_productive_ns_ = s.costed_productive_ns();
  t->ideal_s_ = s.ideal_s();
  t->at_risk_ns_ = s.at_risk_ns();
  t->mean_sum_ns_ = s.mean_sum_ns();
  t->mean_steps_ = s.mean_steps();
  t->max_durable_step_ = Opt(s.has_max_durable_step(), s.max_durable_step());
  t->last_checkpoint_ = Opt(s.has_last_checkpoint(), s.last_checkpoint());
  t->lost_steps_ = s.lost_steps();
  t->duplicates_ = s.duplicates();
  t->costed_productive_cs_ = s.costed_productive_cs();
  for (const auto& [held, mean] : s.elastic_means()) {
    t->elastic_means_[held] = JobTracker::Mean{mean.sum_ns(), mean.steps()};
  }
}

absl::Status JobTrackerStateCodec::LoadFirstSteps(const Proto& s,
                                                  JobTracker* t) {
  t->first_steps_.reserve(s.first_steps_size());
  for (int i = 0; i < s.first_steps_size(); ++i) {
    const Proto::FirstStep& in = s.first_steps(i);
    if (!Proto::Fate_IsValid(in.fate())) {
      return CorruptField(absl::StrCat("first_steps[", i, "].fate"),
                          absl::StrCat(in.fate()));
    }
    t->first_steps_.push_back(FirstStep{
        in.time_ns(), in.prefix_ns(), in.wait_ns(), in.idle_ns(), in.steps(),
        in.ideal_s(), in.costed(), static_cast<JobTracker::Fate>(in.fate()),
        Opt(in.has_frozen_compile(), in.frozen_compile()), in.chips(),
        in.held()});
  }
  return absl::OkStatus();
}

absl::Status JobTrackerStateCodec::LoadCompletions(const Proto& s,
                                                   JobTracker* t) {
  absl::StatusOr<std::vector<Completion>> all =
      s.has_pending_columns()
          ? CompletionsOf(s)
          : absl::StatusOr<std::vector<Completion>>(CompletionsOfMessages(s));
  if (!all.ok()) return all.status();
  for (size_t i = 0; i < all->size(); ++i) {
    const Completion& c = (*all)[i];
    const std::string field = absl::StrCat("pending[", i, "]");
    if (c.last_step < c.first_step) {
      return CorruptField(field + ".last_step", "below first_step");
    }
    absl::Status status =
        CheckIndex(c.first_ref >= 0, c.first_ref, t->first_steps_.size(),
                   field + ".first_ref");
    if (!status.ok()) return status;
  }
  t->pending_ = *std::move(all);
  return absl::OkStatus();
}

std::vector<JobTracker::Completion> JobTrackerStateCodec::CompletionsOfMessages(
    const Proto& s) {
  std::vector<Completion> out;
  out.reserve(static_cast<size_t>(s.pending_size()));
  for (const Proto::Completion& in : s.pending()) {
    out.push_back(Completion{in.first_step(), in.last_step(), in.rest_ns(),
                             in.rest_window_ns(), in.ideal_s(), in.costed(),
                             in.has_first_ref() ? in.first_ref() : -1,
                             in.chips()});
  }
  return out;
}

absl::StatusOr<std::vector<JobTracker::Completion>>
JobTrackerStateCodec::CompletionsOf(const Proto& s) {
  const Proto::CompletionColumns& c = s.pending_columns();
  if (absl::Status status = CheckColumns(s); !status.ok()) return status;
  std::vector<Completion> out;
  out.reserve(static_cast<size_t>(c.first_step_delta_size()));
  int64_t last_step = 0;
  for (int i = 0; i < c.first_step_delta_size(); ++i) {
    const int64_t first = WrappingAdd(last_step, c.first_step_delta(i));
    last_step = WrappingAdd(first, c.extra_steps(i));
    const int64_t ref =
        c.first_ref_plus_one_size() > 0 ? c.first_ref_plus_one(i) : 0;
    out.push_back(Completion{
        first, last_step, c.rest_ns(i),
        WrappingSub(c.rest_ns(i), c.rest_window_delta_ns(i)), c.ideal_s(i),
        c.costed(i), ref > 0 ? static_cast<int>(ref - 1) : -1,
        c.chips_size() > 0 ? c.chips(i) : 0.0});
  }
  return out;
}

absl::Status JobTrackerStateCodec::CheckColumns(const Proto& s) {
  const Proto::CompletionColumns& c = s.pending_columns();
  const int n = c.first_step_delta_size();
  if (s.pending_size() > 0) {
    return CorruptField("pending", "both messages and pending_columns");
  }
  const bool fits =
      c.extra_steps_size() == n && c.rest_ns_size() == n &&
      c.rest_window_delta_ns_size() == n && c.ideal_s_size() == n &&
      c.costed_size() == n &&
      (c.first_ref_plus_one_size() == 0 || c.first_ref_plus_one_size() == n) &&
      (c.chips_size() == 0 || c.chips_size() == n);
  if (!fits) {
    return CorruptField("pending_columns",
                        absl::StrCat("columns differ in length from the ", n,
                                     " first_step_delta"));
  }
  return absl::OkStatus();
}

absl::Status JobTrackerStateCodec::LoadRecognition(const Proto::Recognition& s,
                                                   JobTracker* t) {
  Recognition& r = t->recog_;
  absl::Status status = LoadReasons(s, &r);
  if (status.ok()) {
    status = CheckIndex(s.has_unfrozen_first(), s.unfrozen_first(),
                        t->first_steps_.size(), "recognition.unfrozen_first");
  }
  if (status.ok()) status = LoadObservations(s, &r);
  if (!status.ok()) return status;
  r.pg_above_one_steps = s.pg_above_one_steps();
  r.checkpoints = s.checkpoints();
  r.last_step_ns = Opt(s.has_last_step_ns(), s.last_step_ns());
  r.last_checkpoint_ns =
      Opt(s.has_last_checkpoint_ns(), s.last_checkpoint_ns());
  r.attempt_start_ns = Opt(s.has_attempt_start_ns(), s.attempt_start_ns());
  r.recover_from_ns = Opt(s.has_recover_from_ns(), s.recover_from_ns());
  r.pending_ns = s.pending_ns();
  r.pending_costed_ns = s.pending_costed_ns();
  r.pending_ideal_s = s.pending_ideal_s();
  r.pending_cs = s.pending_cs();
  r.pending_costed_cs = s.pending_costed_cs();
  r.freeze_at_step = s.freeze_at_step();
  r.unfrozen_first = s.has_unfrozen_first() ? s.unfrozen_first() : -1;
  r.first_step_done = s.first_step_done();
  return absl::OkStatus();
}

absl::Status JobTrackerStateCodec::LoadReasons(const Proto::Recognition& s,
                                               Recognition* r) {
  absl::Status status =
      LoadCounts(s.interruptions(), &ReasonName, "recognition.interruptions",
                 &r->interruptions);
  if (!status.ok()) return status;
  status =
      LoadCounts(s.notices(), &ReasonName, "recognition.notices", &r->notices);
  if (!status.ok()) return status;
  r->ending_reason = IndexOfName(s.ending_reason(), kNumReasons, &ReasonName);
  if (r->ending_reason < 0) {
    return CorruptField(
        "recognition.ending_reason",
        absl::StrCat("unknown name \"", s.ending_reason(), "\""));
  }
  return absl::OkStatus();
}

absl::Status JobTrackerStateCodec::LoadObservations(const Proto::Recognition& s,
                                                    Recognition* r) {
  r->observations.reserve(s.observations_size());
  for (int i = 0; i < s.observations_size(); ++i) {
    const Proto::Observation& in = s.observations(i);
    if (!Proto::ObservationKind_IsValid(in.kind())) {
      return CorruptField(
          absl::StrCat("recognition.observations[", i, "].kind"),
          absl::StrCat(in.kind()));
    }
    r->observations.push_back(
        {static_cast<ObservationKind>(in.kind()), in.nanos()});
  }
  return absl::OkStatus();
}

// A state saved with no window, loaded under a window that starts at or
// after its cursor: every instant attributed so far lies before the window,
// so every window part is zero (as Attribute, AccrueStep, AddShares and
// RecordCompletion would have computed under that window). A first step's
// completion keeps its ideal time: RecordFirstStep does not window it.
void JobTrackerStateCodec::ClipToWindow(JobTracker* t) {
  t->sink_.nanos = {};
  t->sink_.chip_s = {};
  for (auto& [name, nanos] : t->sink_.custom) nanos = 0;
  t->sink_.open_prefix_ns = t->sink_.open_ns;
  t->sink_.gap_prefix_ns = t->sink_.gap_ns;
  t->costed_productive_ns_ = 0;
  t->costed_productive_cs_ = 0;
  t->ideal_s_ = 0;
  for (Completion& c : t->pending_) {
    c.rest_window_ns = 0;
    if (c.first_ref < 0) c.ideal_s = 0;
  }
  for (FirstStep& f : t->first_steps_) f.prefix_ns = f.time_ns;
  t->recog_.pending_ns = t->recog_.pending_costed_ns = 0;
  t->recog_.pending_ideal_s = 0;
  t->recog_.pending_cs = t->recog_.pending_costed_cs = 0;
}

}  // namespace goodput::core
