#include "core/job_ledger.h"

#include <algorithm>

#include "core/state_fields.h"

namespace goodput::core {
namespace {

// The increase of `now` over the high-water mark `*high`, which it raises.
template <typename T>
T Raise(T now, T* high) {
  if (now <= *high) return T{0};
  const T up = now - *high;
  *high = now;
  return up;
}

template <typename A>
void RaiseAll(const A& now, A* high, A* up) {
  for (size_t i = 0; i < now.size(); ++i) (*up)[i] = Raise(now[i], &(*high)[i]);
}

}  // namespace

CounterIncrease JobLedger::Update(const Recognized& now) {
  CounterIncrease up;
  for (int c = 0; c < kNumCategories; ++c) {
    up.clamped[c] = std::max<int64_t>(0, last_nanos_[c] - now.nanos[c]);
  }
  for (int c = 0; c < kNumCategories; ++c) {
    up.clamped_chip_seconds[c] =
        std::max(0.0, last_chip_seconds_[c] - now.chip_seconds[c]);
  }
  last_nanos_ = now.nanos;
  last_chip_seconds_ = now.chip_seconds;
  RaiseAll(now.nanos, &high_.nanos, &up.nanos);
  RaiseAll(now.chip_seconds, &high_.chip_seconds, &up.chip_seconds);
  up.costed_productive_chip_seconds =
      Raise(now.costed_productive_chip_seconds,
            &high_.costed_productive_chip_seconds);
  RaiseAll(now.interruptions, &high_.interruptions, &up.interruptions);
  RaiseAll(now.notices, &high_.notices, &up.notices);
  up.costed_productive_ns =
      Raise(now.costed_productive_ns, &high_.costed_productive_ns);
  up.ideal_seconds = Raise(now.ideal_seconds, &high_.ideal_seconds);
  up.pg_above_one_steps =
      Raise(now.pg_above_one_steps, &high_.pg_above_one_steps);
  up.duplicates = Raise(now.duplicates, &high_.duplicates);
  up.steps = Raise(now.steps, &high_.steps);
  return up;
}

void JobLedger::Absorb(const JobLedger& other) {
  AddCounters(other.high_, &high_);
  for (int c = 0; c < kNumCategories; ++c) {
    last_nanos_[c] += other.last_nanos_[c];
    last_chip_seconds_[c] += other.last_chip_seconds_[c];
  }
}

size_t JobLedger::Consume(size_t size) {
  const size_t from = std::min(observations_, size);
  observations_ = std::max(observations_, size);
  return from;
}

void JobLedger::SaveState(internal::v1::JobLedgerState* state) const {
  SaveRecognized(high_, state->mutable_high());
  SaveArray(last_nanos_, state->mutable_last_nanos());
  if (last_chip_seconds_ != CategoryChipSeconds{}) {
    SaveArray(last_chip_seconds_, state->mutable_last_chip_seconds());
  }
  state->set_observations(observations_);
}

absl::Status JobLedger::LoadState(const internal::v1::JobLedgerState& state,
                                  absl::string_view field) {
  JobLedger loaded;
  absl::Status s =
      LoadRecognized(state.high(), SubField(field, "high"), &loaded.high_);
  if (s.ok()) {
    s = LoadCategoryArray(state.last_nanos(), SubField(field, "last_nanos"),
                          &loaded.last_nanos_);
  }
  if (s.ok() && state.last_chip_seconds_size() > 0) {
    s = LoadCategoryArray(state.last_chip_seconds(),
                          SubField(field, "last_chip_seconds"),
                          &loaded.last_chip_seconds_);
  }
  if (!s.ok()) return s;
  loaded.observations_ = static_cast<size_t>(state.observations());
  *this = loaded;
  return absl::OkStatus();
}

}  // namespace goodput::core
