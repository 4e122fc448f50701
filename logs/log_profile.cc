#include "logs/log_profile.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <exception>
#include <map>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/types/span.h"
#include "yaml-cpp/yaml.h"

namespace goodput::logs {
namespace {

constexpr std::array<std::pair<LogRuleKind, absl::string_view>, 14> kKinds = {{
    {LogRuleKind::kStart, "start"},
    {LogRuleKind::kInit, "init"},
    {LogRuleKind::kPrep, "prep"},
    {LogRuleKind::kCompile, "compile"},
    {LogRuleKind::kDataWait, "data_wait"},
    {LogRuleKind::kCustom, "custom"},
    {LogRuleKind::kTraining, "training"},
    {LogRuleKind::kStep, "step"},
    {LogRuleKind::kCheckpointStart, "checkpoint_start"},
    {LogRuleKind::kCheckpointDone, "checkpoint_done"},
    {LogRuleKind::kRestoreStart, "restore_start"},
    {LogRuleKind::kRestoreDone, "restore_done"},
    {LogRuleKind::kInterruption, "interruption"},
    {LogRuleKind::kEnd, "end"},
}};

constexpr std::array<absl::string_view, 8> kProfileKeys = {
    "name",        "description", "framework",       "line_prefix",
    "time_format", "time_zone",   "flops_per_token", "rules"};
constexpr std::array<absl::string_view, 8> kRuleKeys = {
    "kind",   "pattern", "name",        "steps_per_line",
    "reason", "then",    "step_offset", "step_time_unit"};

// Error text for anything in `context` (e.g. "profile x: rule 2 (step)").
absl::Status Bad(absl::string_view context, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat(context, ": ", what));
}

absl::Status CheckKeys(const YAML::Node& map,
                       absl::Span<const absl::string_view> ok,
                       absl::string_view context) {
  if (!map.IsMap()) return Bad(context, "must be a YAML mapping");
  for (const auto& kv : map) {
    const std::string key = kv.first.as<std::string>();
    if (std::find(ok.begin(), ok.end(), key) == ok.end()) {
      return Bad(context, absl::StrCat("unknown key '", key, "' (known: ",
                                       absl::StrJoin(ok, ", "), ")"));
    }
  }
  return absl::OkStatus();
}

std::string Str(const YAML::Node& map, const char* key) {
  const YAML::Node v = map[key];
  return v && v.IsScalar() ? v.as<std::string>() : std::string();
}

absl::StatusOr<LogRuleKind> ParseKind(const std::string& text,
                                      absl::string_view context) {
  for (const auto& [kind, name] : kKinds) {
    if (text == name) return kind;
  }
  std::vector<std::string> names;
  for (const auto& kv : kKinds) names.emplace_back(kv.second);
  return Bad(context, absl::StrCat("unknown kind '", text, "' (known: ",
                                   absl::StrJoin(names, ", "), ")"));
}

// Maps the pattern's named groups onto the rule; unknown names are errors.
absl::Status BindCaptures(LogRule* rule, absl::string_view context) {
  const std::map<std::string, int*> known = {
      {"step", &rule->step_group},     {"steps", &rule->steps_group},
      {"time", &rule->time_group},     {"flops", &rule->flops_group},
      {"tokens", &rule->tokens_group}, {"step_time", &rule->step_time_group}};
  for (const auto& [name, index] : rule->re->NamedCapturingGroups()) {
    auto it = known.find(name);
    if (it == known.end()) {
      return Bad(context,
                 absl::StrCat("unknown capture '", name,
                              "' (known: step, steps, time, flops, tokens, "
                              "step_time)"));
    }
    *it->second = index;
  }
  rule->groups = rule->re->NumberOfCapturingGroups();
  return absl::OkStatus();
}

// The checks that depend on the kind: what a rule of that kind needs.
absl::Status CheckRuleNeeds(const LogRule& rule, const LogProfile& profile,
                            absl::string_view context) {
  if (rule.kind == LogRuleKind::kStep && rule.step_group == 0 &&
      rule.steps_group == 0 && rule.steps_per_line <= 0) {
    return Bad(context,
               "a step rule needs a capture 'step' or 'steps', or "
               "steps_per_line > 0");
  }
  if (rule.step_group != 0 && rule.steps_group != 0) {
    return Bad(context, "captures 'step' and 'steps' exclude each other");
  }
  if (rule.kind == LogRuleKind::kCustom && rule.name.empty()) {
    return Bad(context, "a custom rule needs a 'name' (e.g. eval)");
  }
  if (rule.time_group != 0 && profile.time_format.empty()) {
    return Bad(context, "capture 'time' needs the profile's time_format");
  }
  if (rule.kind != LogRuleKind::kStep &&
      (rule.step_time_group != 0 || rule.tokens_group != 0)) {
    return Bad(context, "captures 'step_time' and 'tokens' are for step rules");
  }
  if (rule.tokens_group != 0 && profile.flops_per_token <= 0) {
    return Bad(context,
               "capture 'tokens' needs the profile's flops_per_token > 0");
  }
  return absl::OkStatus();
}

absl::Status ParseReason(const std::string& text, LogRule* rule,
                         absl::string_view context) {
  if (text.empty()) return absl::OkStatus();
  v1::Interruption::Reason reason;
  if (!v1::Interruption::Reason_Parse(text, &reason) ||
      reason == v1::Interruption::REASON_UNSPECIFIED) {
    return Bad(context, absl::StrCat("unknown reason '", text,
                                     "' (known: PREEMPTED, FAILED, "
                                     "HOST_FAILURE, MAINTENANCE, OTHER)"));
  }
  rule->reason = reason;
  return absl::OkStatus();
}

// `then: KIND` of start and restore_done rules.
absl::Status ParseThen(const std::string& text, LogRule* rule,
                       absl::string_view context) {
  if (rule->kind == LogRuleKind::kRestoreDone) {
    rule->then = v1::Activity::TRAINING;
  }
  if (text.empty()) return absl::OkStatus();
  if (rule->kind != LogRuleKind::kStart &&
      rule->kind != LogRuleKind::kRestoreDone) {
    return Bad(context, "'then' is for start and restore_done rules only");
  }
  v1::Activity::Kind kind;
  if (!v1::Activity::Kind_Parse(text, &kind) ||
      kind == v1::Activity::KIND_UNSPECIFIED || kind == v1::Activity::CUSTOM) {
    return Bad(context, absl::StrCat("then: unknown activity '", text,
                                     "' (e.g. INIT, PREP, TRAINING)"));
  }
  rule->then = kind;
  return absl::OkStatus();
}

absl::Status ParseSteps(const YAML::Node& node, LogRule* rule,
                        absl::string_view context) {
  const std::string text = Str(node, "steps_per_line");
  if (text.empty()) return absl::OkStatus();
  if (!absl::SimpleAtoi(text, &rule->steps_per_line) ||
      rule->steps_per_line <= 0) {
    return Bad(context, absl::StrCat("steps_per_line must be an integer > 0, "
                                     "not '",
                                     text, "'"));
  }
  return absl::OkStatus();
}

// `step_offset: N` (an integer) and `step_time_unit: s|ms`.
absl::Status ParseStepOptions(const YAML::Node& node, LogRule* rule,
                              absl::string_view context) {
  const std::string offset = Str(node, "step_offset");
  if (!offset.empty() && !absl::SimpleAtoi(offset, &rule->step_offset)) {
    return Bad(context, absl::StrCat("step_offset must be an integer, not '",
                                     offset, "'"));
  }
  const std::string unit = Str(node, "step_time_unit");
  if (unit.empty() || unit == "s") return absl::OkStatus();
  if (unit == "ms") {
    rule->step_time_scale = 1e-3;
    return absl::OkStatus();
  }
  return Bad(context,
             absl::StrCat("step_time_unit must be s or ms, not '", unit, "'"));
}

absl::StatusOr<LogRule> ParseRule(const YAML::Node& node, size_t index,
                                  const LogProfile& profile) {
  std::string context =
      absl::StrCat("profile ", profile.source, ": rule ", index + 1);
  if (absl::Status s = CheckKeys(node, kRuleKeys, context); !s.ok()) return s;
  LogRule rule;
  absl::StatusOr<LogRuleKind> kind = ParseKind(Str(node, "kind"), context);
  if (!kind.ok()) return kind.status();
  rule.kind = *kind;
  absl::StrAppend(&context, " (", LogRuleKindName(rule.kind), ")");
  rule.pattern = Str(node, "pattern");
  rule.name = Str(node, "name");
  if (rule.pattern.empty()) return Bad(context, "needs a 'pattern'");
  absl::StrAppend(&context, ": pattern '", rule.pattern, "'");
  rule.re = std::make_unique<RE2>(
      absl::StrCat(profile.line_prefix, rule.pattern), RE2::Quiet);
  if (!rule.re->ok()) return Bad(context, rule.re->error());
  absl::Status s = ParseSteps(node, &rule, context);
  if (s.ok()) s = ParseStepOptions(node, &rule, context);
  if (s.ok()) s = ParseReason(Str(node, "reason"), &rule, context);
  if (s.ok()) s = ParseThen(Str(node, "then"), &rule, context);
  if (s.ok()) s = BindCaptures(&rule, context);
  if (s.ok()) s = CheckRuleNeeds(rule, profile, context);
  if (!s.ok()) return s;
  return rule;
}

absl::Status ParseHeader(const YAML::Node& root, LogProfile* profile) {
  const std::string context = absl::StrCat("profile ", profile->source);
  if (absl::Status s = CheckKeys(root, kProfileKeys, context); !s.ok()) {
    return s;
  }
  profile->name = Str(root, "name");
  if (profile->name.empty()) return Bad(context, "needs a 'name'");
  profile->description = Str(root, "description");
  profile->framework = Str(root, "framework");
  profile->line_prefix = Str(root, "line_prefix");
  profile->time_format = Str(root, "time_format");
  profile->time_format_has_year =
      absl::StrContains(profile->time_format, "%Y") ||
      absl::StrContains(profile->time_format, "%E4Y") ||
      absl::StrContains(profile->time_format, "%s");
  const std::string per_token = Str(root, "flops_per_token");
  if (!per_token.empty() &&
      (!absl::SimpleAtod(per_token, &profile->flops_per_token) ||
       !(profile->flops_per_token > 0) ||
       !std::isfinite(profile->flops_per_token))) {
    return Bad(context, absl::StrCat("flops_per_token must be a number > 0, "
                                     "not '",
                                     per_token, "'"));
  }
  const std::string zone = Str(root, "time_zone");
  if (!zone.empty() && !absl::LoadTimeZone(zone, &profile->time_zone)) {
    return Bad(context, absl::StrCat("unknown time_zone '", zone, "'"));
  }
  return absl::OkStatus();
}

absl::Status ParseRules(const YAML::Node& root, LogProfile* profile) {
  const YAML::Node rules = root["rules"];
  if (!rules || !rules.IsSequence() || rules.size() == 0) {
    return Bad(absl::StrCat("profile ", profile->source),
               "needs 'rules', a non-empty list");
  }
  RE2::Options options;
  options.set_log_errors(false);
  profile->any = std::make_unique<RE2::Set>(options, RE2::UNANCHORED);
  for (size_t i = 0; i < rules.size(); ++i) {
    absl::StatusOr<LogRule> rule = ParseRule(rules[i], i, *profile);
    if (!rule.ok()) return rule.status();
    std::string error;
    if (profile->any->Add(rule->re->pattern(), &error) != static_cast<int>(i)) {
      return Bad(absl::StrCat("profile ", profile->source, ": rule ", i + 1),
                 error);
    }
    profile->rules.push_back(*std::move(rule));
  }
  if (!profile->any->Compile()) {
    return Bad(absl::StrCat("profile ", profile->source),
               "the patterns together exceed RE2's memory budget");
  }
  return absl::OkStatus();
}

}  // namespace

absl::string_view LogRuleKindName(LogRuleKind kind) {
  for (const auto& [k, name] : kKinds) {
    if (k == kind) return name;
  }
  return "?";
}

absl::StatusOr<LogProfile> ParseLogProfile(absl::string_view yaml,
                                           absl::string_view source) {
  LogProfile profile;
  profile.source = std::string(source);
  YAML::Node root;
  try {
    root = YAML::Load(std::string(yaml));
  } catch (const YAML::Exception& e) {
    return Bad(absl::StrCat("profile ", source), e.what());
  }
  try {
    absl::Status s = ParseHeader(root, &profile);
    if (s.ok()) s = ParseRules(root, &profile);
    if (!s.ok()) return s;
  } catch (const YAML::Exception& e) {  // e.g. a list where text belongs
    return Bad(absl::StrCat("profile ", source), e.what());
  }
  return profile;
}

}  // namespace goodput::logs
