#include "util/uuid.h"

#include <cstdint>
#include <cstdio>
#include <fstream>

namespace goodput {

absl::StatusOr<std::string> RandomUuid() {
  uint8_t b[16];
  std::ifstream urandom("/dev/urandom", std::ios::binary);
  if (!urandom.read(reinterpret_cast<char*>(b), sizeof(b))) {
    return absl::UnavailableError("uuid: cannot read /dev/urandom");
  }
  b[6] = (b[6] & 0x0f) | 0x40;  // version 4
  b[8] = (b[8] & 0x3f) | 0x80;  // RFC 4122 variant
  char out[37];
  std::snprintf(out, sizeof(out),
                "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-"
                "%02x%02x%02x%02x%02x%02x",
                b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9],
                b[10], b[11], b[12], b[13], b[14], b[15]);
  return std::string(out);
}

}  // namespace goodput
