#include "server/job_state_fit.h"

#include <utility>

#include "core/event_order.h"

namespace goodput::server {

bool StateFits(const internal::v1::StoredJobState& state,
               const std::vector<v1::Event>& tail) {
  if (!state.has_last_applied_ns()) return true;
  const auto last =
      std::make_pair(state.last_applied_ns(), state.last_applied_rank());
  for (const v1::Event& e : tail) {
    if (std::make_pair(core::EventTimeNanos(e), core::KindRank(e)) < last) {
      return false;
    }
  }
  return true;
}

}  // namespace goodput::server
