#include "cluster/snapshot_codec.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace goodput::cluster {
namespace {

SnapshotHeader Header(const std::string& id, uint64_t sequence) {
  SnapshotHeader h;
  h.id = id;
  h.partition = 7;
  h.sequence = sequence;
  return h;
}

std::string Body(size_t size, char seed) {
  std::string body(size, '\0');
  for (size_t i = 0; i < size; ++i) body[i] = static_cast<char>(seed + i * 31);
  return body;
}

TEST(SnapshotCodecTest, AChunkRoundTrips) {
  SnapshotChunk chunk;
  chunk.header = Header("gp-1/7/42", 42);
  chunk.header.body_size = 9;
  chunk.header.body_hash = 12345;
  chunk.header.count = 3;
  chunk.index = 2;
  chunk.data = std::string("a\0b", 3);
  absl::StatusOr<SnapshotChunk> back = DecodeChunk(EncodeChunk(chunk));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->header.id, "gp-1/7/42");
  EXPECT_EQ(back->header.partition, 7);
  EXPECT_EQ(back->header.sequence, 42u);
  EXPECT_EQ(back->header.body_size, 9u);
  EXPECT_EQ(back->header.body_hash, 12345u);
  EXPECT_EQ(back->header.count, 3u);
  EXPECT_EQ(back->index, 2u);
  EXPECT_EQ(back->data, std::string("a\0b", 3));
}

TEST(SnapshotCodecTest, OtherBytesDoNotDecode) {
  EXPECT_FALSE(DecodeChunk("").ok());
  EXPECT_FALSE(DecodeChunk("GPS1short").ok());
  SnapshotChunk chunk;
  chunk.header = Header("x", 1);
  chunk.header.count = 2;
  chunk.index = 2;  // past the count
  EXPECT_FALSE(DecodeChunk(EncodeChunk(chunk)).ok());
}

TEST(SnapshotCodecTest, ABodyIsCutIntoChunksAndPutBackTogether) {
  const std::string body = Body(2500, 'a');
  std::vector<std::string> chunks =
      EncodeSnapshot(Header("s1", 100), body, 1000);
  ASSERT_EQ(chunks.size(), 3u);
  for (const std::string& c : chunks) EXPECT_LE(c.size(), 1000u + 64);
  SnapshotAssembler assembler;
  for (const std::string& c : chunks) assembler.Add(c);
  std::optional<Snapshot> got = assembler.Newest();
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->body, body);
  EXPECT_EQ(got->header.sequence, 100u);
  EXPECT_EQ(got->header.partition, 7);
  EXPECT_EQ(assembler.incomplete(), 0);
}

TEST(SnapshotCodecTest, AnEmptyBodyIsOneChunk) {
  std::vector<std::string> chunks = EncodeSnapshot(Header("e", 5), "", 1000);
  ASSERT_EQ(chunks.size(), 1u);
  SnapshotAssembler assembler;
  assembler.Add(chunks[0]);
  ASSERT_TRUE(assembler.Newest().has_value());
  EXPECT_EQ(assembler.Newest()->body, "");
}

// The publisher killed between chunks: the newer snapshot lacks its commit
// marker (or a middle chunk), and the older complete one is used.
TEST(SnapshotCodecTest, ATornSnapshotFallsBackToTheOlderOne) {
  const std::string old_body = Body(1500, 'o');
  SnapshotAssembler assembler;
  for (const std::string& c : EncodeSnapshot(Header("old", 10), old_body, 1000))
    assembler.Add(c);
  std::vector<std::string> torn =
      EncodeSnapshot(Header("new", 20), Body(3500, 'n'), 1000);
  assembler.Add(torn[0]);
  assembler.Add(torn[1]);  // killed before chunks 2 and 3 (the marker)
  ASSERT_TRUE(assembler.Newest().has_value());
  EXPECT_EQ(assembler.Newest()->header.sequence, 10u);
  EXPECT_EQ(assembler.Newest()->body, old_body);
  EXPECT_EQ(assembler.incomplete(), 1);

  SnapshotAssembler gap;  // the marker there, a middle chunk missing
  gap.Add(torn[0]);
  gap.Add(torn[2]);
  gap.Add(torn[3]);
  EXPECT_FALSE(gap.Newest().has_value());
}

// The stream's per-subject limit dropped a snapshot's first chunks.
TEST(SnapshotCodecTest, ASnapshotWithoutItsFirstChunksIsNotUsed) {
  std::vector<std::string> chunks =
      EncodeSnapshot(Header("s", 30), Body(3000, 'x'), 1000);
  SnapshotAssembler assembler;
  assembler.Add(chunks[1]);
  assembler.Add(chunks[2]);
  EXPECT_FALSE(assembler.Newest().has_value());
}

TEST(SnapshotCodecTest, TheNewestCompleteSnapshotWins) {
  SnapshotAssembler assembler;
  for (uint64_t seq : {40u, 90u, 60u}) {
    for (const std::string& c :
         EncodeSnapshot(Header("s" + std::to_string(seq), seq),
                        Body(1200, static_cast<char>(seq)), 500)) {
      assembler.Add(c);
    }
  }
  ASSERT_TRUE(assembler.Newest().has_value());
  EXPECT_EQ(assembler.Newest()->header.sequence, 90u);
  EXPECT_EQ(assembler.Newest()->body, Body(1200, static_cast<char>(90)));
}

// Two chunks under one id that disagree (a mix of publishers, a corrupted
// chunk): the snapshot is not used.
TEST(SnapshotCodecTest, ChunksThatDisagreeAreRejected) {
  std::vector<std::string> a =
      EncodeSnapshot(Header("same", 50), Body(2000, 'a'), 1000);
  std::vector<std::string> b =
      EncodeSnapshot(Header("same", 50), Body(2000, 'b'), 1000);
  SnapshotAssembler assembler;
  assembler.Add(a[0]);
  assembler.Add(b[1]);  // same header but for the hash
  EXPECT_FALSE(assembler.Newest().has_value());
  EXPECT_EQ(assembler.rejected(), 1);

  // Same header (hash included), other bytes: the hash of the joined body
  // says so.
  SnapshotChunk forged = *DecodeChunk(a[1]);
  forged.data[0] ^= 1;
  SnapshotAssembler corrupted;
  corrupted.Add(a[0]);
  corrupted.Add(EncodeChunk(forged));
  EXPECT_FALSE(corrupted.Newest().has_value());
}

TEST(SnapshotCodecTest, ARepeatedChunkBreaksItsSnapshot) {
  std::vector<std::string> chunks =
      EncodeSnapshot(Header("r", 5), Body(1500, 'r'), 1000);
  SnapshotAssembler assembler;
  assembler.Add(chunks[0]);
  assembler.Add(chunks[0]);
  assembler.Add(chunks[1]);
  EXPECT_FALSE(assembler.Newest().has_value());
}

}  // namespace
}  // namespace goodput::cluster
