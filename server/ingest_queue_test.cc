#include "server/ingest_queue.h"

#include <deque>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace goodput::server {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

class IngestQueueTest : public ::testing::Test {
 protected:
  // Queues a batch of `agent` with `events` events; returns its entry.
  IngestQueue::Pending* Push(const std::string& agent, int events) {
    v1::Batch& b = batches_.emplace_back();
    b.set_agent_id(agent);
    for (int i = 0; i < events; ++i) b.add_events();
    IngestQueue::Pending& p = pending_.emplace_back();
    p.batch = &b;
    queue_.Push(&p);
    return &p;
  }
  std::deque<v1::Batch> batches_;
  std::deque<IngestQueue::Pending> pending_;
  IngestQueue queue_;
};

TEST_F(IngestQueueTest, TakesInArrivalOrderUpToTheEvents) {
  auto* a = Push("a", 3);
  auto* b = Push("b", 4);
  auto* c = Push("c", 1);
  EXPECT_THAT(queue_.Take(7), ElementsAre(a, b));  // 3 + 4; c is the 8th
  EXPECT_THAT(queue_.Take(7), ElementsAre(c));
  EXPECT_THAT(queue_.Take(7), IsEmpty());
}

TEST_F(IngestQueueTest, TakesTheOldestEvenIfLargerThanTheLimit) {
  auto* a = Push("a", 10);
  auto* b = Push("b", 1);
  EXPECT_THAT(queue_.Take(5), ElementsAre(a));
  EXPECT_THAT(queue_.Take(5), ElementsAre(b));
}

TEST_F(IngestQueueTest, StopsAtAnAgentsSecondBatch) {
  auto* a1 = Push("a", 1);
  auto* b = Push("b", 1);
  auto* a2 = Push("a", 1);
  auto* c = Push("c", 1);
  EXPECT_THAT(queue_.Take(100), ElementsAre(a1, b));
  EXPECT_THAT(queue_.Take(100), ElementsAre(a2, c));
}

}  // namespace
}  // namespace goodput::server
