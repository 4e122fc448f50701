#include "core/exclusions.h"

#include <tuple>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace goodput::core {
namespace {

using Piece = std::tuple<int64_t, int64_t, bool>;
using ::testing::ElementsAre;

std::vector<Piece> Pieces(const ExclusionSet& x, int64_t from, int64_t to) {
  std::vector<Piece> out;
  x.Split(from, to, [&](int64_t a, int64_t b, bool excluded) {
    out.emplace_back(a, b, excluded);
  });
  return out;
}

TEST(ExclusionSetTest, OverlappingAndAdjacentIntervalsMerge) {
  ExclusionSet x;
  x.Add(20, 40);
  x.Add(30, 50);  // overlaps
  x.Add(50, 55);  // adjacent
  x.Add(70, 80);
  x.Add(5, 5);  // empty: nothing
  EXPECT_THAT(x.intervals(), ElementsAre(ExclusionSet::Interval{20, 55},
                                         ExclusionSet::Interval{70, 80}));
  x.Add(10, 75);  // swallows both
  EXPECT_THAT(x.intervals(), ElementsAre(ExclusionSet::Interval{10, 80}));
}

TEST(ExclusionSetTest, SplitCoversTheIntervalInOrder) {
  ExclusionSet x;
  x.Add(20, 30);
  x.Add(40, 50);
  EXPECT_THAT(Pieces(x, 0, 100),
              ElementsAre(Piece{0, 20, false}, Piece{20, 30, true},
                          Piece{30, 40, false}, Piece{40, 50, true},
                          Piece{50, 100, false}));
  EXPECT_THAT(Pieces(x, 25, 45),
              ElementsAre(Piece{25, 30, true}, Piece{30, 40, false},
                          Piece{40, 45, true}));
  EXPECT_THAT(Pieces(x, 30, 40), ElementsAre(Piece{30, 40, false}));
  EXPECT_THAT(Pieces(x, 7, 7), ElementsAre());
  EXPECT_EQ(x.ExcludedIn(0, 100), 20);
  EXPECT_EQ(x.ExcludedIn(25, 45), 10);
}

TEST(ExclusionSetTest, AfterIncludedSkipsExcludedTime) {
  ExclusionSet x;
  x.Add(20, 30);
  x.Add(40, 50);
  EXPECT_EQ(x.AfterIncluded(0, 10), 10);
  EXPECT_EQ(x.AfterIncluded(0, 20), 20);
  EXPECT_EQ(x.AfterIncluded(0, 25), 35);  // 20 before, 5 after 30
  EXPECT_EQ(x.AfterIncluded(0, 35), 55);  // 20 + 10 + 5
  EXPECT_EQ(x.AfterIncluded(25, 5), 35);  // starts inside one
  EXPECT_EQ(x.AfterIncluded(60, 5), 65);
}

TEST(ExclusionSetTest, DropBeforeForgetsOnlyEndedIntervals) {
  ExclusionSet x;
  x.Add(20, 30);
  x.Add(40, 50);
  x.DropBefore(30);
  EXPECT_THAT(x.intervals(), ElementsAre(ExclusionSet::Interval{40, 50}));
  x.DropBefore(45);
  EXPECT_THAT(x.intervals(), ElementsAre(ExclusionSet::Interval{40, 50}));
  x.DropBefore(50);
  EXPECT_TRUE(x.empty());
}

}  // namespace
}  // namespace goodput::core
