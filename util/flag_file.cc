#include "util/flag_file.h"

#include <fstream>
#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"

namespace goodput {
namespace {

constexpr absl::string_view kFlag = "--flagfile";

absl::Status LineError(const std::string& path, int line,
                       absl::string_view message) {
  return absl::InvalidArgumentError(
      absl::StrCat(path, ":", line, ": ", message));
}

// "--name value" -> "--name=value"; other spellings unchanged.
std::string Canonical(absl::string_view text) {
  const size_t eq = text.find('=');
  const size_t space = text.find_first_of(" \t");
  if (space == absl::string_view::npos || eq < space) return std::string(text);
  return absl::StrCat(text.substr(0, space), "=",
                      absl::StripLeadingAsciiWhitespace(text.substr(space)));
}

absl::StatusOr<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    return absl::NotFoundError(absl::StrCat("--flagfile: cannot read ", path));
  }
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The position of --flagfile in `args` and its value, or npos.
absl::StatusOr<size_t> FindFlagFile(const std::vector<std::string>& args,
                                    std::string* path, size_t* width) {
  size_t found = std::string::npos;
  for (size_t i = 0; i < args.size() && args[i] != "--"; ++i) {
    const bool joined = absl::StartsWith(args[i], "--flagfile=");
    if (!joined && args[i] != kFlag) continue;
    if (found != std::string::npos) {
      return absl::InvalidArgumentError("--flagfile: given more than once");
    }
    if (!joined && i + 1 == args.size()) {
      return absl::InvalidArgumentError(
          "--flagfile: needs a value: --flagfile=PATH");
    }
    found = i;
    *width = joined ? 1 : 2;
    *path = joined ? args[i].substr(kFlag.size() + 1) : args[i + 1];
  }
  return found;
}

}  // namespace

absl::StatusOr<std::vector<FlagFileLine>> ParseFlagFile(
    const std::string& path, const std::string& contents) {
  std::vector<FlagFileLine> out;
  int line = 0;
  for (absl::string_view raw : absl::StrSplit(contents, '\n')) {
    ++line;
    absl::string_view text = absl::StripAsciiWhitespace(raw);
    if (text.empty() || text[0] == '#') continue;
    if (!absl::StartsWith(text, "--") || text.size() == 2 || text[2] == '=') {
      return LineError(
          path, line,
          absl::StrCat("want one flag such as --name=value, got \"", text,
                       "\""));
    }
    std::string arg = Canonical(text);
    if (arg == kFlag || absl::StartsWith(arg, "--flagfile=")) {
      return LineError(path, line, "--flagfile cannot be nested");
    }
    out.push_back({line, std::move(arg)});
  }
  return out;
}

absl::StatusOr<std::vector<std::string>> ExpandFlagFile(
    const std::vector<std::string>& args, const FlagLineCheck& check) {
  std::string path;
  size_t width = 0;
  absl::StatusOr<size_t> at = FindFlagFile(args, &path, &width);
  if (!at.ok()) return at.status();
  if (*at == std::string::npos) return args;
  absl::StatusOr<std::string> contents = ReadFile(path);
  if (!contents.ok()) return contents.status();
  auto lines = ParseFlagFile(path, *contents);
  if (!lines.ok()) return lines.status();
  std::vector<std::string> out;
  for (const FlagFileLine& l : *lines) {
    if (absl::Status s = check(l.arg); !s.ok()) {
      return LineError(path, l.line, s.message());
    }
    out.push_back(l.arg);
  }
  out.insert(out.end(), args.begin(), args.begin() + *at);
  out.insert(out.end(), args.begin() + *at + width, args.end());
  return out;
}

}  // namespace goodput
