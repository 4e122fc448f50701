#include "logs/rule_hint.h"

#include "gtest/gtest.h"

namespace goodput::logs {
namespace {

TEST(RuleHintTest, TheLongestLiteralRun) {
  EXPECT_EQ(RuleHint(R"(saving checkpoint at iteration\s+(?P<step>\d+) )"),
            "saving checkpoint at iteration");
  EXPECT_EQ(RuleHint(R"(^\[after training is done\] datetime: (?P<time>\S+))"),
            "[after training is done] datetime:");
}

TEST(RuleHintTest, ClassesGroupsAndEscapesBreakRuns) {
  EXPECT_EQ(RuleHint(R"((?:\x1b\[31m)?step:\s*(?P<step>\d+)\s)"), "step:");
  EXPECT_EQ(RuleHint(R"([Rr]estoring from step (?P<step>\d+))"),
            "estoring from step");
  EXPECT_EQ(RuleHint(R"(\[Rank 0\] step=(?P<step>\d+), skipped=)"),
            "[Rank 0] step=");
}

TEST(RuleHintTest, AnOptionalCharacterIsNotPartOfTheRun) {
  EXPECT_EQ(RuleHint("checkpoints? saved"), "checkpoint");
  EXPECT_EQ(RuleHint("loading x{2,3}yz"), "loading");
}

TEST(RuleHintTest, ShortRunsGiveNoHint) {
  EXPECT_EQ(RuleHint(R"(^(?P<step>\d+) ok)"), "");
  EXPECT_EQ(RuleHint("a|b|c"), "");
}

}  // namespace
}  // namespace goodput::logs
