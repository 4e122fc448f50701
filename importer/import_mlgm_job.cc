#include "importer/import_mlgm_job.h"

#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "util/proto_time.h"
#include "util/time_format.h"

namespace goodput::importer {
namespace {

using Kind = MlgmMark::Kind;
using Span = MlgmMark::Span;

v1::Activity MakeActivity(v1::Activity::Kind kind) {
  v1::Activity a;
  a.set_kind(kind);
  return a;
}

// The library's badput bucket of an elastic wait of `type`.
std::string WaitBucket(const std::string& type) {
  return absl::StrContains(absl::AsciiStrToLower(type), "scale_up")
             ? "ELASTIC_SCALE_UP"
             : "ELASTIC_SLICE_DOWN";
}

v1::Activity SpanActivity(const MlgmMark& mark) {
  switch (mark.span) {
    case Span::kTpuInit:
      return MakeActivity(v1::Activity::INIT);
    case Span::kTrainingPrep:
      return MakeActivity(v1::Activity::PREP);
    case Span::kDataLoading:
      return MakeActivity(v1::Activity::DATA_WAIT);
    case Span::kSave:
      return MakeActivity(v1::Activity::CHECKPOINT);
    case Span::kCustom: {
      v1::Activity a = MakeActivity(v1::Activity::CUSTOM);
      a.set_name(mark.name);
      return a;
    }
    case Span::kElasticWait: {
      v1::Activity a = MakeActivity(v1::Activity::CUSTOM);
      a.set_name(WaitBucket(mark.name));
      return a;
    }
    case Span::kReinit:
      return MakeActivity(v1::Activity::RESHARD);
    case Span::kRestore:
      break;
  }
  v1::Activity a = MakeActivity(v1::Activity::RESTORE);
  a.set_step(mark.step);
  return a;
}

// The recorder field that ends `span` (for errors).
const char* EndField(Span span) {
  switch (span) {
    case Span::kTpuInit:
      return "tpu_init_end_time";
    case Span::kTrainingPrep:
      return "training_prep_end_time";
    case Span::kDataLoading:
      return "data_loading_end_time";
    case Span::kCustom:
      return "custom_badput_event_end_time";
    case Span::kElasticWait:
      return "elastic_wait_end_time";
    case Span::kReinit:
      return "elastic_reinit_end_time";
    case Span::kSave:
    case Span::kRestore:
      break;
  }
  return "event_type";
}

// Custom events match start to end by type ignoring case, elastic waits by
// type (as the library pairs them).
std::string SpanKey(const MlgmMark& mark) {
  if (mark.span == Span::kElasticWait) return mark.name;
  return mark.span == Span::kCustom ? absl::AsciiStrToUpper(mark.name) : "";
}

bool SameActivity(const v1::Activity& a, const v1::Activity& b) {
  return a.kind() == b.kind() && a.name() == b.name() &&
         a.has_step() == b.has_step() && a.step() == b.step();
}

}  // namespace

MlgmJobConverter::MlgmJobConverter(std::string job_id,
                                   const MlgmOptions* options,
                                   int64_t min_chips)
    : job_id_(std::move(job_id)), options_(options), min_chips_(min_chips) {}

absl::Status MlgmJobConverter::Apply(const MlgmMark& mark, bool last_end) {
  if (ended_ && mark.time_ns > ended_ns_) {
    return absl::InvalidArgumentError(absl::StrCat(
        "entry: at ", FormatRfc3339(mark.time_ns),
        ", later than the job's last job_end_time ", FormatRfc3339(ended_ns_)));
  }
  if (pending_ && mark.time_ns > pending_ns_) FlushActivity();
  if (!submitted_) Submit(mark.time_ns);
  switch (mark.kind) {
    case Kind::kJobStart:
      OnJobStart(mark.time_ns);
      break;
    case Kind::kStepStart:
      OnStepStart(mark);
      break;
    case Kind::kBegin:
      OnBegin(mark);
      break;
    case Kind::kEnd: {
      absl::Status status = OnEnd(mark);
      if (!status.ok()) return status;
      break;
    }
    case Kind::kJobEnd:
      OnJobEnd(mark.time_ns, last_end);
      break;
    case Kind::kSlices:
      OnSlices(mark);
      return absl::OkStatus();  // a scheduler fact: the activity is unchanged
  }
  SyncActivity(mark.time_ns);
  return absl::OkStatus();
}

void MlgmJobConverter::Submit(int64_t t) {
  submitted_ = true;
  if (options_->chips <= 0) return;
  v1::JobSubmitted* s = Emit(t, false).mutable_job_submitted();
  s->set_chips(options_->chips);
  s->set_accelerator(options_->accelerator);
  s->set_workload(v1::JobSubmitted::TRAINING);
  if (min_chips_ > 0) s->set_min_chips(min_chips_);
}

// Slice counts: the job holds chips x available / total (SPEC rule 14's
// allocation), when that is a whole number of chips per slice of a fixed
// total; otherwise the record is dropped, counted by reason.
void MlgmJobConverter::OnSlices(const MlgmMark& mark) {
  const char* dropped = nullptr;
  if (total_slices_ == 0) total_slices_ = mark.total_slices;
  if (options_->chips <= 0) {
    dropped = "no --chips to scale the slice counts by";
  } else if (mark.total_slices != total_slices_) {
    dropped = "total_slices changed (the requested chips cannot)";
  } else if (options_->chips % mark.total_slices != 0) {
    dropped = "--chips is not a multiple of total_slices";
  }
  if (dropped != nullptr) {
    ++dropped_[dropped];
    return;
  }
  ++slice_allocations_;
  const int64_t chips =
      options_->chips / mark.total_slices * mark.available_slices;
  const int64_t before = held_ < 0 ? options_->chips : held_;  // rule 14
  if (chips != before && stepping_ && !step_done_) resized_ = true;
  held_ = chips;
  Emit(mark.time_ns, false).mutable_allocation()->set_chips(chips);
}

void MlgmJobConverter::EnsureAttempt(int64_t t) {
  if (attempt_ > 0) return;
  StartAttempt(t);
  implicit_attempt_ = true;
}

void MlgmJobConverter::StartAttempt(int64_t t) {
  FlushActivity();
  ++attempt_;
  implicit_attempt_ = false;
  Emit(t, true).mutable_started();
  stepping_ = false;
  step_done_ = false;
  resized_ = false;
  open_.clear();
  shown_.reset();
}

// A job_start_time names the attempt that entries before it (with no step
// yet) already began; otherwise it is a (re)start.
void MlgmJobConverter::OnJobStart(int64_t t) {
  if (attempt_ > 0 && implicit_attempt_ && !stepping_) {
    implicit_attempt_ = false;
    return;
  }
  StartAttempt(t);
}

void MlgmJobConverter::OnStepStart(const MlgmMark& mark) {
  EnsureAttempt(mark.time_ns);
  if (resized_) {
    // Rule 14 made the step in flight at the resize lost: this one starts
    // afresh, whatever its number (an elastic job redoes steps in place).
    resized_ = false;
  } else if (stepping_ && mark.step == step_ + 1) {
    CompleteStep(mark.time_ns);
  } else if (stepping_) {
    StartAttempt(mark.time_ns);  // back or ahead: a restart nobody logged
  }
  stepping_ = true;
  step_ = mark.step;
  step_done_ = false;
  for (OpenSpan& span : open_) span.hidden = true;
}

void MlgmJobConverter::OnBegin(const MlgmMark& mark) {
  EnsureAttempt(mark.time_ns);
  if (mark.span == Span::kSave && stepping_ && mark.step == step_) {
    CompleteStep(mark.time_ns);  // saving step s: step s is done
  }
  bool folded = mark.span == Span::kDataLoading && stepping_ &&
                !options_->blocking_data_loading;
  open_.push_back({mark.span, SpanKey(mark), SpanActivity(mark), folded});
}

absl::Status MlgmJobConverter::OnEnd(const MlgmMark& mark) {
  std::string key = SpanKey(mark);
  for (auto it = open_.rbegin(); it != open_.rend(); ++it) {
    if (it->span != mark.span || it->key != key) continue;
    open_.erase(std::next(it).base());
    if (mark.span == Span::kSave) {
      Emit(mark.time_ns, true).mutable_checkpoint()->set_step(mark.step);
    }
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(
      absl::StrCat(EndField(mark.span),
                   ": ends a span that was not started in this "
                   "attempt",
                   key.empty() ? "" : absl::StrCat(" (type ", mark.name, ")")));
}

void MlgmJobConverter::OnJobEnd(int64_t t, bool last_end) {
  if (attempt_ > 0 && stepping_) CompleteStep(t);
  if (!last_end || ended_) return;
  pending_.reset();  // nothing happens after the end
  Emit(t, false).mutable_job_ended()->set_outcome(v1::JobEnded::SUCCEEDED);
  ended_ = true;
  ended_ns_ = t;
}

void MlgmJobConverter::CompleteStep(int64_t t) {
  if (step_done_) return;
  Emit(t, true).mutable_step()->set_step(step_);
  step_done_ = true;
}

// The innermost visible open span's activity, else stepping or idle; an
// accelerator init or preparation inside an elastic reinitialization is
// RESHARD (the library counts their overlap as reinitialization only).
v1::Activity MlgmJobConverter::Wanted() const {
  const OpenSpan* innermost = nullptr;
  bool reinit = false;
  for (const OpenSpan& span : open_) {
    if (span.hidden) continue;
    innermost = &span;
    reinit = reinit || span.span == Span::kReinit;
  }
  if (innermost != nullptr) {
    const bool init = innermost->span == Span::kTpuInit ||
                      innermost->span == Span::kTrainingPrep;
    if (reinit && init) return MakeActivity(v1::Activity::RESHARD);
    return innermost->activity;
  }
  return MakeActivity(stepping_ ? v1::Activity::TRAINING : v1::Activity::IDLE);
}

void MlgmJobConverter::SyncActivity(int64_t t) {
  if (ended_ || attempt_ == 0) return;
  pending_ = Wanted();
  pending_ns_ = t;
}

void MlgmJobConverter::FlushActivity() {
  if (!pending_) return;
  if (!shown_ || !SameActivity(*shown_, *pending_)) {
    *Emit(pending_ns_, true).mutable_activity() = *pending_;
    shown_ = pending_;
  }
  pending_.reset();
}

std::vector<v1::Event> MlgmJobConverter::TakeEvents() {
  FlushActivity();
  return std::move(events_);
}

v1::Event& MlgmJobConverter::Emit(int64_t t, bool with_attempt) {
  v1::Event& e = events_.emplace_back();
  *e.mutable_time() = NanosToTimestamp(t);
  e.set_job_id(job_id_);
  if (with_attempt) e.set_attempt(absl::StrCat("mlgm-", attempt_));
  return e;
}

}  // namespace goodput::importer
