#ifndef GOODPUT_STORAGE_ACK_MARKER_H_
#define GOODPUT_STORAGE_ACK_MARKER_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace goodput::storage {

// AckMarker: a 16-byte file beside RocksDB's own files that records the
// newest batch id the store acknowledged ("GPA1", the id big-endian, the
// CRC-32C of both). It is written after each batch's RocksDB write, outside
// RocksDB's WAL, so a WAL that was truncated or deleted (RocksDB then opens
// a shorter prefix without an error) shows as a store whose newest batch is
// older than the marker (docs/delivery.md, "A damaged WAL"). Owns its file
// descriptor. Not thread-safe (the store's writes are serialized).
class AckMarker {
 public:
  // Opens (creating if missing) the marker at `path`; `sync` fdatasyncs
  // every Record (goodputd --fsync).
  static absl::StatusOr<std::unique_ptr<AckMarker>> Open(
      const std::string& path, bool sync);
  ~AckMarker();
  AckMarker(const AckMarker&) = delete;
  AckMarker& operator=(const AckMarker&) = delete;

  // The recorded batch id; nullopt for a new (empty) marker file.
  // DataLoss naming the path if the file is not a valid marker.
  absl::StatusOr<std::optional<uint64_t>> Read() const;
  // Overwrites the marker with `batch_id`.
  absl::Status Record(uint64_t batch_id);
  const std::string& path() const { return path_; }

 private:
  AckMarker(std::string path, int fd, bool sync)
      : path_(std::move(path)), fd_(fd), sync_(sync) {}

  std::string path_;
  int fd_;
  bool sync_;
};

}  // namespace goodput::storage

#endif  // GOODPUT_STORAGE_ACK_MARKER_H_
