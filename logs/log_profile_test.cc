#include "logs/log_profile.h"

#include <string>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "logs/builtin_profiles.h"

namespace goodput::logs {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

absl::Status ParseError(const std::string& yaml) {
  absl::StatusOr<LogProfile> p = ParseLogProfile(yaml, "test.yaml");
  return p.ok() ? absl::OkStatus() : p.status();
}

TEST(LogProfileTest, ParsesRulesInOrderWithTheirCaptures) {
  absl::StatusOr<LogProfile> p = ParseLogProfile(R"(
name: mine
framework: jax
time_format: '%Y-%m-%d %H:%M:%S'
rules:
  - kind: step
    pattern: '^(?P<time>\S+ \S+) step (?P<step>\d+) flops (?P<flops>\S+)'
  - kind: custom
    name: eval
    pattern: 'eval begins'
  - kind: interruption
    reason: PREEMPTED
    pattern: 'SIGTERM'
)",
                                                 "test.yaml");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->name, "mine");
  EXPECT_EQ(p->framework, "jax");
  ASSERT_EQ(p->rules.size(), 3u);
  EXPECT_EQ(p->rules[0].kind, LogRuleKind::kStep);
  EXPECT_EQ(p->rules[0].time_group, 1);
  EXPECT_EQ(p->rules[0].step_group, 2);
  EXPECT_EQ(p->rules[0].flops_group, 3);
  EXPECT_EQ(p->rules[1].name, "eval");
  EXPECT_EQ(p->rules[2].reason, v1::Interruption::PREEMPTED);
}

TEST(LogProfileTest, UnknownCaptureNamesProfileRulePatternAndCapture) {
  absl::Status s = ParseError(R"(
name: mine
rules:
  - kind: checkpoint_done
    pattern: 'saved'
  - kind: step
    pattern: 'iter (?P<iter>\d+)'
)");
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(),
              AllOf(HasSubstr("profile test.yaml"), HasSubstr("rule 2 (step)"),
                    HasSubstr("pattern 'iter (?P<iter>\\d+)'"),
                    HasSubstr("unknown capture 'iter'")));
}

TEST(LogProfileTest, BadPatternNamesThePatternAndRe2sReason) {
  absl::Status s = ParseError(R"(
name: mine
rules:
  - kind: step
    pattern: 'step (?P<step>\d+'
)");
  EXPECT_THAT(s.message(), AllOf(HasSubstr("rule 1 (step)"),
                                 HasSubstr("pattern 'step (?P<step>\\d+'"),
                                 HasSubstr("missing )")));
}

TEST(LogProfileTest, Re2RejectsBackreferencesThatCouldHang) {
  absl::Status s = ParseError(R"(
name: mine
rules:
  - kind: end
    pattern: '(a+)\1'
)");
  EXPECT_THAT(s.message(), HasSubstr("rule 1 (end)"));
}

TEST(LogProfileTest, KindNeedsAreChecked) {
  EXPECT_THAT(
      ParseError("name: m\nrules:\n  - kind: step\n    pattern: x\n").message(),
      HasSubstr("a step rule needs a capture 'step' or 'steps'"));
  EXPECT_THAT(ParseError("name: m\nrules:\n  - kind: custom\n    pattern: x\n")
                  .message(),
              HasSubstr("a custom rule needs a 'name'"));
  EXPECT_THAT(
      ParseError("name: m\nrules:\n  - kind: end\n    pattern: '(?P<time>x)'\n")
          .message(),
      HasSubstr("capture 'time' needs the profile's time_format"));
  EXPECT_THAT(ParseError("name: m\nrules:\n  - kind: step\n    pattern: x\n"
                         "    steps_per_line: -3\n")
                  .message(),
              HasSubstr("steps_per_line must be an integer > 0, not '-3'"));
  EXPECT_THAT(ParseError("name: m\nrules:\n  - kind: interruption\n"
                         "    pattern: x\n    reason: EVICTED\n")
                  .message(),
              HasSubstr("unknown reason 'EVICTED'"));
}

TEST(LogProfileTest, StepTimeTokensAndOffsetAreChecked) {
  EXPECT_THAT(ParseError("name: m\nrules:\n  - kind: end\n"
                         "    pattern: '(?P<step_time>\\d+)'\n")
                  .message(),
              HasSubstr("captures 'step_time' and 'tokens' are for step "
                        "rules"));
  EXPECT_THAT(ParseError("name: m\nrules:\n  - kind: step\n"
                         "    pattern: '(?P<step>\\d+) (?P<tokens>\\d+)'\n")
                  .message(),
              HasSubstr("capture 'tokens' needs the profile's "
                        "flops_per_token > 0"));
  EXPECT_THAT(ParseError("name: m\nflops_per_token: -6\nrules:\n"
                         "  - kind: end\n    pattern: x\n")
                  .message(),
              HasSubstr("flops_per_token must be a number > 0, not '-6'"));
  EXPECT_THAT(ParseError("name: m\nrules:\n  - kind: step\n"
                         "    pattern: '(?P<step>\\d+)'\n"
                         "    step_offset: one\n")
                  .message(),
              HasSubstr("step_offset must be an integer, not 'one'"));
  EXPECT_THAT(ParseError("name: m\nrules:\n  - kind: step\n"
                         "    pattern: '(?P<step>\\d+)'\n"
                         "    step_time_unit: min\n")
                  .message(),
              AllOf(HasSubstr("rule 1 (step)"),
                    HasSubstr("step_time_unit must be s or ms, not 'min'")));
}

TEST(LogProfileTest, UnknownKeysAndKindsAreNamed) {
  EXPECT_THAT(ParseError("name: m\nrule: []\n").message(),
              HasSubstr("unknown key 'rule'"));
  EXPECT_THAT(ParseError("name: m\nrules:\n  - kind: stepp\n    pattern: x\n")
                  .message(),
              AllOf(HasSubstr("rule 1"), HasSubstr("unknown kind 'stepp'")));
  EXPECT_THAT(
      ParseError("name: m\nrules:\n  - kind: end\n    patern: x\n").message(),
      HasSubstr("unknown key 'patern'"));
  EXPECT_THAT(ParseError("rules: []\n").message(), HasSubstr("needs a 'name'"));
  EXPECT_THAT(ParseError("name: m\nrules: []\n").message(),
              HasSubstr("needs 'rules', a non-empty list"));
  EXPECT_THAT(
      ParseError("name: m\ntime_zone: Mars/Olympus\nrules: []\n").message(),
      HasSubstr("unknown time_zone 'Mars/Olympus'"));
}

TEST(LogProfileTest, MalformedYamlIsAnErrorNotAnException) {
  absl::Status s = ParseError("name: [unclosed\n");
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("profile test.yaml"));
}

TEST(LogProfileTest, LinePrefixIsPutBeforeEveryPattern) {
  absl::StatusOr<LogProfile> p = ParseLogProfile(R"(
name: m
line_prefix: '^\[(?P<time>[^\]]+)\] '
time_format: '%Y-%m-%d'
rules:
  - kind: step
    pattern: 'step=(?P<step>\d+)'
)",
                                                 "t");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->rules[0].re->pattern(),
            "^\\[(?P<time>[^\\]]+)\\] step=(?P<step>\\d+)");
  EXPECT_EQ(p->rules[0].time_group, 1);
  EXPECT_EQ(p->rules[0].step_group, 2);
}

TEST(LogProfileTest, EveryBuiltinLoads) {
  for (const std::string& name : BuiltinProfileNames()) {
    absl::StatusOr<LogProfile> p = LoadLogProfile(name);
    ASSERT_TRUE(p.ok()) << name << ": " << p.status();
    EXPECT_EQ(p->name, name);
    EXPECT_EQ(p->source, "builtin:" + name);
  }
}

TEST(LogProfileTest, AMissingFileOrNameListsTheBuiltins) {
  absl::StatusOr<LogProfile> p = LoadLogProfile("/nonexistent/x.yaml");
  EXPECT_EQ(p.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(p.status().message(),
              AllOf(HasSubstr("/nonexistent/x.yaml"), HasSubstr("megatron")));
}

}  // namespace
}  // namespace goodput::logs
