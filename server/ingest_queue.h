#ifndef GOODPUT_SERVER_INGEST_QUEUE_H_
#define GOODPUT_SERVER_INGEST_QUEUE_H_

#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "proto/service.pb.h"

namespace goodput::server {

// IngestQueue: the batches waiting for the ingest lock, for the
// Ingestor's group commit (docs/delivery.md, "Group commit"). Each caller
// of Ingestor::IngestTaking puts its batch here, judged as far as it can
// be without the live state, before it takes the lock; whoever holds the
// lock takes the waiting batches in arrival order and stores them in one
// write. Holds pointers only: each Pending belongs to the caller that
// pushed it, which waits for its `result`. Thread-safe.
class IngestQueue {
 public:
  struct Pending {
    v1::Batch* batch = nullptr;
    uint64_t print = 0;  // BatchFingerprints::Of its events' `wire`
    // codec::ValidateEvent of each of the batch's events, in order.
    std::vector<absl::Status> validity;
    // The events' serializations back to back (`wire`), each ending at
    // its `wire_ends` entry: stored as they are (BatchWrite::accepted_wire).
    std::string wire;
    std::vector<uint32_t> wire_ends;
    // Set, under the ingest lock, by the holder that took it.
    std::optional<absl::StatusOr<v1::Ack>> result;
  };

  void Push(Pending* pending);
  // The oldest waiting batches, in arrival order: the oldest one, then each
  // next one while the taken ones hold at most `max_events` events in all
  // and no agent id twice (an agent's next batch is judged against the
  // sequence its previous one stored); empty if none waits.
  std::vector<Pending*> Take(size_t max_events);

 private:
  absl::Mutex mu_;
  std::deque<Pending*> waiting_ ABSL_GUARDED_BY(mu_);
};

}  // namespace goodput::server

#endif  // GOODPUT_SERVER_INGEST_QUEUE_H_
