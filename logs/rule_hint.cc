#include "logs/rule_hint.h"

#include <cctype>

#include "absl/strings/ascii.h"
#include "absl/strings/string_view.h"

namespace goodput::logs {
namespace {

constexpr size_t kMinHint = 4;
constexpr absl::string_view kSpecial = "()[]{}.*+?|^$";

// Skips a character class "[...]" starting at pattern[i]; returns the
// index after its ']'.
size_t SkipClass(absl::string_view pattern, size_t i) {
  size_t j = i + 1;
  if (j < pattern.size() && pattern[j] == '^') ++j;
  if (j < pattern.size() && pattern[j] == ']') ++j;
  while (j < pattern.size() && pattern[j] != ']')
    j += pattern[j] == '\\' ? 2 : 1;
  return j + 1;
}

// Keeps the longer of `run` (trimmed) and `*best`; clears `run`.
void Close(std::string* run, std::string* best) {
  absl::string_view text = absl::StripAsciiWhitespace(*run);
  if (text.size() > best->size()) *best = std::string(text);
  run->clear();
}

}  // namespace

std::string RuleHint(absl::string_view pattern) {
  std::string best, run;
  size_t i = 0;
  while (i < pattern.size()) {
    const char c = pattern[i];
    if (c == '\\' && i + 1 < pattern.size()) {
      const char next = pattern[i + 1];
      if (std::isalnum(static_cast<unsigned char>(next))) {
        Close(&run, &best);  // \d, \s, \x1b, ...
      } else {
        run.push_back(next);  // an escaped literal: \[ \. \|
      }
      i += next == 'x' ? 4 : 2;
    } else if (c == '[') {
      Close(&run, &best);
      i = SkipClass(pattern, i);
    } else if (c == '?' || c == '*' || c == '{') {
      if (!run.empty()) run.pop_back();  // the previous char is optional
      Close(&run, &best);
      i = c == '{' ? pattern.find('}', i) + 1 : i + 1;
      if (i == 0) break;  // no closing '}'
    } else if (kSpecial.find(c) != absl::string_view::npos) {
      Close(&run, &best);
      i += (c == '(' && pattern.substr(i, 4) == "(?P<")
               ? pattern.find('>', i) - i + 1
               : 1;
    } else {
      run.push_back(c);
      ++i;
    }
  }
  Close(&run, &best);
  return best.size() >= kMinHint ? best : std::string();
}

}  // namespace goodput::logs
