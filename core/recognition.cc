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

}  // namespace goodput::core
