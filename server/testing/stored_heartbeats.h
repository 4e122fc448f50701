#ifndef GOODPUT_SERVER_TESTING_STORED_HEARTBEATS_H_
#define GOODPUT_SERVER_TESTING_STORED_HEARTBEATS_H_

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "gtest/gtest.h"
#include "storage/event_store.h"

namespace goodput::server::testing {

// How many heartbeats `store` holds (EventStore::ScanHeartbeats); a failed
// scan fails the test.
inline int64_t StoredHeartbeats(storage::EventStore* store) {
  int64_t beats = 0;
  EXPECT_TRUE(store
                  ->ScanHeartbeats([&](uint64_t, std::vector<v1::Event>* e) {
                    beats += static_cast<int64_t>(e->size());
                    return absl::OkStatus();
                  })
                  .ok());
  return beats;
}

}  // namespace goodput::server::testing

#endif  // GOODPUT_SERVER_TESTING_STORED_HEARTBEATS_H_
