#include "core/recognition.h"

namespace goodput::core {

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
  for (int c = 0; c < kNumCategories; ++c) to->nanos[c] += from.nanos[c];
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

}  // namespace goodput::core
