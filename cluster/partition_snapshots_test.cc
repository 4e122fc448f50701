#include "cluster/partition_snapshots.h"

#include <string>

#include "cluster/testing/fake_event_log.h"
#include "gtest/gtest.h"

namespace goodput::cluster {
namespace {

SnapshotHeader Header(int32_t partition, uint64_t sequence) {
  SnapshotHeader h;
  h.id = "m-" + std::to_string(partition) + "-" + std::to_string(sequence);
  h.partition = partition;
  h.sequence = sequence;
  return h;
}

class PartitionSnapshotsTest : public ::testing::Test {
 protected:
  FakeEventLog log_;
  PartitionSnapshots snapshots_{&log_,
                                {.max_chunk_data = 100, .max_chunks = 8}};
};

TEST_F(PartitionSnapshotsTest, ThePublishedSnapshotIsReadBack) {
  const std::string body(350, 'b');
  ASSERT_TRUE(snapshots_.Publish(Header(3, 77), body).ok());
  ASSERT_EQ(log_.messages().size(), 4u);  // 4 chunks of at most 100
  EXPECT_EQ(log_.messages()[0].subject, "goodput.snap.3");
  EXPECT_EQ(log_.messages()[3].id, "m-3-77/3");
  absl::StatusOr<SnapshotRead> read = snapshots_.Newest(3);
  ASSERT_TRUE(read.ok()) << read.status();
  ASSERT_TRUE(read->newest.has_value());
  EXPECT_EQ(read->newest->header.sequence, 77u);
  EXPECT_EQ(read->newest->body, body);
  EXPECT_EQ(read->messages, 4);
  absl::StatusOr<SnapshotRead> other = snapshots_.Newest(4);
  ASSERT_TRUE(other.ok());
  EXPECT_FALSE(other->newest.has_value());
}

// The publisher dies (here: the log fails) between chunks: the newer
// snapshot has no commit marker and the reader takes the older one.
TEST_F(PartitionSnapshotsTest, APublishCutShortLeavesTheOlderSnapshot) {
  ASSERT_TRUE(snapshots_.Publish(Header(1, 10), std::string(250, 'o')).ok());
  const size_t before = log_.messages().size();
  // Publish chunk 0 and 1 of the new one by hand, as a publisher killed
  // after them would have.
  std::vector<std::string> chunks =
      EncodeSnapshot(Header(1, 20), std::string(250, 'n'), 100);
  ASSERT_TRUE(log_.Publish("goodput.snap.1", "m-1-20/0", chunks[0]).ok());
  ASSERT_TRUE(log_.Publish("goodput.snap.1", "m-1-20/1", chunks[1]).ok());
  ASSERT_EQ(log_.messages().size(), before + 2);
  absl::StatusOr<SnapshotRead> read = snapshots_.Newest(1);
  ASSERT_TRUE(read.ok());
  ASSERT_TRUE(read->newest.has_value());
  EXPECT_EQ(read->newest->header.sequence, 10u);
  EXPECT_EQ(read->newest->body, std::string(250, 'o'));
  EXPECT_EQ(read->incomplete, 1);
}

TEST_F(PartitionSnapshotsTest, AFailedPublishSaysSo) {
  log_.FailNext(1);
  EXPECT_FALSE(snapshots_.Publish(Header(2, 5), "x").ok());
  absl::StatusOr<SnapshotRead> read = snapshots_.Newest(2);
  ASSERT_TRUE(read.ok());
  EXPECT_FALSE(read->newest.has_value());
}

TEST_F(PartitionSnapshotsTest, ASnapshotAboveTheChunkLimitIsRefused) {
  absl::Status s = snapshots_.Publish(Header(2, 5), std::string(801, 'x'));
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted) << s;
  EXPECT_TRUE(log_.messages().empty());
  EXPECT_TRUE(snapshots_.Publish(Header(2, 5), std::string(800, 'x')).ok());
}

}  // namespace
}  // namespace goodput::cluster
