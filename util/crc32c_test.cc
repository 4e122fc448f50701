#include "util/crc32c.h"

#include <string>

#include "gtest/gtest.h"

namespace goodput {
namespace {

// Check values from RFC 3720 (iSCSI), appendix B.4, and the common
// "123456789" check value of CRC-32C.
TEST(Crc32cTest, KnownVectors) {
  EXPECT_EQ(Crc32c(""), 0u);
  EXPECT_EQ(Crc32c("123456789"), 0xE3069283u);
  EXPECT_EQ(Crc32c(std::string(32, '\0')), 0x8A9136AAu);
  EXPECT_EQ(Crc32c(std::string(32, '\xff')), 0x62A8AB43u);
  std::string ascending;
  for (int i = 0; i < 32; ++i) ascending.push_back(static_cast<char>(i));
  EXPECT_EQ(Crc32c(ascending), 0x46DD794Eu);
}

TEST(Crc32cTest, ContinuesAcrossPiecesAndSeesOneBitFlips) {
  const std::string data = "goodput spool batch";
  EXPECT_EQ(Crc32c(data.substr(7), Crc32c(data.substr(0, 7))), Crc32c(data));
  for (size_t i = 0; i < data.size(); ++i) {
    std::string flipped = data;
    flipped[i] ^= 0x01;
    EXPECT_NE(Crc32c(flipped), Crc32c(data)) << "byte " << i;
  }
}

// The fast path (SSE4.2, 8 bytes at a time, then the tail byte by byte)
// agrees with the table at every length and alignment, and continues.
TEST(Crc32cTest, FastPathAgreesWithTheTableAtEveryLengthAndOffset) {
  std::string data;
  for (int i = 0; i < 300; ++i) data.push_back(static_cast<char>(i * 37 + 11));
  for (size_t offset = 0; offset < 9; ++offset) {
    for (size_t n = 0; offset + n <= data.size(); n += 7) {
      const std::string piece = data.substr(offset, n);
      ASSERT_EQ(Crc32c(piece), Crc32cPortable(piece)) << offset << " " << n;
      ASSERT_EQ(Crc32c(piece, 0x12345678u), Crc32cPortable(piece, 0x12345678u));
    }
  }
}

}  // namespace
}  // namespace goodput
