#include "server/ingest_queue.h"

#include <algorithm>

namespace goodput::server {

void IngestQueue::Push(Pending* pending) {
  absl::MutexLock lock(&mu_);
  waiting_.push_back(pending);
}

std::vector<IngestQueue::Pending*> IngestQueue::Take(size_t max_events) {
  absl::MutexLock lock(&mu_);
  std::vector<Pending*> out;
  size_t events = 0;
  while (!waiting_.empty()) {
    const v1::Batch& next = *waiting_.front()->batch;
    events += static_cast<size_t>(next.events_size());
    const bool seen = std::any_of(out.begin(), out.end(), [&](Pending* p) {
      return p->batch->agent_id() == next.agent_id();
    });
    if (!out.empty() && (events > max_events || seen)) break;
    out.push_back(waiting_.front());
    waiting_.pop_front();
  }
  return out;
}

}  // namespace goodput::server
