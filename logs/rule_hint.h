// RuleHint: the longest run of literal text in an RE2 pattern, e.g.
// "saving checkpoint at iteration" in
// 'saving checkpoint at iteration\s+(?P<step>\d+)'. `goodputctl logs
// --explain` calls a line that holds a rule's hint but that the rule does
// not take a near miss. A pure function, safe from any thread.
#ifndef GOODPUT_LOGS_RULE_HINT_H_
#define GOODPUT_LOGS_RULE_HINT_H_

#include <string>

#include "absl/strings/string_view.h"

namespace goodput::logs {

// The hint of `pattern`, or "" when its longest literal run is shorter
// than 4 characters (too common to say anything).
std::string RuleHint(absl::string_view pattern);

}  // namespace goodput::logs

#endif  // GOODPUT_LOGS_RULE_HINT_H_
