#include "storage/ack_marker.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "util/crc32c.h"

namespace goodput::storage {
namespace {

constexpr char kMagic[] = "GPA1";
constexpr size_t kSize = 16;

absl::Status Errno(const std::string& what, const std::string& path) {
  return absl::UnavailableError(
      absl::StrCat("ack marker ", path, ": ", what, ": ", strerror(errno)));
}

void PutU32(uint32_t v, char* p) {
  for (int i = 0; i < 4; ++i) p[i] = char((v >> (24 - 8 * i)) & 0xff);
}

uint64_t GetBig(const char* p, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v = (v << 8) | static_cast<uint8_t>(p[i]);
  return v;
}

}  // namespace

absl::StatusOr<std::unique_ptr<AckMarker>> AckMarker::Open(
    const std::string& path, bool sync) {
  const int fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return Errno("open", path);
  return std::unique_ptr<AckMarker>(new AckMarker(path, fd, sync));
}

AckMarker::~AckMarker() { close(fd_); }

absl::StatusOr<std::optional<uint64_t>> AckMarker::Read() const {
  char buf[kSize + 1];
  const ssize_t n = pread(fd_, buf, sizeof(buf), 0);
  if (n < 0) return Errno("read", path_);
  if (n == 0) return std::optional<uint64_t>();
  const bool valid = n == kSize && memcmp(buf, kMagic, 4) == 0 &&
                     Crc32c(absl::string_view(buf, 12)) == GetBig(buf + 12, 4);
  if (!valid) {
    return absl::DataLossError(absl::StrCat(
        "ack marker ", path_, ": ", n,
        " bytes that are not a valid marker (want 16 bytes: GPA1, the last "
        "acknowledged batch id, its CRC-32C)"));
  }
  return std::optional<uint64_t>(GetBig(buf + 4, 8));
}

absl::Status AckMarker::Record(uint64_t batch_id) {
  char buf[kSize];
  memcpy(buf, kMagic, 4);
  for (int i = 0; i < 8; ++i) buf[4 + i] = char((batch_id >> (56 - 8 * i)));
  PutU32(Crc32c(absl::string_view(buf, 12)), buf + 12);
  if (pwrite(fd_, buf, kSize, 0) != static_cast<ssize_t>(kSize)) {
    return Errno("write", path_);
  }
  if (sync_ && fdatasync(fd_) != 0) return Errno("fdatasync", path_);
  return absl::OkStatus();
}

}  // namespace goodput::storage
