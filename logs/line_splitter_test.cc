#include "logs/line_splitter.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace goodput::logs {
namespace {

using ::testing::ElementsAre;

class LineSplitterTest : public ::testing::Test {
 protected:
  LineSplitter::OnLine Collect() {
    return [this](absl::string_view l) { lines_.emplace_back(l); };
  }
  std::vector<std::string> lines_;
};

TEST_F(LineSplitterTest, LinesSpanningChunksAreJoined) {
  LineSplitter s;
  s.Add("ab", Collect());
  s.Add("c\nde\n\nf", Collect());
  EXPECT_THAT(lines_, ElementsAre("abc", "de", ""));
  s.Flush(Collect());
  EXPECT_THAT(lines_, ElementsAre("abc", "de", "", "f"));
  s.Flush(Collect());
  EXPECT_EQ(lines_.size(), 4u);
}

TEST_F(LineSplitterTest, AnOverLongLineKeepsItsFirstBytesOnly) {
  LineSplitter s(4);
  for (int i = 0; i < 1000; ++i) s.Add("0123456789", Collect());
  EXPECT_THAT(lines_, ::testing::IsEmpty());
  s.Add("x\nshort\n", Collect());
  EXPECT_THAT(lines_, ElementsAre("0123", "shor"));
  EXPECT_EQ(s.truncated_bytes(), 10000 + 1 - 4 + 1);
}

}  // namespace
}  // namespace goodput::logs
