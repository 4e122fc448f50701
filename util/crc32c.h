#ifndef GOODPUT_UTIL_CRC32C_H_
#define GOODPUT_UTIL_CRC32C_H_

#include <cstdint>

#include "absl/strings/string_view.h"

namespace goodput {

// CRC-32C (Castagnoli, polynomial 0x1EDC6F41 reflected, as in iSCSI, ext4
// and Kafka record batches) of `data`, continuing from `crc` (0 to start).
// With the SSE4.2 crc32 instruction 8 bytes at a time when the CPU has it
// (checked at run time), else table-driven one byte at a time: Debian 12's
// abseil (20220623) has no absl::crc32c. Pure and thread-safe.
uint32_t Crc32c(absl::string_view data, uint32_t crc = 0);
// The table-driven one alone (the reference the tests compare against).
uint32_t Crc32cPortable(absl::string_view data, uint32_t crc = 0);

}  // namespace goodput

#endif  // GOODPUT_UTIL_CRC32C_H_
