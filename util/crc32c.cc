#include "util/crc32c.h"

#include <array>
#include <cstring>

namespace goodput {
namespace {

constexpr uint32_t kPolynomial = 0x82F63B78;  // 0x1EDC6F41 bit-reversed

constexpr std::array<uint32_t, 256> MakeTable() {
  std::array<uint32_t, 256> table{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int bit = 0; bit < 8; ++bit) {
      c = (c & 1) ? (c >> 1) ^ kPolynomial : c >> 1;
    }
    table[i] = c;
  }
  return table;
}

constexpr std::array<uint32_t, 256> kTable = MakeTable();

#if defined(__x86_64__) && (defined(__clang__) || defined(__GNUC__))
#define GOODPUT_CRC32C_SSE42 1

__attribute__((target("sse4.2"))) uint32_t Crc32cSse42(absl::string_view data,
                                                       uint32_t crc) {
  uint64_t c = ~crc;
  const char* p = data.data();
  size_t n = data.size();
  for (; n >= 8; n -= 8, p += 8) {
    uint64_t word;
    std::memcpy(&word, p, 8);
    c = __builtin_ia32_crc32di(c, word);
  }
  auto c32 = static_cast<uint32_t>(c);
  for (; n > 0; --n, ++p) {
    c32 = __builtin_ia32_crc32qi(c32, static_cast<unsigned char>(*p));
  }
  return ~c32;
}

bool HasSse42() {
  static const bool has = __builtin_cpu_supports("sse4.2");
  return has;
}
#endif

}  // namespace

uint32_t Crc32cPortable(absl::string_view data, uint32_t crc) {
  crc = ~crc;
  for (unsigned char byte : data) {
    crc = kTable[(crc ^ byte) & 0xFF] ^ (crc >> 8);
  }
  return ~crc;
}

uint32_t Crc32c(absl::string_view data, uint32_t crc) {
#ifdef GOODPUT_CRC32C_SSE42
  if (HasSse42()) return Crc32cSse42(data, crc);
#endif
  return Crc32cPortable(data, crc);
}

}  // namespace goodput
