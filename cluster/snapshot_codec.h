// The chunk format of partition snapshots in cluster mode (docs/scaling.md,
// "Partition snapshots"): a snapshot's body (opaque here: goodputd's
// encoding of the partition's jobs) is cut into chunks that each fit in
// one log message (NATS' max_payload). Every chunk names the snapshot (id,
// partition, the last applied log sequence it covers, the body's size and
// hash), its index and the chunk count; the chunk with the last index is
// the commit marker, published last. SnapshotAssembler takes a subject's
// chunks in log order and keeps the newest snapshot whose chunks are all
// there and agree, so a torn or partial snapshot (a publisher killed
// between chunks, chunks dropped by the stream's per-subject limit) is
// never used. Pure: no I/O. Plain functions and a class that is not
// thread-safe (one reader).
#ifndef GOODPUT_CLUSTER_SNAPSHOT_CODEC_H_
#define GOODPUT_CLUSTER_SNAPSHOT_CODEC_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace goodput::cluster {

// What every chunk of one snapshot says about it.
struct SnapshotHeader {
  std::string id;         // unique per snapshot (publisher, sequence, time)
  int32_t partition = 0;  // the partition it is of
  uint64_t sequence = 0;  // the partition's last applied log sequence
  uint64_t body_size = 0;
  uint64_t body_hash = 0;  // BodyHash of the whole body
  uint32_t count = 0;      // chunks
};

struct SnapshotChunk {
  SnapshotHeader header;
  uint32_t index = 0;  // 0 .. header.count - 1; the last is the commit
  std::string data;    // the body's bytes from index * chunk size
};

// A complete snapshot, as the assembler put it together.
struct Snapshot {
  SnapshotHeader header;
  std::string body;
};

// 64-bit FNV-1a of `body`: a torn or mixed-up set of chunks does not match.
uint64_t BodyHash(absl::string_view body);

// `body` as chunks of at most `max_data` bytes of it each (at least one
// chunk, also for an empty body), encoded for the log, in publish order.
std::vector<std::string> EncodeSnapshot(const SnapshotHeader& header,
                                        absl::string_view body,
                                        size_t max_data);
std::string EncodeChunk(const SnapshotChunk& chunk);
// InvalidArgument for bytes EncodeChunk did not write.
absl::StatusOr<SnapshotChunk> DecodeChunk(absl::string_view message);

class SnapshotAssembler {
 public:
  // Takes the next message of the subject (in log order); one that does
  // not decode, or contradicts the chunks of its snapshot seen before, is
  // counted in rejected() and its snapshot is not used.
  void Add(absl::string_view message);
  // The complete snapshot with the highest sequence seen (ties: the later
  // one), if any.
  std::optional<Snapshot> Newest() const;
  int64_t rejected() const { return rejected_; }
  // Snapshots seen with chunks missing or inconsistent (not used).
  int64_t incomplete() const;

 private:
  struct Partial {
    SnapshotHeader header;
    std::map<uint32_t, std::string> chunks;
    bool broken = false;
    uint64_t order = 0;  // when its commit chunk came
  };
  static bool SameSnapshot(const SnapshotHeader& a, const SnapshotHeader& b);
  // Whether `p`'s chunks are all there and hash to its header.
  static bool Complete(const Partial& p);
  static std::string Join(const Partial& p);

  std::map<std::string, Partial> partials_;  // by snapshot id
  int64_t rejected_ = 0;
  uint64_t added_ = 0;
};

}  // namespace goodput::cluster

#endif  // GOODPUT_CLUSTER_SNAPSHOT_CODEC_H_
